"""``x is True``, ``x is not False``: an identity test against a literal
(not None) asks what ``x`` is, not only its structure: True, False, a small
int and a string literal are one object per value, so whether a rank's value
is that object follows the value (soundness: ``first = rank == 0; if first
is True: all_reduce(t)`` was silent, the test read as the flag's structure
alone).  Identity against None still reads None-ness alone, and an identity
test of two computed values still reads their structure: a tensor made with
this rank's numbers is its own object whatever the numbers."""

from __future__ import annotations

import textwrap

from cslint.api import check_paths

SOURCE = """
    import torch.distributed as dist


    def flag_is_true(t):
        first = dist.get_rank() == 0
        if first is True:
            dist.all_reduce(t)  # INVALID: the flag's value is this rank's


    def flag_is_not_false(t):
        first = dist.get_rank() == 0
        if first is not False:
            dist.all_reduce(t)  # INVALID: negated


    def literal_on_the_left(t):
        first = dist.get_rank() == 0
        if True is first:
            dist.all_reduce(t)  # INVALID: the literal first


    def chained(t, ready):
        first = dist.get_rank() == 0
        if ready is first is True:
            dist.all_reduce(t)  # INVALID: one link of a chain


    def uniform_flag(t, enabled: bool):
        if enabled is True:
            dist.all_reduce(t)  # VALID: the flag is the caller's


    def rank_tensor_present(t):
        mine = t + dist.get_rank()
        if mine is None:
            return
        dist.all_reduce(t)  # VALID: None-ness of a tensor holding this rank's numbers


    def rank_tensor_identity(t, cached):
        mine = t + dist.get_rank()
        if mine is cached:
            dist.all_reduce(t)  # VALID: a new tensor is its own object whatever it holds
"""


def _marked(source: str, word: str) -> list:
    return sorted(i for i, line in enumerate(source.splitlines(), 1) if f"# {word}:" in line)


def test_an_identity_test_against_a_literal_reads_the_value(tmp_path):
    source = textwrap.dedent(SOURCE)
    (tmp_path / "flags.py").write_text(source)
    findings = check_paths([str(tmp_path)], cache=False, jobs=1, report="per-site").findings
    flagged = sorted({f.line for f in findings if f.code in ("CSL101", "CSL102")})
    assert _marked(source, "VALID")
    assert flagged == _marked(source, "INVALID")
