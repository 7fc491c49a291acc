"""A background thread's wait that times out decides when its work comes,
not what it computes (issue 14, object-taint-spread; ``analysis/skipped.py``).

A thread the file starts (``threading.Thread(target=self._drain)``) loops
on a queue another thread of its process fills: ``ticket =
queue.get(timeout=...)``, and on ``Empty`` it goes round again.  Whether a
wait found an item is when that other thread put it, which the analysis does
not model (a field another thread writes between two statements is not
either): the k-th item the loop handles is the k-th put, on every rank.  So
the failure of such a wait no longer makes what its ``try`` bound differ, and
what the thread hands a pool it shares with the main thread (the pages it
releases) no longer makes the main thread's test of the pool differ.  Each
VALID shape sits beside the INVALID ones that must still be reported: the same
loop on the main thread (each rank polls its own queue at its own pace), a
handler that catches a failure of this rank's own work (``OSError``), a wait
outside any loop (the thread gives up), and a ``try`` whose body does more
than wait."""

from package_findings import package_findings, write_package

DRAINER = """
    import queue
    import threading

    import torch.distributed as dist

    from app.utils import broadcast_pyobj


    class Pool:
        def __init__(self, size):
            self.size = size
            self.released = 0

        def release(self, pages):
            self.released += len(pages)


    class Drainer:
        def __init__(self, size, pp_group):
            self.pool = Pool(size)
            self.pp_group = pp_group
            self.tickets = queue.Queue()
            self.thread = threading.Thread(target=self._drain, daemon=True)
            self.thread.start()

        def _drain(self):
            rank = dist.get_rank()
            while True:
                tickets = []
                try:
                    tickets = [self.tickets.get(timeout=5)]
                except queue.Empty:
                    pass
                tickets = broadcast_pyobj(tickets, rank, self.pp_group, src=0)
                if not tickets:
                    continue
                self.pool.release(tickets[0].pages)
"""

UTILS = """
    def broadcast_pyobj(data, rank, dist_group=None, src=0):
        return data


    def get_tp_group():
        return _TP
"""

STEPPER = """
    import torch.distributed as dist

    from app.drainer import Drainer
    from app.utils import get_tp_group


    class Stepper:
        def __init__(self, size, pp_group):
            self.tp_group = get_tp_group().cpu_group
            self.drainer = Drainer(size, pp_group)

        def step(self, tensor):                                 # VALID: the thread's waits are its timing
            if self.drainer.pool.released > 0:
                dist.all_reduce(tensor, group=self.tp_group)
"""


def _findings(tmp_path, drainer=DRAINER):
    package = write_package(tmp_path, "app", {"utils.py": UTILS, "drainer.py": drainer, "stepper.py": STEPPER})
    findings = package_findings(package)
    return sorted((f.function, f.condition) for f in findings)


STEP = ("Stepper.step", "self.drainer.pool.released > 0")


def test_a_thread_s_timed_wait_decides_nothing_it_hands_on(tmp_path):
    assert _findings(tmp_path) == []


def test_the_same_loop_on_the_main_thread_still_differs(tmp_path):
    # INVALID: no thread runs the loop; each rank polls its own queue when its own loop gets there
    drainer = DRAINER.replace("self.thread = threading.Thread(target=self._drain, daemon=True)",
                              "self.thread = threading.Thread(target=print, daemon=True)")
    assert drainer != DRAINER
    assert STEP in _findings(tmp_path, drainer)


def test_a_failure_of_this_rank_s_own_work_still_differs(tmp_path):
    # INVALID: an OSError is this rank's failure, not a wait that found nothing yet
    assert STEP in _findings(tmp_path, DRAINER.replace("except queue.Empty:", "except OSError:"))


def test_a_wait_outside_a_loop_still_differs(tmp_path):
    # INVALID: a thread that gives up on a timeout never handles the ticket at all
    drainer = DRAINER.replace("            while True:\n", "            if self.tickets is not None:\n").replace(
        "continue", "return")
    assert drainer != DRAINER
    assert STEP in _findings(tmp_path, drainer)


def test_a_try_that_does_more_than_wait_still_differs(tmp_path):
    # INVALID: a failure of the body's other work skips the binding too
    drainer = DRAINER.replace("tickets = [self.tickets.get(timeout=5)]\n",
                              "tickets = [self.tickets.get(timeout=5)]\n"
                              "                    tickets = [open(tickets[0].path)]\n")
    assert drainer != DRAINER
    assert STEP in _findings(tmp_path, drainer)
