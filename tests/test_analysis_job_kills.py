"""An exception out of a loop whose only way in is a wrapper that kills the
whole job when one leaves it (issue 14): under ``unhandled-exceptions =
"hang"`` the wrapper's kill (a call a preset names in ``job_ending_calls``)
turns the raise on one rank into the end of the job, so an ``assert`` in the
loop, or a call of a method that may fail, decides no collective after it.
A wrapper whose handler only logs leaves the raise a hang, still reported."""

import textwrap

from cslint.api import check_source
from cslint.config import Settings

TRT = Settings(unhandled_exceptions="hang", presets=["torch_distributed", "tensorrt_llm"])

EXECUTOR = """
    import torch.distributed as dist
    from .watchdog import hard_kill_on_rank_crash


    class Worker:
        def __init__(self, overlap):
            self.event_loop = self._loop_overlap if overlap else self._loop_plain
            self.event_loop = trace(self.event_loop)

        def run(self):
            crashed = False
            try:
                self.event_loop()
            except Exception:
                crashed = True
                raise
            finally:
                try:
                    self._cleanup()
                finally:
                    if crashed:
                        hard_kill_on_rank_crash(self.world_size)

        def _next_request(self):
            request = open(self.path).read()
            return request

        def _loop_plain(self, t):
            while True:
                state = None if dist.get_rank() == 0 else t
                assert state is not None
                dist.all_reduce(t)

        def _loop_overlap(self, t):
            while True:
                request = self._next_request()
                dist.all_reduce(t)
"""


def _found(source):
    return sorted((f.line, f.code) for f in check_source(textwrap.dedent(source), settings=TRT,
                                                          report="per-site").findings)


def test_a_raise_out_of_a_loop_only_a_job_killing_wrapper_runs_ends_the_job():
    assert _found(EXECUTOR) == []


def test_a_wrapper_whose_handler_does_not_kill_leaves_the_raise_a_hang():
    logging_only = EXECUTOR.replace("hard_kill_on_rank_crash(self.world_size)", "log_crash(self.world_size)")
    # the assert on a rank-local state in the plain loop: the peers wait in its all_reduce
    assert _found(logging_only) == [(33, "CSL102")]


def test_a_catch_all_class_in_a_tuple_catches_everything():
    # ``except (KeyboardInterrupt, Exception):`` catches all a bare ``except Exception:`` does
    assert _found(EXECUTOR.replace("except Exception:", "except (KeyboardInterrupt, Exception):")) == []


def test_a_tuple_of_narrow_classes_does_not_catch_everything():
    assert _found(EXECUTOR.replace("except Exception:", "except (KeyboardInterrupt, ValueError):")) == [(33, "CSL102")]


def test_a_method_whose_object_goes_by_another_name_binds_its_fields_alike():
    # the constructor's first parameter is its object, whatever it is called
    renamed = EXECUTOR.replace("def __init__(self, overlap):", "def __init__(worker, overlap):").replace(
        "self.event_loop = self._loop_overlap if overlap else self._loop_plain",
        "worker.event_loop = worker._loop_overlap if overlap else worker._loop_plain").replace(
        "self.event_loop = trace(self.event_loop)", "worker.event_loop = trace(worker.event_loop)")
    assert "worker.event_loop = trace" in renamed
    assert _found(renamed) == []


def test_a_method_read_as_a_value_through_another_name_for_the_object_is_still_reported():
    # ``worker._loop_plain`` read as a value may run the loop anywhere: its raise is a hang again
    read = EXECUTOR.replace("def _next_request(self):",
                            "def pick(worker):\n            return worker._loop_plain\n\n"
                            "        def _next_request(self):")
    assert _found(read) == [(36, "CSL102")]  # (the assert, three lines down)


def test_a_method_read_as_a_value_through_a_classmethods_class_is_still_reported():
    # ``cls._loop_plain`` is the method ``self._loop_plain`` reads: handed on, it may run anywhere
    read = EXECUTOR.replace("def _next_request(self):",
                            "@classmethod\n        def pick(cls):\n            return cls._loop_plain\n\n"
                            "        def _next_request(self):")
    assert _found(read) == [(37, "CSL102")]  # (the assert, four lines down)
