"""Introspecting a class or a signature fails alike on every rank
(issue 14 §2.2).

``dataclasses.fields(x)`` raises ``TypeError`` only for an object that is no
dataclass, ``inspect.signature(fn)`` only for an object with no signature:
what decides it is the operand's type, never a file, a device or a peer
(``vocabulary.INTROSPECTION_CALLS``, read by
``raises.computes_from_operands``).  A handler around such a call sends no
rank past a collective alone; reading a function's source
(``inspect.getsource``) reads a file and still may."""

import textwrap

from cslint.api import check_source

SOURCE = """
    import dataclasses
    import inspect

    import torch.distributed as dist


    def field_names(params, t):
        try:
            fields = dataclasses.fields(params)
        except Exception:
            return None
        dist.all_reduce(t)  # VALID: fails by the operand's type alone
        return [f.name for f in fields]


    def takes_scale(fn, t):
        try:
            found = "scale" in inspect.signature(fn).parameters
        except Exception:
            return None
        dist.all_reduce(t)  # VALID: a signature is the function's own
        return found


    def mentions_scale(fn, t):
        try:
            found = "scale" in inspect.getsource(fn)
        except Exception:
            return None
        dist.all_reduce(t)  # INVALID: reading the source reads a file
        return found
"""


def _marked(source, word):
    return sorted(i for i, line in enumerate(source.splitlines(), 1) if f"# {word}:" in line)


def test_only_the_file_read_is_reported():
    source = textwrap.dedent(SOURCE)
    flagged = sorted((f.line, f.code) for f in check_source(source, report="per-site").findings)
    assert flagged == [(line, "CSL104") for line in _marked(source, "INVALID")]
    assert _marked(source, "VALID")
