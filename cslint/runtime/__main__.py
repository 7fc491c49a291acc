"""``python -m cslint.runtime``: run a program sanitized, or print the report of a run.

    python -m cslint.runtime [--report-dir DIR] [--timeout S] SCRIPT [ARGS...]
    python -m cslint.runtime report DIR [--svg FILE] [--json] [--no-findings]

The first form patches torch.distributed and mpi4py's COMM_WORLD before the
program starts (see `cslint.runtime.autopatch`), so no code change is needed:

    mpiexec -n 4 python -m cslint.runtime --report-dir rep train.py --epochs 1
    python -m cslint.runtime report rep --svg rep/timeline.svg

(``run SCRIPT`` is the first form for a script that is itself called ``report``.)

Exit status: the program's own, 86 when the sanitizer aborted the job, 2 on
bad usage; for ``report``: 1 when the ranks diverged, 0 when they did not.
"""

from __future__ import annotations

import argparse
import os
import runpy
import sys


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["report"]:
        from .report import main as report_main

        return report_main(argv[1:])
    if argv[:1] == ["run"]:
        argv = argv[1:]
    parser = argparse.ArgumentParser(prog="python -m cslint.runtime", description=__doc__.splitlines()[0],
                                     epilog="python -m cslint.runtime report DIR: print the report of a run")
    parser.add_argument("--report-dir", default=os.environ.get("CSLINT_REPORT_DIR", "cslint-report"))
    parser.add_argument("--timeout", type=float, default=float(os.environ.get("CSLINT_SANITIZE_TIMEOUT", "2")),
                        help="seconds a collective may wait before the job is reported and aborted")
    parser.add_argument("script")
    parser.add_argument("args", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    if not os.path.isfile(args.script):
        print(f"python -m cslint.runtime: error: {args.script}: no such file", file=sys.stderr)
        return 2
    from . import install

    install(report_dir=args.report_dir, timeout=args.timeout)
    sys.argv = [args.script, *args.args]
    sys.path.insert(0, os.path.dirname(os.path.abspath(args.script)))
    runpy.run_path(args.script, run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
