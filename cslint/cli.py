"""The ``cslint`` command line.

    cslint check [PATH...] [--format text|json|sarif|github] [--select CODES] [--ignore CODES]
    cslint fix   [PATH...] [--diff | --write] [--strategy auto|always-enter|consensus]
    cslint rules
    cslint explain CODE

Exit status: 0 clean, 1 findings (or, for ``fix --diff``, changes to make),
2 usage, configuration or internal error.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from dataclasses import dataclass
from typing import Callable, Optional, Sequence

from . import __version__
from .config import ConfigError, Settings, load_settings
from .model import CheckResult

EXIT_CLEAN = 0
EXIT_FINDINGS = 1
EXIT_ERROR = 2


class UsageError(Exception):
    """Bad arguments: printed without a traceback, exit status 2."""


def _codes(value: Optional[str]) -> Optional[list[str]]:
    if value is None:
        return None
    return [c.strip().upper() for c in value.split(",") if c.strip()]


def _add_selection(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--select", metavar="CODES", help="comma-separated codes or prefixes to report (default: CSL)")
    parser.add_argument("--ignore", metavar="CODES", help="comma-separated codes or prefixes to leave out")
    parser.add_argument("--config", metavar="FILE", help="use this pyproject.toml instead of discovering one")
    parser.add_argument(
        "--context",
        metavar="PATH",
        action="append",
        default=[],
        help="also analyse PATH for cross-file facts without reporting on it (repeatable; "
        "the pre-commit hook passes the project root)",
    )
    parser.add_argument("--jobs", "-j", type=int, metavar="N", help="worker processes for parsing (default: automatic)")
    parser.add_argument("--no-cache", action="store_true", help="neither read nor write .cslint_cache/")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cslint",
        description="Find collectives that some ranks reach and others skip, explain why, and fix them.",
    )
    parser.add_argument("--version", action="version", version=f"cslint {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    check = sub.add_parser("check", help="report rank-divergent collectives")
    check.add_argument("paths", nargs="*", default=["."], metavar="PATH")
    check.add_argument("--format", choices=("text", "json", "sarif", "github"), default="text")
    check.add_argument("--output-file", "-o", metavar="FILE", help="write the report to FILE instead of stdout")
    check.add_argument("--baseline", metavar="FILE", help="report and fail only on findings not in FILE")
    check.add_argument("--write-baseline", metavar="FILE", help="record the current findings in FILE and exit 0")
    check.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    check.add_argument("--no-source", action="store_true", help="text format: do not print source lines")
    check.add_argument("--color", choices=("auto", "always", "never"), default="auto")
    _add_selection(check)

    _register_plugin_commands(sub)

    sub.add_parser("rules", help="list the rules")
    explain = sub.add_parser("explain", help="print a rule's documentation")
    explain.add_argument("code", metavar="CODE")
    return parser


#: The entry point group through which other packages add subcommands
#: (``cslint fix`` comes from the codemods package this way: cslint itself
#: never imports the codemods).  An entry point names a function
#: ``register(subparsers, host)`` that adds its parser and sets ``handler``.
COMMAND_ENTRY_POINTS = "cslint.commands"


@dataclass(frozen=True)
class CommandHost:
    """What the CLI lends a registered subcommand."""

    add_selection: Callable[[argparse.ArgumentParser], None]
    run_check: Callable[[argparse.Namespace], CheckResult]
    usage_error: type


def _register_plugin_commands(sub) -> None:
    from importlib.metadata import entry_points

    host = CommandHost(add_selection=_add_selection, run_check=_check, usage_error=UsageError)
    for entry in sorted(entry_points(group=COMMAND_ENTRY_POINTS), key=lambda e: e.name):
        try:
            register = entry.load()
        except ImportError as exc:  # a broken install: the other commands still work
            print(f"cslint: warning: subcommand {entry.name!r} unavailable: {exc}", file=sys.stderr)
            continue
        register(sub, host)


def _settings(args: argparse.Namespace) -> Optional[Settings]:
    if args.config:
        return load_settings(config_file=args.config)
    return None


def _check(args: argparse.Namespace) -> CheckResult:
    from .api import check_paths

    for path in list(args.paths) + list(args.context):
        if not os.path.lexists(path):
            raise UsageError(f"{path}: no such file or directory")
    if args.jobs is not None and args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    progress = sys.stderr.isatty()  # a bar for trees over 200 files; never in logs
    return check_paths(
        list(args.paths),
        settings=_settings(args),
        select=_codes(args.select),
        ignore=_codes(args.ignore),
        jobs=args.jobs,
        cache=not args.no_cache,
        context=list(args.context) or None,
        progress=progress,
    )


def _emit(text: str, output_file: Optional[str]) -> None:
    if output_file:
        directory = os.path.dirname(os.path.abspath(output_file))
        os.makedirs(directory, exist_ok=True)
        with open(output_file, "w", encoding="utf-8") as handle:
            handle.write(text)
    else:
        sys.stdout.write(text)
        if text and not text.endswith("\n"):
            sys.stdout.write("\n")


def cmd_check(args: argparse.Namespace) -> int:
    from . import baseline as baseline_mod
    from .report import render

    result = _check(args)
    if args.write_baseline:
        baseline_mod.write_baseline(result, args.write_baseline)
        print(f"cslint: wrote {len(result.findings)} finding(s) to {args.write_baseline}", file=sys.stderr)
        return EXIT_CLEAN
    if args.baseline:
        result = baseline_mod.filter_new(result, baseline_mod.load_baseline(args.baseline))
    color = args.color == "always" or (args.color == "auto" and not args.output_file and sys.stdout.isatty())
    text = render(result, args.format, root=os.getcwd(), color=color, show_source=not args.no_source)
    _emit(text, args.output_file)
    for error in result.errors:
        print(f"cslint: error: {error.path}: {error.message}", file=sys.stderr)
    if result.errors:
        return EXIT_ERROR
    if result.findings and not args.exit_zero:
        return EXIT_FINDINGS
    return EXIT_CLEAN


def cmd_rules(_args: argparse.Namespace) -> int:
    from .rules import all_rules

    rows = [(r.CODE, r.NAME, r.SUMMARY) for r in all_rules()]
    width = max((len(name) for _, name, _ in rows), default=4)
    for code, name, summary in rows:
        print(f"{code}  {name:<{width}}  {summary}")
    return EXIT_CLEAN


def cmd_explain(args: argparse.Namespace) -> int:
    from .rules import all_rules

    code = args.code.strip().upper()
    for rule in all_rules():
        if rule.CODE == code or rule.NAME == args.code.strip():
            print(f"# {rule.CODE} ({rule.NAME})\n")
            print(rule.DOC.strip())
            return EXIT_CLEAN
    known = ", ".join(r.CODE for r in all_rules())
    raise UsageError(f"unknown rule {args.code!r}; known rules: {known}")


COMMANDS = {"check": cmd_check, "rules": cmd_rules, "explain": cmd_explain}


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on usage errors, 0 on --help
        return int(exc.code or 0)
    if not args.command:
        parser.print_help(sys.stderr)
        return EXIT_ERROR
    try:
        handler = getattr(args, "handler", None) or COMMANDS[args.command]
        return handler(args)
    except (UsageError, ConfigError) as exc:
        print(f"cslint: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("cslint: interrupted", file=sys.stderr)
        return EXIT_ERROR
    except BrokenPipeError:
        return EXIT_CLEAN
    except Exception as exc:  # noqa: BLE001 - the contract is exit 2, never a bare traceback
        print(f"cslint: internal error: {type(exc).__name__}: {exc}", file=sys.stderr)
        if os.environ.get("CSLINT_DEBUG"):
            traceback.print_exc()
        else:
            print("cslint: set CSLINT_DEBUG=1 for the traceback", file=sys.stderr)
        return EXIT_ERROR


def console_main() -> None:
    """The process entry point (``cslint``, ``python -m cslint``).

    A run is one short process.  The cyclic collector stays off: it would
    only walk the analysis' millions of objects once more after it.  And the
    process ends with ``os._exit`` once its output is flushed: tearing down
    the interpreter freed every object one by one, half a second on a large
    tree, for memory the exit returns anyway.
    """
    import gc

    gc.disable()
    status = main()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (BrokenPipeError, OSError):  # a reader that went away (``| head``)
            pass
    os._exit(status)


if __name__ == "__main__":
    console_main()
