"""The ``cslint fix`` subcommand.

The ``cslint`` command line does not import this package: it discovers
subcommands through the ``cslint.commands`` entry point group (see
``pyproject.toml``) and calls :func:`register` with the subparsers and the
pieces of the CLI a subcommand shares (selection options, the check run,
the usage error).  The codemods depend on the analyzer, never the reverse.

Every finding ends up in exactly one of three printed outcomes: fixed
(with its strategy and safe/unsafe label), held back (an unsafe fix, not
applied without ``--unsafe-fixes``) or not fixed (with the reason).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

EXIT_CLEAN = 0
EXIT_FINDINGS = 1
EXIT_ERROR = 2


def register(subparsers, host) -> None:
    """Add ``fix`` to the ``cslint`` subparsers (the ``cslint.commands`` entry point)."""
    from .always_enter_rewrite import EXIT_MODES
    from .driver import STRATEGIES

    fix = subparsers.add_parser("fix", help="rewrite rank-divergent collectives into safe shapes")
    fix.add_argument("paths", nargs="*", metavar="PATH", help="files and directories (default: .); - reads stdin "
                                                             "and prints the fixed module")
    mode = fix.add_mutually_exclusive_group()
    mode.add_argument("--diff", action="store_true", help="print a unified diff and change nothing (default)")
    mode.add_argument("--write", action="store_true", help="apply the fixes in place (atomic replace)")
    fix.add_argument("--strategy", choices=STRATEGIES, default="auto",
                     help="auto: the first strategy the finding's rule lists that applies")
    fix.add_argument(
        "--exit-mode", choices=EXIT_MODES, default="keep-local",
        help="always-enter: a rank that would have exited still exits with its own result (keep-local) "
             "or every rank decides from the gathered values (decide-from-gathered)",
    )
    fix.add_argument("--unsafe-fixes", action="store_true", help="also apply fixes labelled unsafe")
    fix.add_argument("--from-json", metavar="FILE",
                     help="fix the findings of a `cslint check --format json` report instead of checking "
                          "(the PATHs, if given, select which of its files to fix)")
    host.add_selection(fix)
    # fixes rewrite call sites: every site is its own finding
    fix.set_defaults(handler=lambda args: run_fix(args, host), report="per-site")


def run_fix(args: argparse.Namespace, host) -> int:
    from .driver import keep_read_only_files, plan_fixes, write_fixes

    if args.from_json:
        result = _result_from_json(args, host)
    else:
        result = host.run_check(args)
    for error in result.errors:
        print(f"cslint: error: {error.path}: {error.message}", file=sys.stderr)
    if result.errors:
        return EXIT_ERROR
    stdin_text = host.stdin_text(args)
    if stdin_text is not None:
        return _fix_stdin(args, host, result, stdin_text)
    plan = plan_fixes(result, strategy=args.strategy, exit_mode=args.exit_mode, unsafe=args.unsafe_fixes)
    if args.write:
        keep_read_only_files(plan)  # refused, with the reason, before the outcomes are printed
    if args.quiet < 2:
        for line in outcome_lines(plan):
            print(line, file=sys.stderr)
    if args.write:
        not_written = write_fixes(plan)
        for path, reason in not_written:
            print(f"cslint: error: {path}: {reason}", file=sys.stderr)
        if args.quiet < 2:
            written = sum(1 for f in plan.files if f.changed) - len(not_written)
            print(f"cslint: wrote {written} file(s)", file=sys.stderr)
        if not_written:
            return EXIT_ERROR
        return EXIT_FINDINGS if plan.held_back or plan.refused else EXIT_CLEAN
    diff = plan.diff(base_dir=os.getcwd())
    sys.stdout.write(_paint_diff(diff, host.color(args, sys.stdout)))
    return EXIT_FINDINGS if diff else EXIT_CLEAN


def _paint_diff(diff: str, color: bool) -> str:
    from cslint.report.diff import paint_diff

    return paint_diff(diff, color)


def _fix_stdin(args: argparse.Namespace, host, result, data: bytes) -> int:
    """``cslint fix -``: the fixed module on stdout (the input, unchanged,
    when nothing applies or it is not UTF-8), the outcomes on stderr."""
    from cslint.decoding import SourceDecodeError, decode_source

    from .driver import FileFix, FixPlan, fix_source

    path = args.stdin_filename or "-"
    try:
        decoded = decode_source(data)  # as `cslint check` decoded it: coding declaration, byte order mark
    except SourceDecodeError:
        sys.stdout.buffer.write(data)
        return EXIT_FINDINGS if result.findings else EXIT_CLEAN
    source = decoded.text
    findings = [f for f in result.findings if f.path == path]
    fix = fix_source(source, path, findings, strategy=args.strategy, exit_mode=args.exit_mode,
                     unsafe=args.unsafe_fixes) if findings else FileFix(path=path, original=source, fixed=source)
    if args.quiet < 2 and findings:
        for line in outcome_lines(FixPlan(files=[fix])):
            print(line, file=sys.stderr)
    if args.diff:  # asked for explicitly: the diff, as for files
        from cslint.diffs import unified_diff

        sys.stdout.write(_paint_diff(unified_diff(fix.original, fix.fixed, path), host.color(args, sys.stdout)) if fix.changed else "")
        return EXIT_FINDINGS if fix.changed else EXIT_CLEAN
    try:
        sys.stdout.buffer.write(decoded.encode(fix.fixed))
    except UnicodeEncodeError:  # the fix does not fit the input's encoding: the input, unchanged
        sys.stdout.buffer.write(data)
        return EXIT_FINDINGS
    return EXIT_FINDINGS if fix.held_back or fix.refused else EXIT_CLEAN


def outcome_lines(plan) -> list[str]:
    """One line per finding (applied, held back, refused), then the counts."""
    rows = []
    for applied in plan.applied:
        label = "safe" if applied.safe else "unsafe"
        rows.append((applied.finding, f"fixed by {applied.strategy} ({label}): {applied.reason}"))
    for held in plan.held_back:
        rows.append((held.finding, f"has an unsafe {held.strategy} fix, held back (apply it with "
                                   f"--unsafe-fixes): {held.reason}"))
    for refused in plan.refused:
        rows.append((refused.finding, f"not fixed: {refused.reason}"))
    rows.sort(key=lambda row: row[0].sort_key())
    lines = [f"{f.path}:{f.line}:{f.column}: {f.code} {text}" for f, text in rows]
    lines.append(f"cslint: {len(plan.applied)} fixed, {len(plan.held_back)} held back as unsafe, "
                 f"{len(plan.refused)} not fixed")
    return lines


def _result_from_json(args: argparse.Namespace, host):
    from cslint.model import CheckResult

    try:
        with open(args.from_json, encoding="utf-8") as handle:
            document = handle.read()
    except OSError as exc:
        raise host.usage_error(f"{args.from_json}: cannot read: {exc.strerror or exc}") from exc
    try:
        result = CheckResult.from_json(json.loads(document))
    except ValueError as exc:  # json.JSONDecodeError included
        raise host.usage_error(f"{args.from_json}: not a cslint JSON report: {exc}") from exc
    # Paths are as `cslint check` printed them: relative to the directory it
    # ran in.  That is taken to be this one; failing that, the report's own.
    report_dir = os.path.dirname(os.path.abspath(args.from_json))
    for finding in result.findings:
        if not os.path.isabs(finding.path) and not os.path.exists(finding.path):
            beside = os.path.join(report_dir, finding.path)
            if os.path.exists(beside):
                finding.path = beside
    explicit = [p for p in args.paths or [] if p != "."]
    if explicit:
        wanted = [os.path.realpath(p) for p in explicit]

        def selected(path: str) -> bool:
            real = os.path.realpath(path)
            return any(real == w or real.startswith(w.rstrip(os.sep) + os.sep) for w in wanted)

        result.findings = [f for f in result.findings if selected(f.path)]
    return result
