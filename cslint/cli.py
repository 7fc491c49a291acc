"""The ``cslint`` command line.

    cslint check [PATH...|-] [--output-format text|concise|json|sarif|github] [--select CODES]
                 [--ignore CODES] [--statistics] [--show-files] [--show-settings] [-q]
    cslint fix   [PATH...|-] [--diff | --write] [--strategy auto|always-enter|consensus]
    cslint rules
    cslint explain CODE

``-`` reads one module from stdin; ``--stdin-filename`` names it (for
configuration discovery, per-file-ignores and the paths in messages).

Exit status: 0 clean, 1 findings (or, for ``fix --diff``, changes to make),
2 usage, configuration or internal error, 130 interrupted (SIGINT), 143
terminated (SIGTERM).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import traceback
from dataclasses import dataclass
from typing import Callable, Optional, Sequence

from . import __version__
from .config import ConfigError, Settings, check_selectors, load_settings
from .engine import timeline
from .model import CONFIDENCE_LEVELS, CheckResult
from .report import FORMATS

EXIT_CLEAN = 0
EXIT_FINDINGS = 1
EXIT_ERROR = 2
EXIT_INTERRUPTED = 128 + signal.SIGINT  # the shell's convention for a process ended by a signal
EXIT_TERMINATED = 128 + signal.SIGTERM

#: ``--output-format`` values (``--format`` is the same option): every reporter's.
OUTPUT_FORMATS = FORMATS
STDIN = "-"


class UsageError(Exception):
    """Bad arguments: printed without a traceback, exit status 2."""


class Terminated(BaseException):
    """SIGTERM, raised in the main thread so that ``finally`` blocks and
    cleanups (a half-written fix's temporary file) run before the exit."""


def _codes(value: Optional[str], option: str) -> Optional[list[str]]:
    if value is None:
        return None
    codes = [c.strip().upper() for c in value.split(",") if c.strip()]
    check_selectors(codes, f"'{option}'")
    return codes


def _add_selection(parser: argparse.ArgumentParser) -> None:
    """Options shared by ``check`` and ``fix``: what to analyse and how to show it."""
    parser.add_argument("--select", metavar="CODES", help="comma-separated codes or prefixes to report (default: CSL)")
    parser.add_argument("--ignore", metavar="CODES", help="comma-separated codes or prefixes to leave out")
    parser.add_argument("--config", metavar="FILE",
                        help="use this pyproject.toml (it must hold a [tool.cslint] table) instead of discovering one")
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
    parser.add_argument("--force-exclude", action=argparse.BooleanOptionalAction, default=None,
                        help="apply `exclude` and .gitignore to paths named on the command line too "
                             "(as pre-commit names them)")
    parser.add_argument("--respect-gitignore", action=argparse.BooleanOptionalAction, default=None,
                        help="skip the files git ignores (default: on)")
    parser.add_argument("--stdin-filename", metavar="PATH",
                        help="the path of the module read from stdin (`-`): configuration, per-file-ignores "
                             "and messages use it")
    parser.add_argument("--quiet", "-q", action="count", default=0,
                        help="print findings and errors only (-qq: errors only)")
    parser.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                        help="colour the output (auto: on a terminal, unless NO_COLOR is set or FORCE_COLOR is)")


def build_parser(argv: Optional[Sequence[str]] = None) -> argparse.ArgumentParser:
    """The ``cslint`` command line.  ``argv``, the arguments it will parse:
    when they name a command of cslint's own, the commands other packages
    add are not loaded (``fix`` imports libcst, a tenth of a second of
    every ``check`` run otherwise); without them, every command is there."""
    parser = argparse.ArgumentParser(
        prog="cslint",
        description="Find collectives that some ranks reach and others skip, explain why, and fix them.",
    )
    parser.add_argument("--version", action="version", version=f"cslint {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    check = sub.add_parser("check", help="report rank-divergent collectives")
    check.add_argument("paths", nargs="*", metavar="PATH", help="files and directories (default: .); - reads stdin")
    check.add_argument("--output-format", "--format", dest="format", choices=OUTPUT_FORMATS, default="text",
                       help="text (default), concise (one line per finding), json, sarif or github")
    check.add_argument("--output-file", "-o", metavar="FILE", help="write the report to FILE instead of stdout")
    check.add_argument("--statistics", action="store_true", help="print the number of findings per code instead")
    check.add_argument("--report", choices=("root-cause", "per-site"), default=None,
                       help="root-cause: one finding per guard, listing the collective call sites it decides "
                            "(default); per-site: one finding per site")
    check.add_argument("--report-per-site", dest="report", action="store_const", const="per-site",
                       help="same as --report per-site")
    check.add_argument("--min-confidence", choices=CONFIDENCE_LEVELS, default=None,
                       help="report only findings the analysis is at least this sure of (default: the "
                            "configured min-confidence, else low: everything); the rest are counted")
    check.add_argument("--show-files", action="store_true", help="print the files that would be checked, and exit")
    check.add_argument("--show-settings", action="store_true",
                       help="print the settings the first file is checked with, and exit")
    check.add_argument("--baseline", metavar="FILE", help="report and fail only on findings not in FILE")
    check.add_argument("--write-baseline", metavar="FILE", help="record the current findings in FILE and exit 0")
    check.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    check.add_argument("--no-source", action="store_true", help="text format: do not print source lines")
    _add_selection(check)

    if _command_of(argv) not in COMMANDS:
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
    #: ``(args, stream) -> bool``: whether to colour what goes to ``stream``
    color: Callable = None  # type: ignore[assignment]
    #: ``args -> str or None``: the module read from stdin by ``run_check`` (``-``)
    stdin_text: Callable = None  # type: ignore[assignment]


def _command_of(argv: Optional[Sequence[str]]) -> Optional[str]:
    """The command ``argv`` names: its first argument that is no option (the
    top-level options take no value); None when unknown."""
    for token in argv or ():
        if not token.startswith("-"):
            return token
    return None


def _register_plugin_commands(sub) -> None:
    from importlib.metadata import entry_points

    host = CommandHost(add_selection=_add_selection, run_check=_check, usage_error=UsageError,
                       color=_color, stdin_text=_stdin_text)
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


def _discovery(args: argparse.Namespace):
    from .engine.discovery import DiscoveryOptions

    return DiscoveryOptions(force_exclude=args.force_exclude, respect_gitignore=args.respect_gitignore)


def _paths(args: argparse.Namespace) -> list[str]:
    """The paths to check; ``[STDIN]`` when the module comes from stdin
    (``-``, or ``--stdin-filename`` without paths, as in ruff)."""
    paths = list(args.paths or [])
    if STDIN in paths:
        if len(paths) > 1:
            raise UsageError("`-` (stdin) cannot be combined with other paths")
        return paths
    if not paths:
        return [STDIN] if args.stdin_filename else ["."]
    return paths


def _stdin_text(args: argparse.Namespace) -> Optional[str]:
    """The module ``run_check`` read from stdin, or None when it read files."""
    return getattr(args, "stdin_source", None)


def _check(args: argparse.Namespace) -> CheckResult:
    from .api import check_paths

    paths = _paths(args)
    select, ignore = _codes(args.select, "--select"), _codes(args.ignore, "--ignore")
    for path in [p for p in paths if p != STDIN] + list(args.context):
        if not os.path.lexists(path):
            raise UsageError(f"{path}: no such file or directory")
    if args.jobs is not None and args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    if args.stdin_filename and paths != [STDIN]:
        raise UsageError("--stdin-filename names the module read from stdin: pass `-` instead of paths")
    if paths == [STDIN]:
        from .stdin import check_stdin, read_stdin

        data = read_stdin()
        args.stdin_source = data
        return check_stdin(data, args.stdin_filename, settings=_settings(args), select=select, ignore=ignore,
                           jobs=args.jobs, context=list(args.context) or None, discovery=_discovery(args),
                           report=getattr(args, "report", None), min_confidence=getattr(args, "min_confidence", None))
    progress = sys.stderr.isatty() and args.quiet == 0  # a bar for trees over 200 files; never in logs
    return check_paths(
        paths,
        settings=_settings(args),
        select=select,
        ignore=ignore,
        jobs=args.jobs,
        cache=not args.no_cache,
        context=list(args.context) or None,
        progress=progress,
        discovery=_discovery(args),
        report=getattr(args, "report", None),
        min_confidence=getattr(args, "min_confidence", None),  # `cslint fix` follows the configured level
    )


def _color(args: argparse.Namespace, stream) -> bool:
    from .report.common import color_wanted

    return color_wanted(args.color, stream)


def _output_target(output_file: Optional[str]) -> None:
    """Refuse an output file that cannot be one before the analysis runs."""
    if output_file and os.path.isdir(output_file):
        raise UsageError(f"{output_file}: is a directory; --output-file needs a file name")


def _emit(text: str, output_file: Optional[str]) -> None:
    if output_file:
        try:
            directory = os.path.dirname(os.path.abspath(output_file))
            os.makedirs(directory, exist_ok=True)
            with open(output_file, "w", encoding="utf-8") as handle:
                handle.write(text)
        except OSError as exc:  # a directory, no permission, a full disk: the user's to fix
            raise UsageError(f"{exc.filename or output_file}: cannot write the report: {exc.strerror or exc}") from exc
    else:
        sys.stdout.write(text)
        if text and not text.endswith("\n"):
            sys.stdout.write("\n")


def cmd_check(args: argparse.Namespace) -> int:
    from . import baseline as baseline_mod
    from .report import render, render_statistics

    if args.statistics and args.format not in ("text", "concise", "json"):
        raise UsageError(f"--statistics prints text or json, not {args.format}")
    if args.show_files or args.show_settings:
        return _show(args)
    _output_target(args.output_file)
    result = _check(args)
    timeline.mark("checked")
    if args.write_baseline:
        try:
            baseline_mod.write_baseline(result, args.write_baseline)
        except OSError as exc:
            raise UsageError(f"{exc.filename or args.write_baseline}: cannot write the baseline: "
                             f"{exc.strerror or exc}") from exc
        if args.quiet == 0:
            print(f"cslint: wrote {len(result.findings)} finding(s) to {args.write_baseline}", file=sys.stderr)
        return EXIT_CLEAN
    if args.baseline:
        result = baseline_mod.filter_new(result, baseline_mod.load_baseline(args.baseline))
    color = _color(args, sys.stdout) if not args.output_file else _color(args, None)
    if args.statistics:
        text = render_statistics(result, "json" if args.format == "json" else "text")
    else:
        sources = {args.stdin_filename or STDIN: args.stdin_source} if _stdin_text(args) is not None else None
        text = render(result, args.format, root=os.getcwd(), color=color, show_source=not args.no_source,
                      quiet=args.quiet > 0, sources=sources)
    timeline.mark("report rendered")
    if args.quiet < 2:
        _emit(text, args.output_file)
    for error in result.errors:
        print(f"cslint: error: {error.path}: {error.message}", file=sys.stderr)
    if result.errors:
        return EXIT_ERROR
    if result.findings and not args.exit_zero:
        return EXIT_FINDINGS
    return EXIT_CLEAN


def _show(args: argparse.Namespace) -> int:
    """``--show-files`` / ``--show-settings``: what a run would check, and with which settings."""
    from .engine.discovery import discover_files, settings_resolver
    from .presets import load_presets
    from .report.common import display_path
    from .report.settings import render_settings

    select, ignore = _codes(args.select, "--select"), _codes(args.ignore, "--ignore")
    paths = _paths(args)
    settings_for = settings_resolver(_settings(args))
    if paths == [STDIN]:
        name = args.stdin_filename or STDIN
        files = [(name, settings_for(name if args.stdin_filename else "."))]
    else:
        for path in paths:
            if not os.path.lexists(path):
                raise UsageError(f"{path}: no such file or directory")
        found = discover_files(paths, settings_for, _discovery(args))
        for error in found.errors:
            print(f"cslint: error: {error.path}: {error.message}", file=sys.stderr)
        files = sorted(((f.path, f.settings) for f in found.files), key=lambda item: display_path(item[0], None))
    if args.show_files:
        for path, _settings_of in files:
            print(display_path(path, os.getcwd()))
        return EXIT_CLEAN
    if not files:
        raise UsageError("no file to show the settings of")
    path, settings = files[0]
    try:
        chosen = load_presets(settings.presets).unhandled_exceptions  # what an unset key resolves to
    except ValueError as exc:
        raise ConfigError(str(exc)) from exc
    print(render_settings(display_path(path, os.getcwd()), settings, select=select, ignore=ignore,
                          discovery=_discovery(args), report=args.report, min_confidence=args.min_confidence,
                          unhandled_exceptions=chosen), end="")
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
    timeline.mark("started")
    try:
        parser = build_parser(sys.argv[1:] if argv is None else argv)
        try:
            args = parser.parse_args(argv)
        except SystemExit as exc:  # argparse exits 2 on usage errors, 0 on --help
            return int(exc.code or 0)
        if not args.command:
            parser.print_help(sys.stderr)
            return EXIT_ERROR
        handler = getattr(args, "handler", None) or COMMANDS[args.command]
        return handler(args)
    except (UsageError, ConfigError) as exc:
        print(f"cslint: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("cslint: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Terminated:
        print("cslint: terminated", file=sys.stderr)
        return EXIT_TERMINATED
    except BrokenPipeError:
        return EXIT_CLEAN
    except Exception as exc:  # noqa: BLE001 - the contract is exit 2, never a bare traceback
        print(f"cslint: internal error: {type(exc).__name__}: {exc}", file=sys.stderr)
        if os.environ.get("CSLINT_DEBUG"):
            traceback.print_exc()
        else:
            print("cslint: set CSLINT_DEBUG=1 for the traceback", file=sys.stderr)
        return EXIT_ERROR


def _raise_terminated(_signum, _frame) -> None:
    raise Terminated()


def console_main() -> None:
    """The process entry point (``cslint``, ``python -m cslint``).

    A run is one short process.  The cyclic collector stays off: it would
    only walk the analysis' millions of objects once more after it.  And the
    process ends with ``os._exit`` once its output is flushed: tearing down
    the interpreter freed every object one by one, half a second on a large
    tree, for memory the exit returns anyway (and so does the end of the
    run: :func:`~cslint.engine.leave_to_exit`).

    SIGINT and SIGTERM end the run without a traceback, with the shell's
    status for them (130, 143); both unwind the stack first, so a fix being
    written removes its temporary file.
    """
    import gc

    from .engine import leave_to_exit

    gc.disable()
    leave_to_exit()
    try:
        signal.signal(signal.SIGTERM, _raise_terminated)
        status = main()
    except KeyboardInterrupt:  # between the handlers of main(), e.g. while importing
        print("cslint: interrupted", file=sys.stderr)
        status = EXIT_INTERRUPTED
    except Terminated:
        print("cslint: terminated", file=sys.stderr)
        status = EXIT_TERMINATED
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (BrokenPipeError, OSError):  # a reader that went away (``| head``)
            pass
    timeline.mark("exit")
    timeline.write()
    os._exit(status)


if __name__ == "__main__":
    console_main()
