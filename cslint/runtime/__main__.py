"""``python -m cslint.runtime [options] SCRIPT [ARGS...]``: run a program with the sanitizer installed.

Patches torch.distributed and mpi4py's COMM_WORLD before the program starts
(see `cslint.runtime.autopatch`), so no code change is needed:

    mpiexec -n 4 python -m cslint.runtime --report-dir rep train.py --epochs 1
    python -m cslint.runtime.report rep --svg rep/timeline.svg

Exit status: the program's own; 86 when the sanitizer aborted the job; 2 on
bad usage.
"""

from __future__ import annotations

import argparse
import os
import runpy
import sys


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m cslint.runtime", description=__doc__.splitlines()[0])
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
