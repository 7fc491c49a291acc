"""A failure deep down a chain of functions that reach collectives (issue
14): under ``unhandled-exceptions = "hang"`` a callee that itself reaches a
collective and then raises on its own rank-local test leaves the ranks that
raise, while their peers go on to the caller's next collective.  The
callee's own tests decide (``Variant.escapes``, worked out for a deep
function from its dataflow as the summary walk does for the others).  Where
the only way into the caller is a wrapper that kills the whole job when an
exception leaves it (jobkills.py), the raise ends the job and decides
nothing."""

import textwrap

from cslint.analysis.facts import extract_file_facts
from cslint.api import check_source
from cslint.config import Settings
from cslint.presets import load_presets

TRT = Settings(unhandled_exceptions="hang", presets=["torch_distributed", "tensorrt_llm"])

WORKER = """
    import torch.distributed as dist
    from .watchdog import hard_kill_on_rank_crash


    class Worker:
        def run(self, t):
            crashed = False
            try:
                self._serve(t)
            except Exception:
                crashed = True
                raise
            finally:
                if crashed:
                    hard_kill_on_rank_crash(self.world_size)

        def _exchange(self, t):
            dist.all_reduce(t)
            if dist.get_rank() == 0 and t.sum() > self.limit:
                raise RuntimeError("over the limit on rank 0")
            return t

        def _save(self, t):
            dist.all_reduce(t)
            if dist.get_rank() == 0:
                open(self.path, "w").write(str(t))
            return t

        def _serve(self, t):
            self._exchange(t)
            dist.broadcast(t, 0)
            self._save(t)
            dist.barrier()
"""


def _found(source):
    return sorted((f.line, f.code) for f in check_source(textwrap.dedent(source), settings=TRT,
                                                          report="per-site").findings)


def test_a_deep_callee_failing_on_its_own_rank_local_test_parts_the_ranks_at_the_callers_next_collective():
    logging_only = WORKER.replace("hard_kill_on_rank_crash(self.world_size)", "log_crash(self.world_size)")
    # the raise on rank 0 in _exchange: the peers wait in the broadcast (and _save's all_reduce) the failing
    # rank never reaches; the local write on rank 0 in _save: they wait in the barrier
    assert _found(logging_only) == [(32, "CSL104"), (33, "CSL104"), (34, "CSL104")]


def test_a_deep_callee_that_fails_alike_everywhere_decides_nothing():
    alike = WORKER.replace("hard_kill_on_rank_crash(self.world_size)", "log_crash(self.world_size)") \
        .replace("dist.get_rank() == 0 and t.sum() > self.limit", "t.sum() > self.limit") \
        .replace("if dist.get_rank() == 0:", "if t.sum() > self.limit:")
    assert _found(alike) == []


def test_under_a_job_killing_wrapper_the_deep_callee_failure_ends_the_job():
    assert _found(WORKER) == []


NOTED = WORKER.replace("""        def _serve(self, t):
            self._exchange(t)""", """        def _note(self, t):
            if dist.get_rank() == 0:
                open(self.path, "w").write(str(t))

        def _serve(self, t):
            self._note(t)
            self._exchange(t)""")


def _escapes(source):
    """Each function's ``Variant.escapes`` (one variant each), by qualname."""
    facts = extract_file_facts("pkg/work.py", textwrap.dedent(source).encode(), TRT,
                               load_presets(TRT.presets), module="pkg.work")
    return {fn.qualname: next(iter(fn.variants.values())).escapes for fn in facts.functions}


def test_a_summarised_method_only_a_job_killing_wrapper_runs_records_no_failure():
    # as a deep one: its raise ends the job, so nothing it fails on decides a caller's collectives
    escapes = _escapes(NOTED)
    assert not escapes["Worker._note"] and not escapes["Worker._serve"]


def test_a_summarised_method_a_logging_wrapper_runs_records_its_failure():
    escapes = _escapes(NOTED.replace("hard_kill_on_rank_crash(self.world_size)", "log_crash(self.world_size)"))
    assert any(atom.text == "dist.get_rank()" for atom in escapes["Worker._note"])
