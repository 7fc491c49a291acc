"""Launch one multi-rank run of the replica and classify what happened.

A run is the replica's ``run_gen_server.py`` under ``mpiexec -n N`` (MPI) or
forking N ranks itself (gloo, NCCL), in its own process group, under a hard
timeout; whatever is left of the group afterwards is killed, and the group
ends by itself a little later should the runner be killed first
(``cslint.boundedruns``), so no rank outlives its run.  With the sanitizer on, a divergence aborts the job within
seconds and the per-rank state files are merged into a diagnosis.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from cslint.boundedruns import run_bounded, start_bounded, wait_bounded

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_TREE = REPO_ROOT / "examples" / "trtllm_replica"
ENTRY = "run_gen_server.py"

COMPLETED = "completed"
CAUGHT = "hang caught"
HUNG = "hang (timeout)"
CRASHED = "crashed"


#: Scenarios of the executor beyond the DSpark burst, each with the replica flags that set it up.
#: Under attention-DP every one of them makes the ranks part unpatched:
#:   drain     serve until a shutdown request, then each rank drains its own requests and leaves
#:   fault     a fatal forward error on one rank: it fails its requests, marks itself shut down, leaves
#:   overlap   the overlap scheduler with a KV-pool rebalance every 2 iterations, which first consumes a
#:             `previous_batch` that one rank cleared and another kept
SCENARIOS = {
    "drain": ("--shutdown", "drain"),
    "fault": (),  # --fault-request depends on the rank count (see fault_request)
    "overlap": ("--overlap", "--rebalance-every", "2"),
}


def fault_request(ranks: int) -> int:
    """The request whose forward fails: the second one rank 1 owns (requests go to rank i % ranks)."""
    return ranks + 1


@dataclass(frozen=True)
class RunConfig:
    """One configuration of the GEN server."""

    backend: str = "mpi"
    ranks: int = 2
    draft_len: int = 3
    fill_gate: str = "on"
    pp: bool = False
    spec: str = "asym"
    scenario: str = ""  # "" (the burst), or one of SCENARIOS

    @property
    def expect_hang(self) -> bool:
        """As in the incident: only the asymmetric config with draft_len >= 3 diverges; each scenario
        of SCENARIOS diverges on its own."""
        if self.scenario and self.ranks > 1:
            return True
        return self.spec == "asym" and self.draft_len >= 3

    @property
    def faulting_rank(self) -> int | None:
        """The rank whose requests may be answered with the failure (the fault scenario)."""
        return fault_request(self.ranks) % self.ranks if self.scenario == "fault" and not self.pp else None

    def scenario_args(self) -> list[str]:
        if self.scenario == "fault":
            return ["--fault-request", str(fault_request(self.ranks))]
        return list(SCENARIOS.get(self.scenario, ()))

    @property
    def name(self) -> str:
        layout = f"pp{self.ranks}" if self.pp else f"adp{self.ranks}"
        # a scenario runs without the fill gate unless told otherwise: the name says only the exception
        gate = "" if self.pp or (self.scenario and self.fill_gate == "off") else f" gate={self.fill_gate}"
        scenario = f" {self.scenario}" if self.scenario else ""
        return f"{self.backend} {layout} {self.spec} k={self.draft_len}{gate}{scenario}"

    @property
    def slug(self) -> str:
        layout = f"pp{self.ranks}" if self.pp else f"adp{self.ranks}"
        gate = "" if self.pp else f"-gate{self.fill_gate}"
        scenario = f"-{self.scenario}" if self.scenario else ""
        return f"{self.backend}-{layout}-{self.spec}-k{self.draft_len}{gate}{scenario}"


@dataclass
class RunResult:
    outcome: str
    returncode: int | None
    seconds: float
    outputs: dict[str, list[int]] = field(default_factory=dict)
    owners: dict[str, int] = field(default_factory=dict)  # request id -> the rank that owned it
    diagnosis: object = None  # cslint.runtime.report.Diagnosis when a report was written
    detect_seconds: float | None = None  # divergence -> first rank report
    log: str = ""
    svg: str | None = None

    def sites(self) -> dict[int, str]:
        if self.diagnosis is None:
            return {}
        return self.diagnosis.diverging_functions()


def find_mpiexec() -> str | None:
    """mpiexec next to the running interpreter (the venv's), else on PATH."""
    candidate = Path(sys.executable).parent / "mpiexec"
    if candidate.is_file() and os.access(candidate, os.X_OK):
        return str(candidate)
    return shutil.which("mpiexec")


_MPIEXEC_FLAGS: dict[str, list[str]] = {}


def mpiexec_flags(mpiexec: str) -> list[str]:
    """Extra flags the launcher needs: Open MPI refuses root and oversubscription by default."""
    flags = _MPIEXEC_FLAGS.get(mpiexec)
    if flags is None:
        try:
            version = subprocess.run([mpiexec, "--version"], capture_output=True, text=True, timeout=20,
                                     check=False).stdout
        except (OSError, subprocess.SubprocessError):
            version = ""
        flags = []
        if "Open MPI" in version or "OpenRTE" in version:
            flags.append("--oversubscribe")
            if hasattr(os, "geteuid") and os.geteuid() == 0:
                flags.append("--allow-run-as-root")
        _MPIEXEC_FLAGS[mpiexec] = flags
    return flags


def command_for(cfg: RunConfig, tree: Path, out_dir: Path, *, model: str, requests: int, max_new_tokens: int,
                sanitize: bool, sanitizer_timeout: float, hang_timeout: float, mpiexec: str | None) -> list[str]:
    script = str(tree / ENTRY)
    args = [
        "--out", str(out_dir / "ranks"), "--draft-len", str(cfg.draft_len), "--spec", cfg.spec,
        "--fill-gate", cfg.fill_gate, "--model", model, "--requests", str(requests),
        "--max-new-tokens", str(max_new_tokens), "--hang-timeout", str(hang_timeout),
    ]
    if cfg.pp:
        args.append("--pp")
    args += cfg.scenario_args()
    if sanitize:
        args += ["--sanitize", "--report-dir", str(out_dir / "sanitizer"),
                 "--sanitizer-timeout", str(sanitizer_timeout)]
    if cfg.backend == "mpi":
        launcher = mpiexec or "mpiexec"
        return [launcher, *mpiexec_flags(launcher), "-n", str(cfg.ranks), sys.executable, script, "--backend", "mpi",
                *args]
    if cfg.backend == "local":
        return [sys.executable, script, "--backend", "local", *args]
    return [sys.executable, script, "--backend", cfg.backend, "--ranks", str(cfg.ranks), *args]


def run_in_group(cmd: list[str], *, timeout: float, **kwargs) -> subprocess.CompletedProcess:
    """`subprocess.run` with text output in a new process group that is killed afterwards.

    On timeout the whole group dies (``mpiexec`` and every rank it started), and the
    result has returncode -9 instead of raising; the group also ends by itself a
    little later should this process be killed first (``cslint.boundedruns``).
    """
    return run_bounded(cmd, timeout, **kwargs)


def run_config(cfg: RunConfig, tree: Path, out_dir: Path, *, model: str = "numpy", requests: int = 8,
               max_new_tokens: int = 6, sanitize: bool = True, sanitizer_timeout: float = 2.0,
               hang_timeout: float = 300.0, timeout: float = 60.0, mpiexec: str | None = None,
               link_findings: bool = True, svg: bool = True) -> RunResult:
    """Run `cfg` on the replica at `tree`; never leaves a process behind."""
    if out_dir.exists():
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True)
    cmd = command_for(cfg, tree, out_dir, model=model, requests=requests, max_new_tokens=max_new_tokens,
                      sanitize=sanitize, sanitizer_timeout=sanitizer_timeout, hang_timeout=hang_timeout,
                      mpiexec=mpiexec)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO_ROOT)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep)
                                                            if p])
    env.pop("CSLINT_SANITIZE", None)  # the flag above decides
    env.setdefault("OMP_NUM_THREADS", "1")
    log_path = out_dir / "run.log"
    started = time.monotonic()
    with open(log_path, "w") as log:
        proc = start_bounded(cmd, timeout, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=str(out_dir))
        timed_out = wait_bounded(proc, timeout)
    seconds = time.monotonic() - started
    log_text = log_path.read_text(errors="replace")
    outputs: dict[str, list[int]] = {}
    owners: dict[str, int] = {}
    rank_files = sorted((out_dir / "ranks").glob("rank*.json")) if (out_dir / "ranks").is_dir() else []
    for path in rank_files:
        record = json.loads(path.read_text())
        outputs.update(record["outputs"])
        for request_id in record.get("owned", ()):
            owners.setdefault(str(request_id), record["rank"])
    result = RunResult(outcome="", returncode=None if timed_out else proc.returncode, seconds=seconds,
                       outputs=outputs, owners=owners, log=log_text)
    report_dir = out_dir / "sanitizer"
    if sanitize and report_dir.is_dir() and any(report_dir.glob("rank*.json")):
        from cslint.runtime.report import diagnose

        diagnosis = diagnose(str(report_dir), link_findings=link_findings)
        if diagnosis.diverged:
            result.diagnosis = diagnosis
            result.detect_seconds = _detect_seconds(diagnosis)
        if svg:  # every sanitized run draws its ranks' timeline: where they parted, or that they kept step
            from cslint.runtime.timeline import write_svg

            result.svg = write_svg(diagnosis, str(out_dir / "timeline.svg"))
    if result.diagnosis is not None:
        result.outcome = CAUGHT
    elif timed_out:
        result.outcome = HUNG
    elif proc.returncode == 0 and outputs:
        result.outcome = COMPLETED
    else:
        result.outcome = CRASHED
    return result


def _detect_seconds(diagnosis) -> float | None:
    """From the first diverging collective's start to the first rank's report."""
    starts = [s.entry["t_start"] for s in diagnosis.sites if s.entry] + \
             [s.at["t_start"] for s in diagnosis.sites if s.entry is None and s.at]
    reports = [r.raw.get("time") for r in diagnosis.ranks if r.status in ("mismatch", "timeout")]
    if not starts or not reports:
        return None
    return max(0.0, min(reports) - min(starts))
