"""The machinery that makes whole-tree runs fast: the whole-run cache, the
wrapper-name prefilter, partial re-extraction, capped divergence maps and the
progress bar.  Each test checks that a shortcut gives the answer of the long
way, not how fast it is (timings live in bench/)."""

import io
import os
import textwrap

import pytest

from cslint.engine.gather import wrapper_names
from cslint.engine.prefilter import WrapperDefinitions, WrapperPrefilter, compile_needles
from cslint.engine.cache import FactCache
from cslint.analysis.facts import extract_file_facts
from cslint.analysis.records import merge_partial
from cslint.analysis.atoms import source as source_atom
from cslint.analysis.divergence import MAX_SOURCES, merge as _merge, param_slot
from cslint.api import check_paths
from cslint.config import Settings
from cslint.presets import load_presets
from cslint.progress import ProgressBar

WRAPPER = textwrap.dedent("""
    import torch.distributed as dist

    def sync_everyone(t):
        dist.all_reduce(t)
""")

CALLER = textwrap.dedent("""
    from pkg.comm import sync_everyone

    def step(rank, t):
        if rank == 0:
            sync_everyone(t)
""")


KNOWLEDGE = load_presets(["torch_distributed", "mpi4py"])


def _facts(path, source: str, **options):
    return extract_file_facts(str(path), textwrap.dedent(source).encode(), Settings(), KNOWLEDGE, **options)


def _project(tmp_path, files: dict):
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "pyproject.toml").write_text("[tool.cslint]\n")
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


def _keys(result):
    return [(os.path.basename(f.path), f.line, f.code) for f in result.findings]


def test_warm_run_reuses_findings_and_an_edit_invalidates_them(tmp_path):
    root = _project(tmp_path, {"pkg/__init__.py": "", "pkg/comm.py": WRAPPER, "pkg/step.py": CALLER})
    cold = check_paths([str(root / "pkg")], cache=True)
    assert _keys(cold) == [("step.py", 6, "CSL101")]
    runs = root / ".cslint_cache" / "runs"
    assert len(os.listdir(runs)) == 1
    warm = check_paths([str(root / "pkg")], cache=True)
    assert [f.to_json() for f in warm.findings] == [f.to_json() for f in cold.findings]
    # the wrapper stops issuing a collective: the cached run must not be reused
    (root / "pkg" / "comm.py").write_text("def sync_everyone(t):\n    return t\n")
    assert _keys(check_paths([str(root / "pkg")], cache=True)) == []
    assert len(os.listdir(runs)) == 2


def test_run_key_depends_on_selection(tmp_path):
    root = _project(tmp_path, {"pkg/__init__.py": "", "pkg/comm.py": WRAPPER, "pkg/step.py": CALLER})
    assert _keys(check_paths([str(root / "pkg")], cache=True)) == [("step.py", 6, "CSL101")]
    assert _keys(check_paths([str(root / "pkg")], cache=True, ignore=["CSL101"])) == []


def test_run_cache_keeps_only_the_newest_runs(tmp_path):
    cache = FactCache(str(tmp_path))
    for index in range(20):
        cache.put_run(cache.run_key([str(index)]), [])
    assert len(os.listdir(tmp_path / ".cslint_cache" / "runs")) <= 16
    assert cache.get_run(cache.run_key(["19"])) == []
    assert cache.get_run(cache.run_key(["never"])) is None


def test_wrapper_names_match_whole_identifiers_only():
    regex = compile_needles({b"_stream", b"sync_all", b"sync_all_ranks"})
    assert regex.search(b"x = self._stream()")
    assert regex.search(b"sync_all_ranks(t)")
    assert regex.search(b"sync_all(t)")
    assert not regex.search(b"torch.cuda.current_stream()")
    assert not regex.search(b"sync_all_ranks_later()")
    assert not regex.search(b"my_sync_all(c); sync_allx(d)")


def test_ambiguous_collective_names_spread_only_with_their_module(tmp_path):
    facts = _facts(tmp_path / "m.py", """
        import torch.distributed as dist
        def reduce(t):
            dist.all_reduce(t)
        def sync_grads(t):
            dist.all_reduce(t)
    """)
    ambiguous = KNOWLEDGE.ambiguous_names
    assert wrapper_names(facts) == {"reduce", "sync_grads"}
    # ``reduce`` spreads only with its module (``m.reduce``): ``functools.reduce`` deepens nothing
    assert wrapper_names(facts, ambiguous) == {"m.reduce", "sync_grads"}


def test_partial_re_extraction_equals_a_full_one(tmp_path):
    source = """
        import torch.distributed as dist
        def flush(t):
            dist.all_reduce(t)
        def helper(x):
            return x + 1
        def step(rank, t):
            if rank == 0:
                sync_everyone(t)
            return helper(t)
        def other(flag):
            return flag
    """
    path = tmp_path / "step.py"
    first = _facts(path, source)
    assert [fn.qualname for fn in first.functions if fn.deep] == ["flush"]
    already = frozenset(i for i, fn in enumerate(first.functions) if fn.deep)
    patch = _facts(path, source, deep_names={"sync_everyone"}, already_deep=already)
    assert patch.partial is not None and [fn.qualname for fn in patch.functions] == ["step"]
    merged = merge_partial(first, patch)
    full = _facts(path, source, deep_names={"sync_everyone"})
    assert [(fn.qualname, fn.deep) for fn in merged.functions] == [(fn.qualname, fn.deep) for fn in full.functions]
    merged_step = next(fn for fn in merged.functions if fn.qualname == "step")
    full_step = next(fn for fn in full.functions if fn.qualname == "step")
    assert merged_step.variants[None].sites == full_step.variants[None].sites


def test_divergence_maps_keep_every_dimension_past_the_source_cap():
    table: dict = {}
    tp, pp, dp = frozenset({"tp"}), frozenset({"pp"}), frozenset({"dp"})
    for index in range(MAX_SOURCES):
        assert _merge(table, source_atom("rank id", f"r{index}", "f.py", index, ()), tp, ())
    # a further source adding nothing new is dropped, one adding a dimension is kept
    assert not _merge(table, source_atom("rank id", "again", "f.py", 99, ()), tp, ())
    assert _merge(table, source_atom("rank id", "pipeline", "f.py", 100, ()), pp | tp, ())
    # parameters are symbolic and always kept
    assert _merge(table, param_slot(0), dp, ())
    dims = frozenset().union(*(d for d, _via in table.values()))
    assert dims == tp | pp | dp


def test_progress_bar_draws_and_clears():
    stream = io.StringIO()
    bar = ProgressBar(stream, interval=0)
    bar.start("analysing, round 1", 4)
    bar.advance(2)
    assert bar.render().endswith("2/4 files")
    bar.advance(5)
    assert bar.render().endswith("4/4 files")
    bar.close()
    written = stream.getvalue()
    assert "analysing, round 1" in written and written.endswith("\r\x1b[2K")


def test_progress_bar_only_for_large_trees(tmp_path, capsys):
    small = _project(tmp_path / "small", {"a.py": "x = 1\n"})
    check_paths([str(small)], progress=True)
    assert capsys.readouterr().err == ""
    body = "import torch.distributed as dist\ndef f(t):\n    dist.all_reduce(t)\n"
    large = _project(tmp_path / "large", {f"m{i}.py": body for i in range(201)})
    check_paths([str(large)], progress=True, jobs=1)
    err = capsys.readouterr().err
    assert "201/201 files" in err
    assert err.endswith("\r\x1b[2K")


def test_a_method_name_many_classes_define_selects_files_only_with_its_class(tmp_path):
    facts = _facts(tmp_path / "router.py", """
        import torch.distributed as dist
        class CommRouter:
            def dispatch(self, t):
                dist.all_reduce(t)
            def sync_weights(self, t):
                dist.broadcast(t, 0)
        class LocalRouter:
            def dispatch(self, t):
                return t
    """)
    names = wrapper_names(facts)
    assert names == {"dispatch", "sync_weights"}
    definitions = WrapperDefinitions([facts], names)
    assert definitions.shared_methods == {b"dispatch"}
    assert definitions.method_owners == {b"dispatch": {b"CommRouter"}, b"sync_weights": {b"CommRouter"}}
    assert definitions.function_modules == {}
    wrappers = WrapperPrefilter({n.encode() for n in names}, definitions)
    assert not wrappers.search(b"def step(job):\n    job.dispatch(x)\n")
    assert wrappers.search(b"r = CommRouter()\nr.dispatch(x)\n")
    assert wrappers.search(b"def step(r):\n    r.sync_weights(x)\n")  # one class defines it
    assert not wrappers.search(b"r = CommRouterV2()\nr.dispatcher(x)\n")


def test_workers_hand_out_a_rounds_last_files_largest_first_and_keep_the_job_order():
    """The batches no worker has been sent when the last file of a round is
    chosen go out one file per task, largest first (``Workers._even_out``);
    the facts still come back in the order of the jobs, each from its own job."""
    import sys

    from cslint.engine import workers as workers_module
    from cslint.engine.workers import ParseJob, RunContext, Workers

    if not sys.platform.startswith("linux"):
        return
    jobs = []
    for index in range(3 * workers_module.PARALLEL_THRESHOLD):
        body = "".join(f"    x{line} = {line}\n" for line in range(1 + (index * 37) % 200))
        source = f"import torch.distributed as dist\n\ndef f{index}(t):\n{body}    dist.all_reduce(t)\n"
        jobs.append(ParseJob(f"m{index}.py", source.encode(), Settings(), f"m{index}", frozenset()))
    handed_out = []
    even_out = Workers._even_out

    def spy(self, free, submitted):
        evened = even_out(self, free, submitted)
        handed_out.append(list(evened))
        return evened

    Workers._even_out = spy
    try:
        with Workers(2, len(jobs), RunContext.of(["torch_distributed"])) as pool:
            assert pool.pool is not None
            facts = pool.map(iter(jobs))
    finally:
        Workers._even_out = even_out
    assert [f.path for f in facts] == [job.path for job in jobs]
    assert [f.functions[0].qualname for f in facts] == [f"f{i}" for i in range(len(jobs))]
    (again,) = handed_out
    assert again, "no batch was waiting when the last job came: nothing was evened out"
    assert all(len(positions) == 1 for positions in again)
    sizes = [len(jobs[positions[0]].data) for positions in again]
    assert sizes == sorted(sizes, reverse=True) and sizes[0] > sizes[-1]


def test_a_re_analysis_patch_in_process_runs_on_the_kept_tree_and_gives_the_facts_of_a_fresh_parse(monkeypatch):
    """A file parsed in the run's own process keeps its syntax tree until
    the gatherer says which files a patch comes for (``Workers.keep_trees``):
    the patch then parses nothing and its facts pickle to the bytes of a
    patch on a fresh parse; a tree no longer kept is parsed again."""
    import ast
    import pickle

    from cslint.engine import workers as workers_module
    from cslint.engine.workers import ParseJob, RunContext, Workers

    source = ("import torch.distributed as dist\n\n"
              "def sync_all(t):\n    dist.all_reduce(t)\n\n"
              "def step(t, rank):\n    if rank == 0:\n        return\n    sync_all(t)\n\n"
              "def other(t):\n    helper_wrapper(t)\n").encode()
    context = RunContext.of(["torch_distributed"])
    first = ParseJob("m.py", source, Settings(), "m", frozenset())
    parses = []
    parse = ast.parse

    def counting(*args, **kwargs):
        parses.append(args[0])
        return parse(*args, **kwargs)

    monkeypatch.setattr(workers_module.ast, "parse", counting)
    with Workers(1, 1, context) as pool:
        (facts,) = pool.map([first])
        already = frozenset(i for i, fn in enumerate(facts.functions) if fn.deep)
        patch = ParseJob("m.py", source, Settings(), "m", frozenset({"helper_wrapper"}), already)
        pool.keep_trees(["m.py"])
        (patched,) = pool.map([patch])
        assert len(parses) == 1, "the patch parsed the file again"
        pool.keep_trees([])
        (again,) = pool.map([patch])
        assert len(parses) == 2
    fresh = workers_module.extract(patch, context)
    assert patched.partial and [fn.qualname for fn in patched.functions] == ["other"]
    assert pickle.dumps(patched) == pickle.dumps(fresh) == pickle.dumps(again)


def test_a_re_analysis_patch_goes_to_the_worker_that_keeps_the_files_tree(tmp_path, monkeypatch):
    """Each worker keeps the syntax trees of the files it parsed, and a
    re-analysis patch of such a file goes to that worker (a pipe per
    worker): no patch parses its file again, and the patches' facts equal
    those of patches on a fresh parse; a tree no longer kept
    (``keep_trees``) is parsed again."""
    import ast
    import os
    import sys

    from cslint.engine import workers as workers_module
    from cslint.engine.workers import PARALLEL_THRESHOLD, ParseJob, RunContext, Workers

    if not sys.platform.startswith("linux"):
        return
    log = tmp_path / "parses"
    parse = ast.parse

    def counting(data, *args, **kwargs):  # inherited by the forked workers
        with open(log, "a") as out:
            out.write(f"{os.getpid()} {kwargs.get('filename')}\n")
        return parse(data, *args, **kwargs)

    monkeypatch.setattr(workers_module.ast, "parse", counting)
    context = RunContext.of(["torch_distributed"])
    jobs = []
    for index in range(PARALLEL_THRESHOLD):
        source = (f"import torch.distributed as dist\n\ndef sync_{index}(t):\n    dist.all_reduce(t)\n\n"
                  f"def other_{index}(t):\n    helper_wrapper(t)\n").encode()
        jobs.append(ParseJob(f"m{index}.py", source, Settings(), f"m{index}", frozenset()))
    with Workers(2, len(jobs), context) as pool:
        assert pool.pool is not None
        first = pool.map(iter(jobs))
        patches = [ParseJob(job.path, job.data, job.settings, job.module, frozenset({"helper_wrapper"}),
                            frozenset(i for i, fn in enumerate(facts.functions) if fn.deep))
                   for job, facts in zip(jobs, first)]
        pool.keep_trees(job.path for job in jobs[1:])
        patched = pool.map(iter(patches))
        pool.keep_trees(())
    parses = [line.split() for line in log.read_text().splitlines()]
    by_path: dict = {}
    for pid, path in parses:
        by_path.setdefault(path, []).append(pid)
    assert len({pid for pid, _path in parses}) == 2, "both workers parsed"
    assert len(by_path["m0.py"]) == 2  # its tree was dropped: parsed again
    assert all(len(by_path[job.path]) == 1 for job in jobs[1:]), "a patch parsed its file again"
    for patch, facts in zip(patches, patched):
        assert facts.partial and [fn.qualname for fn in facts.functions] == [f"other_{patch.module[1:]}"]
        # equal by value: a pickle writes a set's elements in the order its table holds them, which
        # depends on how the set was built (a union, a literal), not on what it holds
        assert facts == workers_module.extract(patch, context)


@pytest.mark.parametrize("jobs", [1, 2])
def test_parsing_leaves_the_collector_alone(monkeypatch, jobs):
    """Neither the run's own process nor a worker collects cycles between
    files: a collection walked every fact (in-process) or kept syntax tree
    (a worker) made since the one before, for next to no garbage
    (extraction leaves no cycles, tests/test_memory_bounds.py).  A worker
    forked here inherits the patched ``gc.collect``; it reports a call by
    making its facts fail."""
    from cslint.engine import workers as workers_module
    from cslint.engine.workers import PARALLEL_THRESHOLD, ParseJob, RunContext, Workers

    collections = []

    def collect(*args):
        collections.append(args)
        if workers_module._PROCESS is not None:  # in a worker: the run's process raises it
            raise AssertionError("a worker collected cycles")
        return 0

    monkeypatch.setattr(workers_module.gc, "collect", collect)
    padding = "#" * 1000 + "\n"
    source = ("import torch.distributed as dist\n\ndef f(t):\n    dist.all_reduce(t)\n"
              + padding * ((1 << 20) // len(padding) + 1)).encode()
    count = 2 if jobs == 1 else PARALLEL_THRESHOLD
    jobs_ = [ParseJob(f"m{i}.py", source, Settings(), f"m{i}", frozenset()) for i in range(count)]
    with Workers(jobs, len(jobs_), RunContext.of(["torch_distributed"])) as pool:
        assert (pool.pool is not None) == (jobs > 1)
        facts = pool.map(jobs_)
    assert [f.functions[0].qualname for f in facts] == ["f"] * count
    assert collections == []
