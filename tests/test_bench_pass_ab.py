"""bench/pass_ab.py times two versions' whole-tree pass in one process: each
version's ``cslint`` package is loaded under a name of its own, and the
facts it extracted are loaded as objects of that package."""

from __future__ import annotations

import os
import pickle
import shutil
import sys

from bench_scripts import REPO_ROOT, load_bench

HAZARD = """\
import torch.distributed as dist

def step(t):
    if dist.get_rank() == 0:
        return
    dist.all_reduce(t)
"""


def test_a_renamed_package_runs_the_pass_on_its_own_facts(tmp_path):
    from cslint.analysis.records import Collective
    from cslint.api import check_paths
    from cslint.engine import run

    bench = load_bench("pass_ab")
    packages = tmp_path / "packages"
    shutil.copytree(os.path.join(REPO_ROOT, "cslint"), packages / "cslint_abtest")
    sys.path.insert(0, str(packages))
    try:
        loaded = bench._Renamed(pickle.dumps(Collective("all_reduce", "world", "torch")), "cslint_abtest").load()
        assert type(loaded).__module__ == "cslint_abtest.analysis.records"
        assert tuple(loaded) == ("all_reduce", "world", "torch")

        tree = tmp_path / "tree"
        tree.mkdir()
        (tree / "train.py").write_text(HAZARD)
        saved = {}
        real = run._analysis_findings

        def spy(facts_by_real, all_files, knowledge, bar, parallel=False, callee_facts=None, module_of=None):
            saved["facts"] = pickle.dumps((facts_by_real, all_files, callee_facts))
            saved["found"] = real(facts_by_real, all_files, knowledge, bar, parallel, callee_facts, module_of)
            return saved["found"]

        run._analysis_findings = spy
        try:
            check_paths([str(tree)], cache=False, jobs=1)
        finally:
            run._analysis_findings = real
        assert saved["found"], "the hazard is found"
        side = bench.Side("cslint_abtest", saved["facts"])
        side.once(helper=False)
        assert side.found[0] == len(saved["found"])
        assert len(side.times) == 1 and side.times[0][0] >= side.times[0][1] >= 0
    finally:
        sys.path.remove(str(packages))


SUMMARY_NOBODY_READS = """\
import torch.distributed as dist


def rows(t):
    return len(t)


def total(t):
    return t.sum()


def step(t):
    if rows(t) > 0:
        dist.all_reduce(t)
"""


def test_saved_facts_hold_no_summary_left_for_the_run_that_made_them(tmp_path):
    # a run extracts summaries lazily (``total`` is read by nobody), each
    # worked out where its syntax tree is kept: the saved facts must hold
    # every one worked out, or the process that loads them for the pass
    # could not read them
    from cslint.api import check_paths

    bench = load_bench("pass_ab")
    packages = tmp_path / "packages"
    shutil.copytree(os.path.join(REPO_ROOT, "cslint"), packages / "cslint_abpending")
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "train.py").write_text(SUMMARY_NOBODY_READS)
    facts = bench.dump(REPO_ROOT, str(tree), sys.executable, str(tmp_path / "facts.pickle"))
    sys.path.insert(0, str(packages))
    try:
        facts_by_real, _files, _callees = bench._Renamed(facts, "cslint_abpending").load()
        kinds = {fn.key: type(fn).__name__ for f in facts_by_real.values() for fn in f.functions}
        assert kinds["train:total"] == "FuncFacts", kinds
        side = bench.Side("cslint_abpending", facts)
        side.once(helper=False)
    finally:
        sys.path.remove(str(packages))
    assert side.found[0] == len(check_paths([str(tree)], cache=False, jobs=1).findings)
