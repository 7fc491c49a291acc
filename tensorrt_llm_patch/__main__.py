"""``python -m tensorrt_llm_patch {apply,verify,validate}``.

Exit statuses (also in docs/tensorrt_llm_patch.md):

    0   apply: patch written (or dry run with changes); verify: passed
    2   usage error
    3   apply: nothing to do (no applicable fix: already patched, or clean)
    4   a given path does not exist
    5   not a TensorRT-LLM tree
    6   target not writable (read-only file or directory, output directory not empty)
    7   --installed: no installed tensorrt_llm package with a PyTorch executor
    8   analysis, codemod or internal error (verify: the re-lint itself failed; compile results are still printed)
    9   verify: nothing to verify (no apply record and no --against, or the record does not match)
    10  verify: a patched file does not compile
    11  verify: re-lint still reports a fixed hazard, or reports a new one
    12  verify: both 10 and 11
    130 interrupted (SIGINT, Ctrl-C); 143 terminated (SIGTERM): no traceback, and a
        half-written output is removed
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import traceback
from collections.abc import Sequence

EXIT_OK = 0
EXIT_USAGE = 2
EXIT_NOTHING_TO_DO = 3
EXIT_MISSING = 4
EXIT_NOT_TRTLLM = 5
EXIT_NOT_WRITABLE = 6
EXIT_NOT_INSTALLED = 7
EXIT_INTERNAL = 8
EXIT_NOTHING_TO_VERIFY = 9
EXIT_COMPILE = 10
EXIT_RELINT = 11
EXIT_COMPILE_AND_RELINT = 12
EXIT_INTERRUPTED = 128 + signal.SIGINT  # the shell's status for a process ended by the signal
EXIT_TERMINATED = 128 + signal.SIGTERM

ERROR_EXIT = {
    "usage": EXIT_USAGE,
    "missing": EXIT_MISSING,
    "not-trtllm": EXIT_NOT_TRTLLM,
    "not-writable": EXIT_NOT_WRITABLE,
    "not-installed": EXIT_NOT_INSTALLED,
    "analysis": EXIT_INTERNAL,
    "nothing-to-verify": EXIT_NOTHING_TO_VERIFY,
}

PROG = "python -m tensorrt_llm_patch"


def _build_parser() -> argparse.ArgumentParser:
    from .apply import DEFAULT_INCLUDE, EXIT_MODES, STRATEGIES

    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Patch a TensorRT-LLM tree's rank-divergent collectives and verify the result.",
        epilog="exit status: 0 ok, 2 usage, 3 nothing to do, 4 missing path, 5 not TensorRT-LLM, "
        "6 not writable, 7 not installed, 8 internal, 9 nothing to verify, 10/11/12 verify failed "
        "(compile / re-lint / both)",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    apply = sub.add_parser("apply", help="lint the tree, fix the executor code, write patch and report")
    where = apply.add_mutually_exclusive_group(required=True)
    where.add_argument("--tree", metavar="PATH", help="a TensorRT-LLM checkout (its top level)")
    where.add_argument("--installed", action="store_true",
                       help="the installed tensorrt_llm package (found without importing it)")
    target = apply.add_mutually_exclusive_group(required=True)
    target.add_argument("--out", metavar="DIR", help="write patch.diff, reports and the changed files to DIR "
                        "(must not exist or be empty)")
    target.add_argument("--write", action="store_true",
                        help="edit the tree in place, keeping <file>.orig; reports go to <tree>/.tensorrt_llm_patch/")
    apply.add_argument("--include", metavar="GLOB", action="extend", nargs="+",
                       help="tree-relative directory or glob of files to rewrite (repeatable; default: "
                       + ", ".join(DEFAULT_INCLUDE) + ")")
    apply.add_argument("--strategy", choices=STRATEGIES, default="auto")
    apply.add_argument("--exit-mode", choices=EXIT_MODES, default="keep-local",
                       help="always-enter: a rank that would have exited still exits with its own result "
                       "(keep-local) or decides from the gathered values")
    apply.add_argument("--full-copy", action="store_true",
                       help="with --out: copy the whole tree, then apply (a runnable patched tree)")
    apply.add_argument("--safe-only", action="store_true", help="apply only fixes labelled safe")
    apply.add_argument("--min-confidence", choices=("low", "medium", "high"), default="medium",
                       help="rewrite a site only when the analysis is at least this sure of its finding "
                       "(default: medium); the others are reported for review")
    apply.add_argument("--report-dir", metavar="DIR", help="with --write: where the reports go")
    apply.add_argument("--jobs", "-j", type=int, metavar="N", help="worker processes for the analysis")
    apply.add_argument("--json", action="store_true", help="print report.json to stdout instead of a summary")

    verify = sub.add_parser("verify", help="check that the patched files compile and the fixed hazards are gone")
    verify.add_argument("--tree", metavar="PATH", required=True, help="the patched tree (or the original, "
                        "with --against the apply output directory)")
    verify.add_argument("--against", metavar="PATH",
                        help="the original tree, or the apply output directory holding report.json")
    verify.add_argument("--jobs", "-j", type=int, metavar="N")
    verify.add_argument("--json", action="store_true", help="print the result as JSON")

    sub.add_parser("validate", help="multi-rank validation of the patched executor replica", add_help=False)
    return parser


def _print_error(message: str) -> None:
    print(f"tensorrt_llm_patch: error: {message}", file=sys.stderr)


def cmd_apply(args: argparse.Namespace) -> int:
    from .apply import apply_tree
    from .report import summary_lines

    if args.jobs is not None and args.jobs < 1:
        _print_error("--jobs must be at least 1")
        return EXIT_USAGE
    if args.full_copy and not args.out:
        _print_error("--full-copy needs --out DIR")
        return EXIT_USAGE
    if args.report_dir and not args.write:
        _print_error("--report-dir goes with --write (with --out the reports go to DIR)")
        return EXIT_USAGE
    report = apply_tree(
        args.tree, installed=args.installed, out=args.out, write=args.write, include=args.include,
        strategy=args.strategy, exit_mode=args.exit_mode, full_copy=args.full_copy,
        unsafe_fixes=not args.safe_only, report_dir=args.report_dir, jobs=args.jobs,
        min_confidence=args.min_confidence,
    )
    if args.json:
        print(json.dumps(report.to_json(), indent=2))
    else:
        for line in summary_lines(report):
            print(line, file=sys.stderr)
    return EXIT_NOTHING_TO_DO if report.nothing_to_do else EXIT_OK


def cmd_verify(args: argparse.Namespace) -> int:
    from .verify import summary_lines, verify_tree

    report = verify_tree(args.tree, against=args.against, jobs=args.jobs)
    if args.json:
        print(json.dumps(report.to_json(), indent=2))
    else:
        for line in summary_lines(report):
            print(line, file=sys.stderr)
    if report.ok:
        return EXIT_OK
    if report.relint_error:
        # The analysis itself failed on the patched tree: an internal error,
        # reported after the compile results it did not prevent.
        return EXIT_INTERNAL
    if not report.compiles and not report.relint_ok:
        return EXIT_COMPILE_AND_RELINT
    return EXIT_COMPILE if not report.compiles else EXIT_RELINT


def cmd_validate(argv: Sequence[str]) -> int:
    try:
        from .validate import main as validate_main
    except ImportError as exc:
        _print_error(f"validate is not available in this installation ({exc})")
        return EXIT_USAGE
    return int(validate_main(list(argv)) or 0)


class Terminated(BaseException):
    """SIGTERM, raised in the main thread so that staged outputs are cleaned up."""


def _raise_terminated(_signum, _frame) -> None:
    raise Terminated()


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return _main(argv)
    except KeyboardInterrupt:  # also outside the commands' own handlers (imports, argument parsing)
        _print_error("interrupted")
        return EXIT_INTERRUPTED
    except Terminated:
        _print_error("terminated")
        return EXIT_TERMINATED


def console_main() -> None:
    """The process entry point: SIGTERM unwinds like Ctrl-C, then the status is returned."""
    signal.signal(signal.SIGTERM, _raise_terminated)
    sys.exit(main())


def _main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # validate owns its whole argument list.
    if argv and argv[0] == "validate":
        return cmd_validate(argv[1:])
    parser = _build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse: 2 on usage errors, 0 on --help
        return int(exc.code or 0)
    if not args.command:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    from .apply import PatchError

    try:
        return cmd_apply(args) if args.command == "apply" else cmd_verify(args)
    except PatchError as exc:
        _print_error(str(exc))
        return ERROR_EXIT.get(exc.kind, EXIT_INTERNAL)
    except KeyboardInterrupt:
        _print_error("interrupted")
        return EXIT_INTERRUPTED
    except Exception as exc:  # noqa: BLE001 - exit status 8 with a message, never a bare traceback
        _print_error(f"internal error: {type(exc).__name__}: {exc}")
        if os.environ.get("CSLINT_DEBUG"):
            traceback.print_exc()
        else:
            print("tensorrt_llm_patch: set CSLINT_DEBUG=1 for the traceback", file=sys.stderr)
        return EXIT_INTERNAL


if __name__ == "__main__":
    console_main()
