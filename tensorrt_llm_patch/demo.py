"""`make demo`: the whole story on the bundled executor replica.

    lint  -> cslint check examples/trtllm_replica        (finds the hazards, explains them)
    apply -> python -m tensorrt_llm_patch apply ...       (codemods -> patched tree, patch.diff, report)
    verify-> python -m tensorrt_llm_patch verify ...      (patched files compile, hazards gone)
    validate -> python -m tensorrt_llm_patch validate ... (unpatched hangs are caught, patched completes)

Each step prints the command it runs, so a reader can repeat any of them by
hand.  The demo exits non-zero if a step does not end as expected.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
REPLICA = REPO / "examples" / "trtllm_replica"


def _banner(title: str) -> None:
    print(f"\n{'=' * 78}\n{title}\n{'=' * 78}", flush=True)


def _run(argv: list[str], *, expect: set[int], timeout: float) -> int:
    shown = " ".join(str(a) if " " not in str(a) else repr(str(a)) for a in argv)
    print(f"$ {shown}", flush=True)
    started = time.perf_counter()
    try:
        code = subprocess.run(argv, cwd=REPO, timeout=timeout).returncode
    except subprocess.TimeoutExpired:
        print(f"demo: step timed out after {timeout:.0f} s", file=sys.stderr)
        return 124
    print(f"(exit {code}, {time.perf_counter() - started:.1f} s)", flush=True)
    if code not in expect:
        print(f"demo: unexpected exit status {code} (expected {sorted(expect)})", file=sys.stderr)
    return code


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tensorrt_llm_patch.demo", description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="demo-out", help="where the patch, reports and validation results go")
    parser.add_argument("--ranks", type=int, default=4, help="GEN ranks for the validation (>= 2)")
    parser.add_argument("--backend", default="mpi", help="mpi (default), gloo or nccl")
    parser.add_argument(
        "--matrix", action=argparse.BooleanOptionalAction, default=True,
        help="validate the whole matrix (2 and 4 ranks, draft_len 2 and 3, fill gate on/off, PP); "
        "--no-matrix runs the default config on --ranks",
    )
    args = parser.parse_args(argv)

    out = (REPO / args.out).resolve() if not os.path.isabs(args.out) else Path(args.out)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    py = sys.executable
    failures = []

    _banner("1/4  lint: which collectives can some ranks skip, and why?")
    code = _run([py, "-m", "cslint", "check", str(REPLICA.relative_to(REPO))], expect={1}, timeout=300)
    if code != 1:
        failures.append("lint did not report the replica's hazards")

    _banner("2/4  apply: rewrite the executor with the codemods")
    patch_dir = out / "patch"
    code = _run(
        [py, "-m", "tensorrt_llm_patch", "apply", "--tree", str(REPLICA), "--out", str(patch_dir), "--full-copy"],
        expect={0},
        timeout=300,
    )
    if code != 0:
        failures.append("apply failed")
    else:
        print(f"\npatch: {patch_dir / 'patch.diff'}\nreport: {patch_dir / 'report.md'}\n")
        report = patch_dir / "report.md"
        if report.exists():
            print(report.read_text(encoding="utf-8"))

    _banner("3/4  verify: the patched files compile and the hazards are gone")
    code = _run(
        [py, "-m", "tensorrt_llm_patch", "verify", "--tree", str(patch_dir), "--against", str(REPLICA)],
        expect={0},
        timeout=300,
    )
    if code != 0:
        failures.append("verify failed")

    _banner(f"4/4  validate: run the DSpark scenario on several ranks ({args.backend}), unpatched and patched")
    code = _run(
        [
            py, "-m", "tensorrt_llm_patch", "validate", "--backend", args.backend,
            *(["--matrix"] if args.matrix else ["--ranks", str(args.ranks)]), "--out", str(out / "validate"),
        ],
        expect={0},
        timeout=900,
    )
    if code != 0:
        failures.append("validation did not end as expected")

    _banner("summary")
    if failures:
        for failure in failures:
            print(f"FAILED: {failure}")
        return 1
    print(f"All steps ended as expected. Everything the demo wrote is under {out}.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
