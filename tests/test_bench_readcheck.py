"""bench/readcheck.py watches the fixpoint's tables while each function is
stepped and compares the entries a step read with the step's read list
(stepreads.table_reads): on a small tree every read is listed, a read list
that leaves entries out is caught, and the run leaves the fixpoint as it found it."""

from __future__ import annotations

from bench_scripts import load_bench

TREE = """\
import torch.distributed as dist


class Worker:
    def __init__(self):
        self.ready = dist.get_rank() == 0

    def sync(self, t):
        if self.ready:
            dist.all_reduce(t)


def pick(x):
    return x


def run(worker, t):
    if pick(dist.get_rank()):
        worker.sync(t)
"""


def _tree(tmp_path):
    (tmp_path / "work.py").write_text(TREE)
    return [str(tmp_path)]


def test_every_read_of_a_small_tree_is_listed(tmp_path):
    from cslint.analysis.program import Program

    solve = Program.solve
    bench = load_bench("readcheck")
    reads, found, recorder = bench.check_tree(_tree(tmp_path))
    assert reads > 0 and recorder.read
    assert found == []
    assert Program.solve is solve  # put back


def test_a_read_list_that_leaves_entries_out_is_caught(tmp_path):
    bench = load_bench("readcheck")
    _reads, found, _recorder = bench.check_tree(_tree(tmp_path), trace=3, read_list=lambda program, fn: set())
    missed = {(fn.qualname, entry[0]) for fn, entries in found for entry in entries}
    # run's step reads what its callees reach, and every step its own calling context
    assert {("run", "reach"), ("run", "ctx"), ("Worker.sync", "ctx")} <= missed, found
