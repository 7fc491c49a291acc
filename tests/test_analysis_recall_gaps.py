"""False negatives reviewers found (sessions 52-53) that the analysis does
not model yet, pinned as strict xfails beside the shapes next to them that
are read right (reported, or quiet where every rank does the same).

1. A method of a receiver whose class a rank chose.  ``W = Leader if rank ==
   0 else Follower; w = W(g); w.run(t)`` (or ``w = Leader(g) if rank == 0
   else Follower(g)``), where only ``Leader.run`` broadcasts: which ``run``
   a rank runs follows the test that chose the class, but a call site's
   conditions are its function's tests alone, and the call resolves to both
   methods at once.  The class's own reads (``w.lead``, ``isinstance(w,
   Leader)``) are reported (47ad6c9).  Modelling it: the receiver's kind
   (``project(KIND, receiver)``) as a condition of the call whose arms are
   the candidates' methods, compared by the collectives each reaches
   (quiet where both broadcast alike).

2. A module global a function sets from the rank (``global _RANK;
   _RANK = dist.get_rank()`` in ``init()``), read back by another
   (``return _RANK``) or tested directly: a module's globals are what its
   top level leaves them holding (``facts._final_globals``); a function's
   ``global`` stores are recorded by line only (``FuncFacts.global_stores``,
   for memo fills).  Reading them needs the stored values as facts, and for
   another module no round parsed, its writer summarised too
   (reviewB52 c9/c8).

3. A device made of this rank's own index, compared whole or as text
   (``torch.device(f"cuda:{rank}") == torch.device("cuda:0")``, ``str(dev)
   == "cuda:0"``): the index is held (evaluator._device_parts), read back
   only by ``.index``; its ``.type`` is alike on every rank."""

import textwrap

import pytest

from package_findings import package_findings, write_package

from cslint.api import check_source

_CLASSES = """
    import torch.distributed as dist


    class Leader:
        def __init__(self, group):
            self.group = group

        def run(self, t):
            dist.broadcast(t, 0, group=self.group)


    class Follower:
        def __init__(self, group):
            self.group = group

        def run(self, t):
            {follower_runs}
"""


def _codes(source: str) -> list:
    return sorted((f.code, f.line) for f in check_source(textwrap.dedent(source), report="per-site").findings)


@pytest.mark.xfail(strict=True, reason="a method of a receiver whose class a rank chose: the call's conditions are "
                                       "its function's tests alone (module docstring, 1)")
@pytest.mark.parametrize("choose", ["W = Leader if dist.get_rank() == 0 else Follower\n        w = W(g)",
                                    "w = Leader(g) if dist.get_rank() == 0 else Follower(g)"])
def test_a_method_of_a_class_a_rank_chose_follows_the_choice(choose):
    source = _CLASSES.format(follower_runs="pass") + f"""

    def main(t, g):
        {choose}
        w.run(t)
"""
    assert _codes(source) != []


@pytest.mark.parametrize("choose", ["W = Leader if dist.get_rank() == 0 else Follower\n        w = W(g)",
                                    "w = Leader(g) if dist.get_rank() == 0 else Follower(g)"])
def test_the_class_a_rank_chose_is_read_where_its_own_fields_decide(choose):
    # the class's own reads are reported (47ad6c9); both methods broadcasting alike stays quiet
    source = _CLASSES.format(follower_runs="dist.broadcast(t, 0, group=self.group)") + f"""

    def main(t, g):
        {choose}
        w.run(t)
        if isinstance(w, Leader):
            dist.barrier()
"""
    lines = textwrap.dedent(source).splitlines()
    assert _codes(source) == [("CSL101", lines.index("        dist.barrier()") + 1)]


_GLOBAL_IDS = """
    import torch.distributed as dist

    _RANK = None


    def init():
        global _RANK
        _RANK = dist.get_rank()


    def my_rank():
        return _RANK
"""

_GLOBAL_CALLER = """
    import torch.distributed as dist
    from . import ids


    def run():
        if ids.my_rank() > 0:
            dist.barrier()
"""


_GLOBAL_REASON = "a module global a function sets under `global`: the module's globals are what its top level " \
                 "leaves them holding (module docstring, 2)"


@pytest.mark.xfail(strict=True, reason=_GLOBAL_REASON)
def test_a_global_another_module_sets_from_the_rank_is_read(tmp_path):
    write_package(tmp_path, "pkg", {"ids.py": _GLOBAL_IDS, "caller.py": _GLOBAL_CALLER})
    assert [f.code for f in package_findings(tmp_path)] == ["CSL101"]


@pytest.mark.xfail(strict=True, reason=_GLOBAL_REASON)
@pytest.mark.parametrize("test", ["my_rank() > 0", "_RANK > 0"])
def test_a_global_the_module_itself_sets_from_the_rank_is_read(test):
    assert [code for code, _line in _codes(_GLOBAL_IDS + f"""

    def run():
        if {test}:
            dist.barrier()
""")] == ["CSL101"]


def test_a_global_set_from_the_rank_at_the_top_level_is_read():
    # a value the module's top level leaves in it is read
    assert [code for code, _line in _codes("""
    import torch.distributed as dist

    _RANK = dist.get_rank()


    def run():
        if _RANK > 0:
            dist.barrier()
""")] == ["CSL101"]


_OWN_DEVICE = """
    import torch
    import torch.distributed as dist


    def step(x):
        dev = torch.device(f"cuda:{{dist.get_rank()}}")
        if {test}:
            dist.all_reduce(x)
"""


@pytest.mark.xfail(strict=True, reason="a device of this rank's own index compared whole or as text: the index is "
                                       "held, read back only by .index (module docstring, 3)")
@pytest.mark.parametrize("test", ['dev == torch.device("cuda:0")', 'str(dev) == "cuda:0"'])
def test_a_device_of_the_own_index_compared_whole_differs(test):
    assert [code for code, _line in _codes(_OWN_DEVICE.format(test=test))] == ["CSL101"]


@pytest.mark.parametrize("test, reported", [("dev.index == 0", True), ('dev.type == "cuda"', False)])
def test_a_device_of_the_own_index_differs_in_its_index_alone(test, reported):
    assert bool(_codes(_OWN_DEVICE.format(test=test))) is reported
