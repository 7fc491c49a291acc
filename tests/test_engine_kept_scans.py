"""A file whose functions were all summarised in its first extraction
(``FileFacts.skipped``: none reached a collective then) is extracted whole
again once a wrapper it calls is known.  It is extracted on the syntax tree
its first extraction kept, where that tree is kept (the run's own process,
or the worker that parsed it), and, under the same group spans, with the
call scans that extraction made: the scans never read which functions are
deep.  The facts are those of a fresh parse."""

import pickle
import sys

from cslint.analysis import functionscan
from cslint.config import Settings
from cslint.engine import workers as workers_module
from cslint.engine.workers import PARALLEL_THRESHOLD, ParseJob, RunContext, Workers

SOURCE = ("import torch.distributed as dist\n\n"
          "def step(t, rank):\n    if rank == 0:\n        return\n    helper_wrapper(t)\n\n"
          "def other(t):\n    return t + 1\n").encode()


def _counting_scans(monkeypatch) -> list:
    scans: list = []
    scan = functionscan.FunctionScan.scan_calls

    def counting(self):
        scans.append(self.qualname)
        return scan(self)

    monkeypatch.setattr(functionscan.FunctionScan, "scan_calls", counting)
    return scans


def test_a_skipped_file_extracted_again_reuses_the_scans_of_its_kept_tree(monkeypatch):
    scans = _counting_scans(monkeypatch)
    parses: list = []
    parse = workers_module.ast.parse
    monkeypatch.setattr(workers_module.ast, "parse", lambda *a, **k: parses.append(a[0]) or parse(*a, **k))
    context = RunContext.of(["torch_distributed"])
    first = ParseJob("m.py", SOURCE, Settings(), "m", frozenset())
    again = ParseJob("m.py", SOURCE, Settings(), "m", frozenset({"helper_wrapper"}))
    with Workers(1, 1, context) as pool:
        (skipped,) = pool.map([first])
        assert skipped.skipped
        scanned_first = len(scans)
        assert scanned_first == 3  # step, other, the module body
        pool.keep_trees(["m.py"])
        (deeper,) = pool.map([again])
        assert len(parses) == 1, "the file was parsed again"
        assert len(scans) == scanned_first, "the functions were scanned again"
        pool.keep_trees([])
    fresh = workers_module.extract(again, context)
    assert not deeper.skipped and [fn.qualname for fn in deeper.functions if fn.deep] == ["step"]
    assert pickle.dumps(deeper) == pickle.dumps(fresh)


def test_under_other_group_spans_the_kept_tree_is_scanned_anew(monkeypatch):
    # the spans a tree's getters define came between the two extractions: the scans may differ
    scans = _counting_scans(monkeypatch)
    context = RunContext.of(["torch_distributed"])
    again = ParseJob("m.py", SOURCE, Settings(), "m", frozenset({"helper_wrapper"}))
    with Workers(1, 1, context) as pool:
        pool.map([ParseJob("m.py", SOURCE, Settings(), "m", frozenset())])
        pool.learn_spans((("dp_tp", frozenset({"tp"})),))
        pool.keep_trees(["m.py"])
        (deeper,) = pool.map([again])
    assert len(scans) == 6
    assert pickle.dumps(deeper) == pickle.dumps(workers_module.extract(again, pool.context))


def test_a_skipped_file_extracted_again_goes_to_the_worker_keeping_its_tree(tmp_path, monkeypatch):
    if not sys.platform.startswith("linux"):
        return
    log = tmp_path / "parses"
    parse = workers_module.ast.parse

    def counting(data, *args, **kwargs):  # inherited by the forked workers
        with open(log, "a") as out:
            out.write(f"{kwargs.get('filename')}\n")
        return parse(data, *args, **kwargs)

    monkeypatch.setattr(workers_module.ast, "parse", counting)
    context = RunContext.of(["torch_distributed"])
    jobs = [ParseJob(f"m{i}.py", SOURCE, Settings(), f"m{i}", frozenset()) for i in range(PARALLEL_THRESHOLD)]
    with Workers(2, len(jobs), context) as pool:
        assert pool.pool is not None
        pool.learn_spans(())
        first = pool.map(iter(jobs))
        assert all(facts.skipped for facts in first)
        pool.keep_trees(job.path for job in jobs)
        again = [ParseJob(job.path, job.data, job.settings, job.module, frozenset({"helper_wrapper"}))
                 for job in jobs]
        deeper = pool.map(iter(again))
        pool.keep_trees(())
    parsed = log.read_text().splitlines()
    assert sorted(parsed) == sorted(job.path for job in jobs), "a file was parsed twice"
    for job, facts in zip(again, deeper):
        assert facts == workers_module.extract(job, context)
