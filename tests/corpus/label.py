"""Label the generated SPMD programs by running them on several ranks.

For every program written by ``generate.py`` this runs
``mpiexec -n N python prog.py`` for N in (2, 3) under a hard timeout and
records the outcome of each run:

- ``ok``: every rank exited 0 and all ranks entered the same sequence of
  collectives (kind and site; each program prints one ``TRACE`` line per rank);
- ``hang``: the run did not finish within the timeout (the whole process
  group is killed);
- ``error``: a nonzero exit (MPI may detect a mismatch and abort);
- ``mismatch``: the run finished, but ranks entered different collective
  sequences or a rank printed no trace (MPI paired collectives of different
  kinds or from different lines).

A program is ``unsafe`` when some run is not ``ok``.  The result goes to
``generated/manifest.json`` together with the generator's markers, so the
accuracy harness needs no MPI.

Usage: ``.venv/bin/python tests/corpus/label.py [--jobs 2] [--timeout 4]``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import generate

from cslint.boundedruns import kill_session, start_bounded

MANIFEST = generate.DEFAULT_OUT / "manifest.json"
RANK_COUNTS = (2, 3)
DEFAULT_TIMEOUT = 4.0


def mpi_launcher() -> Path:
    """The ``mpiexec`` next to the running interpreter (the project venv's)."""
    candidate = Path(sys.executable).parent / "mpiexec"
    if candidate.exists():
        return candidate
    raise SystemExit(f"no mpiexec next to {sys.executable}; run with the project's .venv/bin/python")


def classify(returncode: int, stdout: str, nprocs: int) -> str:
    """Outcome of a finished run from its exit code and TRACE lines."""
    if returncode != 0:
        return "error"
    traces = {}
    for line in stdout.splitlines():
        parts = line.split(" ")
        if len(parts) >= 2 and parts[0] == "TRACE":
            traces[parts[1]] = parts[2] if len(parts) > 2 else ""
    if len(traces) != nprocs or len(set(traces.values())) != 1:
        return "mismatch"
    return "ok"


def run_program(path: Path, nprocs: int, timeout: float = DEFAULT_TIMEOUT) -> tuple[str, float]:
    """Run one program on `nprocs` ranks; returns (outcome, seconds).

    The launcher runs in its own session so a hang is ended by killing the
    whole process group: no rank is left spinning.  That kill runs in this
    process, so the session also ends by itself a little later
    (``cslint.boundedruns``): when this process is killed first (a test run
    stopped with SIGKILL), a hung program's ranks would otherwise spin on."""
    start = time.monotonic()
    process = start_bounded([str(mpi_launcher()), "-n", str(nprocs), sys.executable, str(path)], timeout,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=str(path.parent))
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(process)
        return "hang", time.monotonic() - start
    finally:
        _kill_group(process)  # leftovers of a finished launcher, if any
    outcome = classify(process.returncode, stdout, nprocs)
    if outcome == "error" and "Traceback" in stderr and "mpi4py" not in stderr:
        # a Python error outside MPI means the generator wrote a broken program
        print(f"warning: {path.name} n={nprocs} raised:\n{stderr[-600:]}", file=sys.stderr)
    return outcome, time.monotonic() - start


def _kill_group(process: subprocess.Popen) -> None:
    kill_session(process)
    try:
        process.communicate(timeout=5)
    except (subprocess.TimeoutExpired, ValueError):
        pass


def source_digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def label_all(seed: int, count: int, jobs: int, timeout: float) -> dict:
    programs = generate.generate(seed, count)
    generate.write(programs, generate.DEFAULT_OUT)
    tasks = [(p, n) for p in programs for n in RANK_COUNTS]

    def work(task):
        program, nprocs = task
        return task, run_program(generate.DEFAULT_OUT / program.name, nprocs, timeout)

    outcomes: dict[tuple[int, int], tuple[str, float]] = {}
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for (program, nprocs), result in pool.map(work, tasks):
            outcomes[(program.index, nprocs)] = result
            if result[0] != "ok":
                print(f"{program.name} n={nprocs}: {result[0]} ({result[1]:.1f}s)", flush=True)
    entries = []
    for program in programs:
        runs = {str(n): outcomes[(program.index, n)][0] for n in RANK_COUNTS}
        entries.append({
            "file": program.name,
            "sha256": source_digest(program.source),
            "intent": program.intent,
            "hazard_kind": program.hazard_kind,
            "expect": [{"line": line, "code": code} for line, code in program.expect],
            "runs": runs,
            "label": "ok" if all(v == "ok" for v in runs.values()) else "unsafe",
        })
    return {
        "version": 1,
        "seed": seed,
        "count": count,
        "rank_counts": list(RANK_COUNTS),
        "timeout_s": timeout,
        "programs": entries,
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=generate.DEFAULT_SEED)
    parser.add_argument("--count", type=int, default=generate.DEFAULT_COUNT)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT)
    args = parser.parse_args(argv)
    start = time.monotonic()
    manifest = label_all(args.seed, args.count, args.jobs, args.timeout)
    MANIFEST.write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    programs = manifest["programs"]
    unsafe = sum(p["label"] == "unsafe" for p in programs)
    surprises = [p["file"] for p in programs if (p["intent"] == "hazard") != (p["label"] == "unsafe")]
    print(f"labelled {len(programs)} programs in {time.monotonic() - start:.0f}s: "
          f"{unsafe} unsafe, {len(programs) - unsafe} ok; intent differs from run for {surprises}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
