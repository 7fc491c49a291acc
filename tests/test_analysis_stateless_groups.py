"""vLLM's ``StatelessProcessGroup`` (a group over a TCP store) agrees values
too (issue 14, values made uniform by collectives the presets did not know).

``pg.broadcast_obj(obj, src)`` hands every member the source's object and
``pg.all_gather_obj(obj)`` every member the same list, so a test of what
they return agrees over the group; a member that skips either leaves the
others waiting in the store, so each is a collective over the group its
receiver names, as ``pg.barrier()`` is.  What is not broadcast still
differs, and a broadcast only the source makes is still reported."""

import textwrap

from cslint.api import check_paths

SOURCE = """
    import os

    from vllm.distributed.utils import StatelessProcessGroup


    def shared_names(pg: StatelessProcessGroup, path):
        if pg.rank == 0:
            names = os.listdir(path)
        else:
            names = None
        names = pg.broadcast_obj(names, src=0)
        if not names:
            return
        pg.barrier()        # VALID: the source's list, on every member


    def everyone_has(pg: StatelessProcessGroup, path):
        flags = pg.all_gather_obj(os.path.exists(path))
        if not all(flags):
            return
        pg.barrier()        # VALID: the same gathered flags everywhere


    def own_names(pg: StatelessProcessGroup, path):
        names = os.listdir(path)
        pg.broadcast_obj(names, src=0)
        if not names:
            return
        pg.barrier()        # INVALID: this rank's own listing, not the broadcast


    def announce(pg: StatelessProcessGroup, path):
        if os.path.exists(path):
            pg.broadcast_obj(path, src=0)        # INVALID: only where the file is there
"""


def _marked(source, word):
    return sorted(i for i, line in enumerate(source.splitlines(), 1) if f"# {word}:" in line)


def test_a_stateless_groups_broadcast_and_gather_agree(tmp_path):
    source = textwrap.dedent(SOURCE)
    (tmp_path / "sync.py").write_text(source)
    findings = check_paths([str(tmp_path)], cache=False, jobs=1, report="per-site").findings
    assert sorted({f.line for f in findings}) == _marked(source, "INVALID"), \
        [(f.line, f.message) for f in findings]
    assert _marked(source, "VALID")
