"""A module global a function of the module stores into under ``global``
(``global flag; flag = dist.get_rank() == 0`` in ``setup()``), read by
another function's test before a collective: every function of the module
reads that one global, so what any of them stores there is what the
readers may find.  Not modelled yet: the module's globals are what its top
level leaves them holding (``facts._final_globals``), so every shape read
here is a strict xfail, beside shapes every rank stores alike that must stay
quiet (a constant on every rank, the world size, an all-reduced flag, a
value a context manager puts back past its ``yield``, a local of the same
name elsewhere) and a first-use memo filled with a group the ranks make
together, reported at the call only some ranks make.

A step that reads the stores (session 56, /work/brief/sound56_globals.diff:
``records.GlobalWrite``, ``Program._write_globals`` with the callers'
conditions outside what the store's own collectives agree and outside a
context manager's save-and-restore) made every xfail here pass, but brought
18 findings on the real trees, nearly all FP: memos filled at a first call
every rank makes, flags the code syncs right after the store (a join of
every store of a global reads no overwrite by an agreed value), writers'
calling conditions along dimensions the reading group agrees on."""

import textwrap

import pytest

from cslint.api import check_source

_NOT_READ = "a module global a function stores under `global` is read as the module's top level leaves it " \
            "(module docstring)"


def _source(*parts: str) -> str:
    return "import torch\nimport torch.distributed as dist\n" + "".join(textwrap.dedent(part) for part in parts)


def _findings(*parts: str) -> list:
    return sorted((f.code, f.line) for f in check_source(_source(*parts), report="per-site").findings)


def _collective_line(*parts: str) -> int:
    return next(i for i, line in enumerate(_source(*parts).splitlines(), 1) if "dist.all_reduce(x)" in line)


_STEP = """

    def step(x):
        if {test}:
            dist.all_reduce(x)
"""

RANK_STORED = {
    "assigned_the_rank_test": ("flag", """
        flag = False

        def setup():
            global flag
            flag = dist.get_rank() == 0
    """),
    "size_from_the_rank": ("world_size > 1", """
        world_size = 1

        def setup():
            global world_size
            world_size = dist.get_rank() + 1
    """),
    "copied_from_another_written_global": ("tp_size > 1", """
        tp_size = 1
        world_size = 1

        def setup():
            global tp_size, world_size
            world_size = dist.get_rank() + 1
            tp_size = world_size
    """),
    "constant_under_a_rank_test": ("flag", """
        flag = False

        def setup():
            global flag
            if dist.get_rank() == 0:
                flag = True
    """),
    "through_a_parameter": ("flag", """
        flag = False

        def setup(rank):
            global flag
            flag = rank == 0

        def main():
            setup(dist.get_rank())
    """),
    "through_a_keyword": ("flag", """
        flag = False

        def setup(*, first):
            global flag
            flag = first

        def main():
            setup(first=dist.get_rank() == 0)
    """),
    "setter_called_on_some_ranks": ("flag", """
        flag = False

        def setup():
            global flag
            flag = True

        def main(x):
            if dist.get_rank() == 0:
                setup()
    """),
    "through_a_helper": ("flag", """
        flag = False

        def _pick():
            return dist.get_rank() % 2 == 0

        def setup():
            global flag
            flag = _pick()
    """),
    "counted_in_a_loop": ("count", """
        count = 0

        def setup(items):
            global count
            for item in items:
                if item == dist.get_rank():
                    count += 1
    """),
    "unpacked_with_another": ("flag", """
        flag = False
        other = 0

        def setup():
            global flag, other
            flag, other = dist.get_rank() == 0, 1
    """),
    "in_a_constructor": ("leader", """
        leader = False

        class Engine:
            def __init__(self, rank):
                global leader
                leader = rank == 0

        def build():
            return Engine(dist.get_rank())
    """),
    "set_by_a_context_manager_that_keeps_it": ("_SP is not None", """
        from contextlib import contextmanager

        _SP = None

        @contextmanager
        def use_group(g):
            global _SP
            _SP = g
            yield

        def main(g):
            if dist.get_rank() == 0:
                with use_group(g):
                    pass
    """),
    "annotated": ("flag", """
        flag = False

        def setup():
            global flag
            flag: bool = dist.get_rank() == 0
    """),
}


@pytest.mark.xfail(strict=True, reason=_NOT_READ)
@pytest.mark.parametrize("name", sorted(RANK_STORED))
def test_a_global_a_function_stores_from_the_rank_is_read_by_another(name):
    test, setter = RANK_STORED[name]
    step = _STEP.format(test=test)
    assert _findings(setter, step) == [("CSL101", _collective_line(setter, step))]


@pytest.mark.xfail(strict=True, reason=_NOT_READ)
def test_a_global_read_back_through_a_getter_is_read():
    setter = """
        flag = False

        def setup():
            global flag
            flag = dist.get_rank() == 0

        def is_on():
            return flag
    """
    step = _STEP.format(test="is_on()")
    assert _findings(setter, step) == [("CSL101", _collective_line(setter, step))]


@pytest.mark.xfail(strict=True, reason=_NOT_READ)
def test_a_method_reads_a_global_a_module_function_stores():
    body = """
        leader = False

        def setup():
            global leader
            leader = dist.get_rank() == 0

        class Engine:
            def step(self, x):
                if leader:
                    dist.all_reduce(x)
    """
    assert _findings(body) == [("CSL101", _collective_line(body))]


ALIKE_STORED = {
    "constant_on_every_rank": ("flag", """
        flag = False

        def setup():
            global flag
            flag = True

        def main(x):
            setup()
    """),
    "the_world_size": ("flag", """
        flag = False

        def setup():
            global flag
            flag = dist.get_world_size() > 1
    """),
    "an_all_reduced_flag": ("flag", """
        flag = False

        def setup():
            global flag
            t = torch.tensor([dist.get_rank()])
            dist.all_reduce(t, op=dist.ReduceOp.MAX)
            flag = t.item() > 0
    """),
    # what a context manager puts back past its ``yield`` holds only inside the caller's ``with``
    "put_back_past_a_context_managers_yield": ("_SP is not None", """
        from contextlib import contextmanager

        _SP = None

        @contextmanager
        def use_group(g):
            global _SP
            old = _SP
            _SP = g
            try:
                yield
            finally:
                _SP = old

        def main(g):
            if dist.get_rank() == 0:
                with use_group(g):
                    pass
    """),
    "a_local_of_the_same_name_elsewhere": ("flag", """
        flag = False

        def setup():
            global flag
            flag = True

        def other():
            flag = dist.get_rank() == 0
            return flag
    """),
}


@pytest.mark.parametrize("name", sorted(ALIKE_STORED))
def test_a_global_every_rank_stores_alike_stays_quiet(name):
    test, setter = ALIKE_STORED[name]
    assert _findings(setter, _STEP.format(test=test)) == []


def test_a_group_a_store_makes_collectively_is_reported_where_some_ranks_make_it():
    # the first use fills the memo with a group the ranks make together: a rank that did not call it skipped
    # the collective too, reported at the call; the readers of the memo read no other divergence
    setter = """
        _WORLD = None

        def world():
            global _WORLD
            if _WORLD is None:
                _WORLD = dist.new_group(ranks=list(range(dist.get_world_size())))
            return _WORLD

        def main():
            if dist.get_rank() == 0:
                world()
    """
    step = _STEP.format(test="_WORLD is not None")
    call = next(i for i, line in enumerate(_source(setter, step).splitlines(), 1) if line.strip() == "world()")
    assert _findings(setter, step) == [("CSL101", call)]


@pytest.mark.xfail(strict=True, reason="a global no statement of the module's top level binds is no module global "
                                       "to the evaluator (scope.module_level_names)")
def test_a_global_only_functions_bind_is_read():
    setter = """
        def setup():
            global _leader
            _leader = dist.get_rank() == 0
    """
    step = _STEP.format(test="_leader")
    assert _findings(setter, step) == [("CSL101", _collective_line(setter, step))]
