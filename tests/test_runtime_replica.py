"""The executor replica on real collectives (MPI at 2 and 4 ranks, gloo at 2), with the sanitizer.

Asserts which configurations hang unpatched and that the sanitizer names the
sites where the ranks part; the patched leg runs the codemods' output
(`tensorrt_llm_patch.apply.apply_tree`) and asserts every configuration
completes with the tokens of the single-rank reference run.  Each run sits
under a hard timeout in its own process group (killed afterwards).
"""

from __future__ import annotations

import importlib.util
import shutil
import sys
import textwrap
from pathlib import Path

import pytest

from tensorrt_llm_patch.validate_runner import (
    CAUGHT,
    COMPLETED,
    DEFAULT_TREE,
    RunConfig,
    find_mpiexec,
    mpiexec_flags,
    run_config,
    run_in_group,
)

MPIEXEC = find_mpiexec()
needs_mpi = pytest.mark.skipif(MPIEXEC is None, reason="mpiexec not found (pip install mpi4py mpich)")
HAVE_TORCH = importlib.util.find_spec("torch") is not None  # not imported here: it costs seconds
needs_torch = pytest.mark.skipif(not HAVE_TORCH, reason="torch not installed")

RUN = {"model": "numpy", "requests": 8, "max_new_tokens": 6, "sanitizer_timeout": 1.0, "timeout": 45,
       "mpiexec": MPIEXEC, "link_findings": False, "svg": False}

# config -> function that must appear in some rank's call path at the divergence (None: completes)
UNPATCHED = [
    (RunConfig("mpi", 2, 2, "on"), None),
    (RunConfig("mpi", 2, 3, "on"), "PyExecutor._sync_gen_only_benchmark_has_insufficient_kv"),
    (RunConfig("mpi", 2, 2, "off"), None),
    (RunConfig("mpi", 2, 3, "off"), "PyExecutor._can_queue"),
    (RunConfig("mpi", 2, 2, "off", pp=True), None),
    # mpi pp2 k=3 runs in test_report_links_the_static_finding_and_draws_the_timeline
    (RunConfig("mpi", 4, 3, "on"), "PyExecutor._sync_gen_only_benchmark_has_insufficient_kv"),
    (RunConfig("mpi", 4, 3, "off"), "PyExecutor._can_queue"),
    (RunConfig("mpi", 4, 3, "off", pp=True), "PyExecutor._check_disagg_gen_transfer_status"),
    (RunConfig("mpi", 4, 3, "on", spec="sym"), None),
]


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """Tokens per request of the single-rank run (LocalDist: no collective can diverge)."""
    result = run_config(RunConfig("local", 1, 3, "off"), DEFAULT_TREE, tmp_path_factory.mktemp("ref") / "run",
                        sanitize=False, **RUN)
    assert result.outcome == COMPLETED, result.log
    assert len(result.outputs) == 8 and all(len(tokens) == 6 for tokens in result.outputs.values())
    return result.outputs


def _check(cfg, expected_site, result, reference):
    if expected_site is None:
        assert result.outcome == COMPLETED, f"{cfg.name}: {result.outcome}\n{result.log[-2000:]}"
        assert result.outputs == reference, f"{cfg.name}: tokens differ from the single-rank reference"
    else:
        assert result.outcome == CAUGHT, f"{cfg.name}: expected a caught hang, got {result.outcome}\n" \
                                         f"{result.log[-2000:]}"
        assert result.detect_seconds is not None and result.detect_seconds < 5
        paths = result.diagnosis.callpath_functions()
        assert len(paths) == cfg.ranks, paths
        assert any(expected_site in functions for functions in paths.values()), paths
        # the ranks do not all stand at the same place: that is what makes it a hang
        assert len(set(result.diagnosis.diverging_functions().values())) > 1 or \
            any(site.entry is None for site in result.diagnosis.sites)


@needs_mpi
@pytest.mark.timeout(60)
@pytest.mark.parametrize("cfg,expected_site", UNPATCHED, ids=[c.slug for c, _ in UNPATCHED])
def test_unpatched_mpi(cfg, expected_site, reference, tmp_path):
    result = run_config(cfg, DEFAULT_TREE, tmp_path / "run", **RUN)
    _check(cfg, expected_site, result, reference)


@needs_torch
@pytest.mark.timeout(60)
def test_unpatched_gloo(reference, tmp_path):
    cfg = RunConfig("gloo", 2, 3, "off")
    result = run_config(cfg, DEFAULT_TREE, tmp_path / "run", **dict(RUN, model="torch"))
    _check(cfg, "PyExecutor._can_queue", result, reference)


@needs_mpi
@pytest.mark.timeout(90)
def test_report_links_the_static_finding_and_draws_the_timeline(reference, tmp_path):
    """The PP transfer-status hang: the report points at the finding the analysis has for that site."""
    cfg = RunConfig("mpi", 2, 3, "off", pp=True)
    result = run_config(cfg, DEFAULT_TREE, tmp_path / "run", **dict(RUN, link_findings=True, svg=True))
    _check(cfg, "PyExecutor._check_disagg_gen_transfer_status", result, reference)
    assert Path(result.svg).read_text().count("rank ") >= 2
    from cslint.api import check_paths

    findings = [f for f in check_paths([str(DEFAULT_TREE)]).findings
                if f.function == "PyExecutor._check_disagg_gen_transfer_status"]
    assert findings, "the analysis reports no finding in _check_disagg_gen_transfer_status"
    linked = {(Path(f["path"]).name, f["line"]) for f in result.diagnosis.linked_findings()}
    assert any((Path(f.path).name, f.line) in linked for f in findings), (linked, findings)
    assert "Static findings on these call paths" in str(result.diagnosis)


@needs_mpi
@pytest.mark.timeout(60)
def test_mpi_comm_proxy_over_mpiexec(tmp_path):
    """wrap(MPI.COMM_WORLD): object collectives pass through; a mismatch raises on both ranks.

    Each rank writes its outcome to a file of its own: the ranks' stdout
    reaches mpiexec as two streams whose bytes can interleave mid-line."""
    script = tmp_path / "comm.py"
    outcomes = tmp_path / "outcomes"
    outcomes.mkdir()
    script.write_text(textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(Path(__file__).resolve().parents[1])!r})
        from mpi4py import MPI
        from cslint.runtime import wrap, CollectiveDivergence
        comm = wrap(MPI.COMM_WORLD, report_dir={str(tmp_path / 'rep')!r}, timeout=0, on_error="raise")
        rank = comm.Get_rank()
        assert comm.allgather(rank) == [0, 1]
        assert comm.bcast("hello" if rank == 0 else None, root=0) == "hello"
        comm.barrier()
        try:
            if rank == 0:
                comm.allgather(1)
            else:
                comm.allgather(2)
        except CollectiveDivergence:
            with open({str(outcomes)!r} + f"/rank-{{rank}}", "w") as handle:
                handle.write(f"caught on rank {{rank}}")
    """))
    proc = run_in_group([MPIEXEC, *mpiexec_flags(MPIEXEC), "-n", "2", sys.executable, str(script)], timeout=50)
    assert proc.returncode == 0, proc.stderr
    written = {path.name: path.read_text() for path in outcomes.iterdir()}
    assert written == {"rank-0": "caught on rank 0", "rank-1": "caught on rank 1"}, (written, proc.stdout)


# ------------------------------------------------------------------ patched
# every configuration that hangs unpatched, one per layout that completes, and the gloo one
PATCHED = [cfg for cfg, site in UNPATCHED if site is not None or cfg.ranks == 4] + [
    RunConfig("mpi", 2, 2, "on"), RunConfig("mpi", 2, 3, "off", pp=True), RunConfig("gloo", 2, 3, "off")]


# hazard site -> (enclosing function, callee of the finding's call, controlling condition) as NOTES.md lists them
HAZARDS = {
    "H1": ("PyExecutor._sync_gen_only_benchmark_has_insufficient_kv", "self._allgather_model_parallel_status",
           "_benchmark_fill_phase_active"),
    "H2": ("PyExecutor._executor_loop", "self._can_queue", "_ran_seed_forward_this_iter"),
    "H3": ("PyExecutor._check_disagg_gen_transfer_status", "self.kv_cache_transceiver.check_gen_transfer_status",
           "need_check"),
}


def _fixes(applied, hazard) -> bool:
    function, callee, condition = HAZARDS[hazard]
    return any(fix.finding.function == function and fix.finding.callee == callee
               and condition in fix.finding.condition for fix in applied)


def hazards_needed(cfg: RunConfig) -> list[str]:
    """The fixes without which `cfg` cannot complete (first divergence of each hanging config)."""
    if not cfg.expect_hang:
        return []
    if cfg.pp:
        return ["H3"]
    return ["H1"] if cfg.fill_gate == "on" else ["H2"]


@pytest.fixture(scope="module")
def patched_tree(tmp_path_factory):
    """The codemods' output for the replica, and which hazard sites they fixed."""
    from tensorrt_llm_patch.apply import apply_tree

    dest = tmp_path_factory.mktemp("patched") / "tree"
    report = apply_tree(str(DEFAULT_TREE), out=str(dest), full_copy=True)
    assert (dest / "run_gen_server.py").is_file(), "apply_tree(full_copy=True) wrote no runnable tree"
    fixed = {name for name in HAZARDS if _fixes(report.applied, name)}
    yield dest, fixed
    shutil.rmtree(dest, ignore_errors=True)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("cfg", PATCHED, ids=[c.slug for c in PATCHED])
def test_patched_completes_with_reference_tokens(cfg, patched_tree, reference, tmp_path):
    tree, fixed = patched_tree
    missing = [name for name in hazards_needed(cfg) if name not in fixed]
    assert not missing, (f"the codemods did not fix {', '.join(missing)} "
                         f"({'; '.join(HAZARDS[m][0] for m in missing)}), without which {cfg.name} hangs")
    if cfg.backend == "mpi" and MPIEXEC is None:
        pytest.skip("mpiexec not found")
    if cfg.backend == "gloo" and not HAVE_TORCH:
        pytest.skip("torch not installed")
    model = "torch" if cfg.backend == "gloo" else "numpy"
    result = run_config(cfg, tree, tmp_path / "run", **dict(RUN, model=model))
    assert result.outcome == COMPLETED, (
        f"{cfg.name} patched: {result.outcome}\n"
        f"{result.diagnosis.text() if result.diagnosis else result.log[-2000:]}")
    assert result.outputs == reference
