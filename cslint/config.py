"""Configuration: ``[tool.cslint]`` in the nearest ``pyproject.toml``.

Discovery follows ruff: walking up from a checked path, the first
``pyproject.toml`` that holds a ``[tool.cslint]`` table wins.  A file without
the table is skipped (so a sub-package's unrelated pyproject does not hide the
project's settings).

    [tool.cslint]
    presets     = ["tensorrt_llm"]          # added to the default presets
    collectives = ["*.tp_allgather"]        # extra collective call patterns
    rank-local  = ["self.local_*"]          # extra divergent sources
    uniform     = ["self.cfg_*"]            # forced uniform
    select = ["CSL1"]; ignore = ["CSL103"]
    per-file-ignores = {"tests/*" = ["CSL"]}
    exclude = ["build/*"]; extend-exclude = [...]

Patterns are dotted expression texts with ``*`` wildcards, matched with
fnmatch against the dotted text of an expression (``self.local_*`` matches
``self.local_queue``).  A collective pattern may carry its group after a
colon: ``"*.my_gather:tp"``.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Iterable, Optional

from .model import CONFIDENCE_LEVELS

try:  # Python >= 3.11
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

DEFAULT_PRESETS = ("torch_distributed", "mpi4py", "vllm", "sglang", "deepspeed", "megatron", "accelerate", "lightning")
DEFAULT_EXCLUDE = (
    ".git", ".hg", ".svn", ".venv", "venv", ".tox", ".nox", "__pycache__",
    "build", "dist", "node_modules", ".mypy_cache", ".ruff_cache", ".cslint_cache",
    "site-packages",
)
KNOWN_KEYS = {
    "presets", "collectives", "rank-local", "uniform", "select", "ignore",
    "extend-select", "per-file-ignores", "exclude", "extend-exclude", "max-file-size",
    "force-exclude", "respect-gitignore", "report", "min-confidence", "unhandled-exceptions",
}
#: What an exception that leaves one rank does to the job (``unhandled-exceptions``).
UNHANDLED_EXCEPTIONS = ("crash", "hang")


class ConfigError(Exception):
    """A configuration the user must fix; the CLI prints it and exits 2."""


def known_codes() -> list[str]:
    """The codes of every rule, in order."""
    from .rules import all_rules

    return [rule.CODE for rule in all_rules()]


def unknown_selectors(selectors: Iterable[str]) -> list[str]:
    """The selectors that name no rule: a selector is a rule code or a
    prefix of one (``CSL``, ``CSL1``, ``CSL10``), as in ruff."""
    codes = known_codes()
    return [s for s in selectors if not s or not any(code.startswith(s.upper()) for code in codes)]


def check_selectors(selectors: Iterable[str], where: str) -> None:
    """Raise :class:`ConfigError` naming the first selector that names no rule
    (``where`` says where it came from: an option or a configuration key)."""
    unknown = unknown_selectors(selectors)
    if unknown:
        raise ConfigError(f"invalid value {unknown[0]!r} for {where}: unknown rule selector "
                          f"(rules: {', '.join(known_codes())})")


@dataclass
class Settings:
    """Resolved settings for one project root."""

    root: Optional[str] = None  # directory holding the pyproject.toml, if any
    config_file: Optional[str] = None
    presets: list[str] = field(default_factory=lambda: list(DEFAULT_PRESETS))
    collectives: list[str] = field(default_factory=list)
    rank_local: list[str] = field(default_factory=list)
    uniform: list[str] = field(default_factory=list)
    select: list[str] = field(default_factory=lambda: ["CSL"])
    ignore: list[str] = field(default_factory=list)
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)
    exclude: list[str] = field(default_factory=lambda: list(DEFAULT_EXCLUDE))
    max_file_size: int = 4 * 1024 * 1024  # bytes; larger files get CSL001
    #: apply ``exclude`` to paths named on the command line too (pre-commit names every file)
    force_exclude: bool = False
    #: skip the files git ignores (inside a git work tree)
    respect_gitignore: bool = True
    #: ``root-cause``: one finding per guard, listing the sites it decides;
    #: ``per-site``: one finding per collective call site (see cslint/rules/rootcause.py)
    report: str = "root-cause"
    #: the lowest confidence a finding may have and still be reported
    #: (``low`` reports everything; see :class:`cslint.model.Confidence`)
    min_confidence: str = "low"
    #: ``crash``: an exception that leaves one rank ends the job (the launcher tears it down);
    #: ``hang``: it leaves the other ranks waiting (caught upstream, or a launcher that does not
    #: tear down, as under MPI); "" lets the presets decide (``hang`` if any loaded one says so)
    unhandled_exceptions: str = ""

    # -- rule selection ---------------------------------------------------
    def code_enabled(self, code: str, path: Optional[str] = None) -> bool:
        """ruff semantics: the longest matching prefix of select/ignore wins."""
        best_sel = max((len(p) for p in self.select if code.startswith(p)), default=-1)
        best_ign = max((len(p) for p in self.ignore if code.startswith(p)), default=-1)
        if path is not None:
            rel = self.relative(path)
            for pattern, codes in self.per_file_ignores.items():
                if fnmatch.fnmatch(rel, pattern) or fnmatch.fnmatch(os.path.basename(rel), pattern):
                    best_ign = max(best_ign, max((len(p) for p in codes if code.startswith(p)), default=-1))
        return best_sel >= 0 and best_sel > best_ign

    def relative(self, path: str) -> str:
        if self.root:
            try:
                return os.path.relpath(os.path.abspath(path), self.root)
            except ValueError:  # pragma: no cover - other drive on Windows
                return path
        return path

    def is_excluded(self, path: str) -> bool:
        rel = Path(self.relative(path)).as_posix()
        parts = rel.split("/")
        # A pattern matches a single component ("build") or a leading
        # sub-path ("tests/fixtures", "third_party/*") of the relative path.
        prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
        for pattern in self.exclude:
            pattern = pattern.rstrip("/")
            if any(fnmatch.fnmatch(p, pattern) for p in parts) or any(fnmatch.fnmatch(p, pattern) for p in prefixes):
                return True
        return False

    def fingerprint(self) -> str:
        """Stable hash of everything that changes analysis results (cache key)."""
        known = self.__dict__.get("_fingerprint")
        if known is not None:  # settings are not changed once loaded
            return known
        data = asdict(self)
        data.pop("root", None)
        data.pop("config_file", None)
        found = self.__dict__["_fingerprint"] = hashlib.sha256(
            json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]
        return found


def _as_list(table: dict, key: str, where: str) -> list[str]:
    value = table.get(key, [])
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: `{key}` must be a list of strings")
    return list(value)


def settings_from_table(table: dict, root: Optional[str] = None, config_file: Optional[str] = None) -> Settings:
    """Build Settings from a ``[tool.cslint]`` table; unknown keys are errors."""
    where = config_file or "[tool.cslint]"
    unknown = sorted(set(table) - KNOWN_KEYS)
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) in [tool.cslint]: {', '.join(unknown)}")
    s = Settings(root=root, config_file=config_file)
    for preset in _as_list(table, "presets", where):
        if preset not in s.presets:
            s.presets.append(preset)
    s.collectives = _as_list(table, "collectives", where)
    s.rank_local = _as_list(table, "rank-local", where)
    s.uniform = _as_list(table, "uniform", where)
    if "select" in table:
        s.select = _selectors(table, "select", where)
    s.select += _selectors(table, "extend-select", where)
    s.ignore = _selectors(table, "ignore", where)
    pfi = table.get("per-file-ignores", {})
    if not isinstance(pfi, dict):
        raise ConfigError(f"{where}: `per-file-ignores` must be a table of pattern = [codes]")
    s.per_file_ignores = {str(k): _selectors(pfi, k, where, f"per-file-ignores.{k}") for k in pfi}
    if "exclude" in table:
        s.exclude = _as_list(table, "exclude", where)
    s.exclude += _as_list(table, "extend-exclude", where)
    if "max-file-size" in table:
        if not isinstance(table["max-file-size"], int) or table["max-file-size"] <= 0:
            raise ConfigError(f"{where}: `max-file-size` must be a positive integer (bytes)")
        s.max_file_size = table["max-file-size"]
    if "report" in table:
        if table["report"] not in ("root-cause", "per-site"):
            raise ConfigError(f'{where}: `report` must be "root-cause" or "per-site"')
        s.report = table["report"]
    if "min-confidence" in table:
        if table["min-confidence"] not in CONFIDENCE_LEVELS:
            raise ConfigError(f"{where}: `min-confidence` must be one of {', '.join(map(repr, CONFIDENCE_LEVELS))}")
        s.min_confidence = table["min-confidence"]
    if "unhandled-exceptions" in table:
        if table["unhandled-exceptions"] not in UNHANDLED_EXCEPTIONS:
            raise ConfigError(f'{where}: `unhandled-exceptions` must be "crash" or "hang"')
        s.unhandled_exceptions = table["unhandled-exceptions"]
    for key in ("force-exclude", "respect-gitignore"):
        if key in table:
            if not isinstance(table[key], bool):
                raise ConfigError(f"{where}: `{key}` must be true or false")
            setattr(s, key.replace("-", "_"), table[key])
    return s


def _selectors(table: dict, key: str, where: str, name: Optional[str] = None) -> list[str]:
    """A list of rule selectors (upper-cased); one that names no rule is an error."""
    values = [v.strip().upper() for v in _as_list(table, key, where)]
    check_selectors(values, f"`{name or key}` in {where}")
    return values


def find_config_file(start: str, memo: Optional[dict] = None) -> Optional[Path]:
    """The nearest pyproject.toml with a [tool.cslint] table, walking up.
    ``memo`` (directory -> answer) lets one run ask for many directories of
    one tree without walking the same parents again."""
    here = Path(start).resolve()
    if here.is_file() or not here.exists():
        here = here.parent
    visited = []
    found = None
    for directory in (here, *here.parents):
        if memo is not None and directory in memo:
            found = memo[directory]
            break
        visited.append(directory)
        candidate = directory / "pyproject.toml"
        if candidate.is_file():
            try:
                data = tomllib.loads(candidate.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
                raise ConfigError(f"{candidate}: cannot read configuration: {exc}") from exc
            if isinstance(data.get("tool"), dict) and "cslint" in data["tool"]:
                found = candidate
                break
    if memo is not None:
        for directory in visited:
            memo[directory] = found
    return found


def load_settings(start: str = ".", config_file: Optional[str] = None, memo: Optional[dict] = None) -> Settings:
    """Settings for the project containing `start` (or from an explicit file).
    With ``memo``, directories that share a configuration file share one
    Settings object."""
    path = Path(config_file) if config_file else find_config_file(start, memo)
    if memo is not None:
        known = memo.get(("settings", str(path)))
        if known is not None:
            return known
        loaded = load_settings(config_file=str(path)) if path is not None else Settings()
        memo[("settings", str(path))] = loaded
        return loaded
    if path is None:
        return Settings()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ConfigError(f"{path}: no such configuration file") from exc
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read configuration: {exc}") from exc
    tool = data.get("tool")
    if not isinstance(tool, dict) or "cslint" not in tool:
        # An explicit --config that holds no cslint settings is a mistake
        # (a wrong file, or a typo in the table name), not "use the defaults".
        raise ConfigError(f"{path}: no [tool.cslint] table; a configuration file must hold cslint's settings")
    table = tool["cslint"]
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.cslint] must be a table")
    return settings_from_table(table, root=str(path.parent.resolve()), config_file=str(path))


#: wildcard pattern(s) -> the match of their compiled translation (:func:`text_matches`, :func:`pattern_matches`)
_MATCHERS: dict = {}


def _matcher(patterns: tuple):
    """``fnmatch.fnmatchcase`` of one of ``patterns`` as one compiled match (each translation is anchored at
    both ends, so the alternation matches a text where one of them matches it)."""
    found = _MATCHERS.get(patterns)
    if found is None:
        found = _MATCHERS[patterns] = re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in patterns)).match
    return found


def text_matches(texts, pattern: str) -> bool:
    """``any(fnmatch.fnmatchcase(text, pattern) for text in texts)``, the pattern compiled once (not a call to
    ``fnmatchcase`` and its cache a text)."""
    match = _MATCHERS.get((pattern,)) or _matcher((pattern,))
    for text in texts:
        if match(text) is not None:
            return True
    return False


def pattern_matches(text: str, patterns) -> bool:
    """``any(fnmatch.fnmatchcase(text, p) for p in patterns)``, as one match of the patterns compiled together."""
    key = tuple(patterns)
    return bool(key) and (_MATCHERS.get(key) or _matcher(key))(text) is not None


def matches_any(dotted: str, patterns: Iterable[str]) -> bool:
    """Whether a dotted expression text matches one of the wildcard patterns."""
    return any(fnmatch.fnmatchcase(dotted, p.split(":", 1)[0]) for p in patterns)
