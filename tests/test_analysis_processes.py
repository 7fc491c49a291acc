"""Methods a class binds on opposite sides of one size test never run in one
process (issue 14): what the several-rank one writes out never reaches the
single-rank one (analysis/processes.py)."""

import textwrap

from cslint.analysis.atoms import source
from cslint.analysis.divergence import MAX_SOURCES, merge, several_ranks_only
from cslint.analysis.processes import apart_from, marked
from cslint.api import check_source

LOOPS = """
    import torch
    import torch.distributed as dist


    class Engine:
        def __init__(self, comm):
            self.comm = comm
            self.requests = []
            self.paused = []
            if self.comm.pp_size > 1:
                self.event_loop = self._loop_stages
            else:
                self.event_loop = self._loop_single

        def _take_paused(self):
            self.paused = [r for r in self.requests if r.paused]

        def _loop_stages(self):
            while True:
                if dist.get_rank() == 0:
                    self._take_paused()
                if self.paused:
                    dist.all_reduce(torch.zeros(1))  # reported CSL101: only the leader took the paused ones

        def _loop_single(self):
            while True:
                self._take_paused()
                if self.paused:
                    dist.all_reduce(torch.zeros(1))

        def drain(self):
            if self.paused:
                dist.all_reduce(torch.zeros(1))  # reported CSL101: may run where the stages loop ran
"""

# the same, where a method any process may run also takes the paused ones on the leader alone
ALSO_ELSEWHERE = LOOPS.replace("""        def drain(self):
            if self.paused:
                dist.all_reduce(torch.zeros(1))  # reported CSL101: may run where the stages loop ran
""", """        def refresh(self):
            if dist.get_rank() == 0:
                self._take_paused()
            dist.barrier()
""").replace("dist.all_reduce(torch.zeros(1))\n\n        def refresh",
             "dist.all_reduce(torch.zeros(1))  # reported CSL101: refresh runs in any process\n\n        def refresh")


def _found(text):
    return sorted((f.line, f.code) for f in check_source(textwrap.dedent(text), report="per-site").findings)


def _marked_lines(text):
    return [(n, line.split("# reported ")[1].split(":")[0])
            for n, line in enumerate(textwrap.dedent(text).splitlines(), 1) if "# reported " in line]


def test_what_the_several_rank_loop_writes_never_reaches_the_single_rank_loop():
    assert _found(LOOPS) == _marked_lines(LOOPS)


def test_a_flow_written_in_any_process_still_reaches_the_single_rank_loop():
    assert "refresh" in ALSO_ELSEWHERE and ALSO_ELSEWHERE.count("# reported ") == 2
    assert _found(ALSO_ELSEWHERE) == _marked_lines(ALSO_ELSEWHERE)


def test_a_marked_source_is_left_out_only_where_its_group_has_one_rank():
    rank = source("rank id", "get_rank()", "m.py", 3, (("*", frozenset({"pp", "tp"})),))
    (only,) = marked({rank: (frozenset({"pp", "tp"}), ())}, frozenset({"pp"}))
    assert several_ranks_only(only) == frozenset({"pp"}) and not several_ranks_only(rank)
    assert apart_from(only, frozenset({"pp"}))
    assert not apart_from(only, frozenset()) and not apart_from(only, frozenset({"tp"}))
    assert not apart_from(rank, frozenset({"pp"}))


def test_marked_sources_cover_no_unmarked_one_in_a_capped_map():
    dims = frozenset({"tp"})
    table = {}
    for line in range(MAX_SOURCES):
        (k,) = marked({source("rank id", "r", "m.py", line, (("*", dims),)): (dims, ())}, frozenset({"pp"}))
        assert merge(table, k, dims, ())
    plain = source("rank id", "r", "m.py", 99, (("*", dims),))
    assert merge(table, plain, dims, ())  # it reaches the single-rank side, where the marked ones do not
    (late,) = marked({source("rank id", "r", "m.py", 98, (("*", dims),)): (dims, ())}, frozenset({"pp"}))
    assert not merge(table, late, dims, ())  # covered by the others, marked or not


# a helper only the stages loop calls, through another: it runs in the same processes
CALLED_ONLY_THERE = """
    import threading
    import torch
    import torch.distributed as dist


    class Engine:
        def __init__(self, comm):
            self.comm = comm
            self.requests = []
            self.paused = []
            if self.comm.pp_size > 1:
                self.event_loop = self._loop_stages
            else:
                self.event_loop = self._loop_single

        def _take_paused(self):
            if dist.get_rank() == 0:
                self.paused = [r for r in self.requests if r.paused]

        def _schedule_stages(self):
            self._take_paused()
            return len(self.requests)

        def _loop_stages(self):
            while True:
                self._schedule_stages()
                if self.paused:
                    dist.all_reduce(torch.zeros(1))  # reported CSL101: only the leader took the paused ones

        def _loop_single(self):
            while True:
                if self.paused:
                    dist.all_reduce(torch.zeros(1))
"""

def _also(text, method):
    return text.rstrip() + "\n" + textwrap.indent(textwrap.dedent(method), "        ")


def test_what_a_method_only_the_several_rank_loop_calls_writes_never_reaches_the_single_rank_loop():
    assert _found(CALLED_ONLY_THERE) == _marked_lines(CALLED_ONLY_THERE)


def test_a_helper_another_method_calls_may_run_in_any_process():
    text = _also(CALLED_ONLY_THERE, """
        def drain(self):
            self._take_paused()
    """)
    assert _found(text) == _marked_lines(text) + [(34, "CSL101")]


def test_a_helper_handed_on_as_a_value_may_run_in_any_process():
    text = _also(CALLED_ONLY_THERE, """
        def start(self):
            threading.Thread(target=self._schedule_stages).start()
    """)
    assert _found(text) == _marked_lines(text) + [(34, "CSL101")]


# a helper only the single-rank loop calls: no test in it differs over the stages
SINGLE_ONLY = """
    import torch
    import torch.distributed as dist


    class Engine:
        def __init__(self, comm, pp_group):
            self.comm = comm
            self.pp_group = pp_group
            if self.comm.pp_size > 1:
                self.event_loop = self._loop_stages
            else:
                self.event_loop = self._loop_single

        def _sync_stages(self, t):
            if dist.get_rank() == 0:
                dist.all_reduce(t, group=self.pp_group)

        def _step_single(self, t):
            self._sync_stages(t)

        def _loop_stages(self):
            while True:
                dist.all_reduce(torch.zeros(1), group=self.pp_group)

        def _loop_single(self):
            while True:
                self._step_single(torch.zeros(1))
"""


def test_a_method_only_the_single_rank_loop_calls_runs_where_the_stages_group_has_one_rank():
    assert _found(SINGLE_ONLY) == []
    text = _also(SINGLE_ONLY, """
        def flush(self):
            self._sync_stages(torch.ones(1))
    """)
    assert _found(text) == [(17, "CSL101")]
