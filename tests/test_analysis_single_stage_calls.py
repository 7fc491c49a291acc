"""A method called only on the single-stage side of a stage-count test runs
where the pipeline has one stage (issue 14): an event-loop dispatcher that
picks ``scheduler.loop_stages()`` where the pipeline group has several
ranks and ``scheduler.loop_single()`` otherwise runs ``loop_single`` where
nothing differs along ``pp``, so a stage test reaching its collective's
guard decides nothing there (``FuncFacts.single_rank_calls``,
``processes.called_methods``).  The several-stage loop keeps its finding, and
a method some other function also calls, or reads as a value, runs wherever
that caller runs."""

import textwrap

from cslint.api import check_paths

_PARALLEL = """
    class _Parallel:
        pp_size = 1
        pp_rank = 0


    _STATE = _Parallel()


    def get_parallel():
        return _STATE
"""

_LOOPS = """
    import torch.distributed as dist

    from .parallel import get_parallel


    class Scheduler:
        def __init__(self):
            self.queue = []
            self.flags = None

        def intake(self):
            if get_parallel().pp_rank == 0:
                self.queue.append(object())
            return self.queue

        def loop_single(self):
            while True:
                batch = self.intake()
                if batch:
                    dist.all_reduce(self.flags)

        def loop_stages(self):
            while True:
                batch = self.intake()
                if batch:
                    dist.all_reduce(self.flags)


    def dispatch(scheduler):
        if get_parallel().pp_size > 1:
            scheduler.loop_stages()
        else:
            scheduler.loop_single()
"""


def _lines(tmp_path, loops: str) -> list:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "parallel.py").write_text(textwrap.dedent(_PARALLEL))
    (package / "loops.py").write_text(textwrap.dedent(loops))
    return sorted(f.line for f in check_paths([str(package)], report="per-site").findings
                  if f.path.endswith("loops.py"))


def test_a_loop_called_only_where_the_pipeline_has_one_stage_sees_no_stage_difference(tmp_path):
    assert _lines(tmp_path, _LOOPS) == [27]


def test_a_loop_also_called_elsewhere_keeps_its_finding(tmp_path):
    loops = _LOOPS + """

    def warm_up(scheduler):
        scheduler.loop_single()
"""
    assert _lines(tmp_path, loops) == [21, 27]


def test_a_loop_also_read_as_a_value_keeps_its_finding(tmp_path):
    loops = _LOOPS.replace("            scheduler.loop_single()",
                           "            scheduler.loop_single()\n            hook = scheduler.loop_single")
    assert _lines(tmp_path, loops) == [21, 27]


def test_the_side_the_test_gives_decides_which_loop_sees_one_stage(tmp_path):
    loops = _LOOPS.replace("if get_parallel().pp_size > 1:", "if get_parallel().pp_size == 1:")
    assert _lines(tmp_path, loops) == [21]


def test_a_loop_called_in_a_match_case_on_the_single_stage_side_sees_no_stage_difference(tmp_path):
    # the dispatcher picks the loop inside a ``match`` arm: the case's body is walked like any block
    loops = _LOOPS.replace('''    def dispatch(scheduler):
        if get_parallel().pp_size > 1:
            scheduler.loop_stages()
        else:
            scheduler.loop_single()''', '''    def dispatch(scheduler, mode):
        match mode:
            case "serve":
                if get_parallel().pp_size > 1:
                    scheduler.loop_stages()
                else:
                    scheduler.loop_single()
            case _:
                pass''')
    assert "match mode:" in loops
    assert _lines(tmp_path, loops) == [27]


# A method run without a call naming it (processes._named_only_there, _reached_families; review of f7fd924):
# read as a value elsewhere, handed to a thread, fetched by getattr, run by a library's protocol, or another
# class's method of that name that the single-stage call does not reach: each runs on every stage, and the
# stage test in it keeps its finding.

def test_a_loop_handed_on_as_a_value_in_another_function_keeps_its_finding(tmp_path):
    loops = _LOOPS + """

    def warm_up(scheduler):
        run = scheduler.loop_single
        run()
"""
    assert _lines(tmp_path, loops) == [21, 27]


def test_a_loop_handed_to_a_thread_in_another_function_keeps_its_finding(tmp_path):
    loops = _LOOPS + """

    def serve(scheduler):
        import threading
        threading.Thread(target=scheduler.loop_single).start()
"""
    assert _lines(tmp_path, loops) == [21, 27]


def test_a_loop_fetched_by_getattr_keeps_its_finding(tmp_path):
    loops = _LOOPS + """

    def serve(scheduler):
        getattr(scheduler, "loop_single")()
"""
    assert _lines(tmp_path, loops) == [21, 27]


def test_a_forward_run_by_the_module_call_keeps_its_finding(tmp_path):
    # ``self.inner.forward(x)`` only where tp has one rank, but ``Reducer(...)(x)`` runs forward on every rank
    loops = """
    import torch.distributed as dist
    from torch import nn


    class Reducer(nn.Module):
        def __init__(self, tp_rank, tp_group):
            super().__init__()
            self.tp_rank = tp_rank
            self.tp_group = tp_group

        def forward(self, x):
            if self.tp_rank % 2:
                dist.all_reduce(x, group=self.tp_group)
            return x


    class Direct:
        def __init__(self, inner: Reducer, tp_size):
            self.inner = inner
            self.tp_size = tp_size

        def run(self, x):
            if self.tp_size == 1:
                return self.inner.forward(x)
            return x


    def step(tp_rank, x, tp_group):
        return Reducer(tp_rank, tp_group)(x)
"""
    assert _lines(tmp_path, loops) == [14]


def test_another_class_s_loop_of_that_name_the_call_does_not_reach_keeps_its_finding(tmp_path):
    # the dispatcher's call reaches Scheduler.loop_single alone; Replica's, run by a name it computes, is
    # run on every stage
    loops = _LOOPS.replace("def dispatch(scheduler):", "def dispatch(scheduler: Scheduler):") + """

    class Replica:
        def __init__(self):
            self.flags = None

        def loop_single(self):
            if get_parallel().pp_rank == 0:
                dist.all_reduce(self.flags)


    def serve(replica, mode):
        getattr(replica, "loop_" + mode)()
"""
    assert _lines(tmp_path, loops) == [27, 43]
