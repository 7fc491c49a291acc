"""`make demo`: the whole story on the bundled executor replica.

    lint     -> cslint check examples/trtllm_replica          (finds the hazards, explains them)
    apply    -> python -m tensorrt_llm_patch apply ...         (codemods -> patched tree, patch.diff, report)
    verify   -> python -m tensorrt_llm_patch verify ...        (patched files compile, hazards gone)
    validate -> python -m tensorrt_llm_patch validate ...      (unpatched hangs are caught, patched completes)

Each step prints the command it runs, so a reader can repeat any of them by
hand, and one or two lines of what it found.  Everything long (the lint
report, the patcher's report, the validation's per-rank diagnoses) goes to
files under the output directory, whose paths the demo prints.  It ends with
the before/after table of the validation, which fits in 100 columns.  The
demo exits non-zero if a step does not end as expected.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
REPLICA = REPO / "examples" / "trtllm_replica"
WIDTH = 100  # the widest line the demo prints itself


def _banner(title: str) -> None:
    print(f"\n{'=' * 78}\n{title}\n{'=' * 78}", flush=True)


def _shown(path: Path) -> str:
    """A path as the reader types it: relative to the repository when inside it."""
    try:
        return str(path.resolve().relative_to(REPO))
    except ValueError:
        return str(path)


def _run(argv: list, *, expect: set, timeout: float, log: Path, stdout: Path | None = None) -> int:
    """Run one step; its stderr (and stdout, unless ``stdout`` names a file for it) goes to ``log``."""
    shown = " ".join(_shown(Path(a)) if isinstance(a, Path) else str(a) for a in argv)
    shown = shown.replace(sys.executable, "python", 1)
    print(f"$ {shown}", flush=True)
    started = time.perf_counter()
    try:
        with open(log, "w", encoding="utf-8") as log_handle:
            if stdout is None:
                code = subprocess.run([str(a) for a in argv], cwd=REPO, timeout=timeout, stdout=log_handle,
                                      stderr=subprocess.STDOUT).returncode
            else:
                with open(stdout, "w", encoding="utf-8") as out_handle:
                    code = subprocess.run([str(a) for a in argv], cwd=REPO, timeout=timeout, stdout=out_handle,
                                          stderr=log_handle).returncode
    except subprocess.TimeoutExpired:
        print(f"demo: step timed out after {timeout:.0f} s (log: {_shown(log)})", file=sys.stderr)
        return 124
    print(f"(exit {code}, {time.perf_counter() - started:.1f} s; log: {_shown(log)})", flush=True)
    if code not in expect:
        print(f"demo: unexpected exit status {code} (expected {sorted(expect)})", file=sys.stderr)
    return code


def steps(args: argparse.Namespace, out: Path) -> dict:
    """The command of each step (``validate`` takes the rank count the demo was given)."""
    py = sys.executable
    return {
        "lint": [py, "-m", "cslint", "check", "--output-file", out / "lint.txt", REPLICA],
        "lint-statistics": [py, "-m", "cslint", "check", "--statistics", REPLICA],
        "apply": [py, "-m", "tensorrt_llm_patch", "apply", "--tree", REPLICA, "--out", out / "patch", "--full-copy"],
        "verify": [py, "-m", "tensorrt_llm_patch", "verify", "--tree", out / "patch", "--against", REPLICA],
        "validate": [py, "-m", "tensorrt_llm_patch", "validate",
                     *(["--backend", args.backend] if args.backend != "mpi" else []),  # mpi: validate's default
                     *(["--matrix"] if args.matrix else []), "--ranks", str(args.ranks),
                     "--out", out / "validate", "--json"],
    }


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def _leg(leg: dict | None) -> str:
    if leg is None:
        return "not run"
    outcome = leg.get("outcome", "?")
    if leg.get("detect_seconds") is not None:
        return f"{outcome} ({leg['detect_seconds']:.1f} s)"
    return outcome


def _tokens(leg: dict | None) -> str:
    if leg is None or leg.get("outcome") != "completed":
        return "-"
    return "identical" if leg.get("tokens_match") else "DIFFER"


def before_after_table(document: dict) -> str:
    """The validation's outcome per configuration, unpatched (before) and patched (after)."""
    headers = ("configuration", "expected", "before (unpatched)", "after (patched)", "tokens", "verdict")
    rows = [headers]
    for config in document.get("configs", []):
        rows.append((
            config["config"], "hang" if config["expect_hang"] else "complete", _leg(config["unpatched"]),
            _leg(config["patched"]), _tokens(config["patched"]), "FAIL" if config["problems"] else "ok",
        ))
    widths = [max(len(row[i]) for row in rows) for i in range(len(headers))]
    # the configuration names give way when the table would be wider than the page
    widths[0] = max(len(headers[0]), min(widths[0], WIDTH - sum(widths[1:]) - 2 * (len(widths) - 1)))
    lines = []
    for index, row in enumerate(rows):
        cells = [_cut(cell, widths[i]).ljust(widths[i]) for i, cell in enumerate(row)]
        lines.append("  ".join(cells).rstrip())
        if index == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def write_diagnoses(document: dict, out: Path) -> list[Path]:
    """``str(diagnose(...))`` of every unpatched run the sanitizer caught, one file each."""
    from cslint.runtime import diagnose

    written = []
    for config in document.get("configs", []):
        leg = config.get("unpatched") or {}
        report_dir = (leg.get("diagnosis") or {}).get("report_dir")
        if leg.get("outcome") == "completed" or not report_dir or not Path(report_dir).is_dir():
            continue
        target = out / f"diagnosis-{Path(report_dir).parent.parent.name}.txt"
        target.write_text(str(diagnose(report_dir)) + "\n", encoding="utf-8")
        written.append(target)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tensorrt_llm_patch.demo", description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="demo-out", help="where the patch, reports and validation results go")
    parser.add_argument("--ranks", type=int, default=4, help="GEN ranks for the validation (>= 2)")
    parser.add_argument("--backend", default="mpi", help="mpi (default), gloo or nccl")
    parser.add_argument(
        "--matrix", action=argparse.BooleanOptionalAction, default=True,
        help="validate every configuration of the matrix (draft_len 2 and 3, fill gate on/off, PP, symmetric "
        "spec) at --ranks; --no-matrix runs the default configuration only",
    )
    args = parser.parse_args(argv)
    if args.ranks < 2:
        parser.error("--ranks must be at least 2")

    out = (REPO / args.out).resolve() if not os.path.isabs(args.out) else Path(args.out)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    commands = steps(args, out)
    failures = []

    _banner("1/4  lint: which collectives can some ranks skip, and why?")
    if _run(commands["lint"], expect={1}, timeout=300, log=out / "lint.log") != 1:
        failures.append("lint did not report the replica's hazards")
    _run(commands["lint-statistics"], expect={1}, timeout=300, log=out / "lint-statistics.log",
         stdout=out / "lint-statistics.txt")
    for line in (out / "lint-statistics.txt").read_text(encoding="utf-8").splitlines():
        print(f"  {line}")
    print(f"the findings with their why-chains: {_shown(out / 'lint.txt')}")

    _banner("2/4  apply: rewrite the executor with the codemods")
    patch_dir = out / "patch"
    if _run(commands["apply"], expect={0}, timeout=300, log=out / "apply.log") != 0:
        failures.append("apply failed")
    for line in (out / "apply.log").read_text(encoding="utf-8").splitlines()[:4]:
        print(_cut(line, WIDTH))
    print(f"patch: {_shown(patch_dir / 'patch.diff')}\nreport: {_shown(patch_dir / 'report.md')}")

    _banner("3/4  verify: the patched files compile and the hazards are gone")
    if _run(commands["verify"], expect={0}, timeout=300, log=out / "verify.log") != 0:
        failures.append("verify failed")
    for line in (out / "verify.log").read_text(encoding="utf-8").splitlines()[:3]:
        print(_cut(line, WIDTH))

    _banner(f"4/4  validate: the DSpark scenario on {args.ranks} ranks ({args.backend}), unpatched and patched")
    results = out / "validate.json"
    if _run(commands["validate"], expect={0}, timeout=900, log=out / "validate.log", stdout=results) != 0:
        failures.append("validation did not end as expected")
    try:
        document = json.loads(results.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        document = {}
        failures.append(f"the validation wrote no results ({_shown(results)})")
    diagnoses = write_diagnoses(document, out) if document else []
    for path in diagnoses:
        slug = path.stem[len("diagnosis-"):]
        print(f"sanitizer diagnosis: {_shown(path)}")
        for leg in ("unpatched", "patched"):  # every sanitized run draws its ranks' timeline
            timeline = out / "validate" / slug / leg / "timeline.svg"
            if timeline.is_file():
                print(f"  per-rank timeline, {leg}: {_shown(timeline)}")

    _banner("summary")
    for failure in failures:
        print(f"FAILED: {failure}")
    if not failures:
        print(f"All steps ended as expected. Everything the demo wrote is under {_shown(out)}.")
    if document:
        print(f"\nbefore/after on {args.ranks} ranks ({args.backend}; tokens compared with one rank):\n")
        print(before_after_table(document))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
