"""Baselines: accept today's findings, fail only on new ones.

    cslint check --write-baseline cslint-baseline.json   # record
    cslint check --baseline cslint-baseline.json         # report only new findings

A finding's fingerprint is keyed on what identifies the hazard, not where it
sits: the file (relative, posix), the enclosing function's qualified name,
the collective, the normalised controlling condition and the rule code.  No
line or column takes part, so edits that shift lines keep the baseline valid;
changing the condition, moving the collective to another function or renaming
the file makes the finding new.  Several findings with the same key in one
function are told apart by an occurrence index, counted in source order.

Paths in the baseline are relative to the directory holding the baseline file,
so the same file works whatever the working directory of the run.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable, Optional

from .config import ConfigError
from .model import CheckResult, Finding, normalise_condition
from .paths import relative_posix

BASELINE_VERSION = 1
FINGERPRINT_VERSION = "v1"


class BaselineError(ConfigError):
    """A baseline file that cannot be used; the CLI prints it and exits 2."""


@dataclass
class Baseline:
    """Loaded baseline: a multiset of fingerprints and the directory paths are relative to."""

    root: str
    fingerprints: Counter = field(default_factory=Counter)

    def __len__(self) -> int:
        return sum(self.fingerprints.values())


def _relative(path: str, root: Optional[str]) -> str:
    return relative_posix(path, root)


def fingerprint_key(finding: Finding, root: Optional[str] = None) -> str:
    """The identity of a finding without occurrence index (readable, for the baseline file)."""
    return "\x1f".join(finding.identity(_relative(finding.path, root)).finding_key())


def fingerprint(finding: Finding, root: Optional[str] = None, occurrence: int = 0) -> str:
    """Stable fingerprint of a finding; `root` is what its path is taken relative to (default: cwd).

    ``occurrence`` tells apart findings that share every keyed fact within one
    function (0 for the first in source order).
    """
    digest = hashlib.sha256(fingerprint_key(finding, root).encode("utf-8")).hexdigest()[:32]
    return f"{FINGERPRINT_VERSION}:{digest}:{occurrence}"


def fingerprints(findings: Iterable[Finding], root: Optional[str] = None) -> list[tuple[Finding, str]]:
    """Each finding with its fingerprint, occurrence indices assigned in source order."""
    seen: Counter = Counter()
    out: list[tuple[Finding, str]] = []
    for finding in sorted(findings, key=Finding.sort_key):
        key = fingerprint_key(finding, root)
        out.append((finding, fingerprint(finding, root, seen[key])))
        seen[key] += 1
    return out


def write_baseline(result: CheckResult, path: str) -> None:
    """Record every finding of `result` in the baseline file at `path` (atomic replace)."""
    root = os.path.dirname(os.path.abspath(path))
    entries = []
    for finding, print_ in fingerprints(result.findings, root):
        entries.append(
            {
                "fingerprint": print_,
                "code": finding.code,
                "path": _relative(finding.path, root),
                "function": finding.function,
                "collective": finding.collective,
                "condition": normalise_condition(finding.condition),
                # informational only: never used for matching
                "line": finding.line,
                "message": finding.message,
            }
        )
    document = {"version": BASELINE_VERSION, "tool": "cslint", "findings": entries}
    os.makedirs(root, exist_ok=True)
    temporary = f"{path}.tmp{os.getpid()}"
    try:
        with open(temporary, "w", encoding="utf-8") as handle:
            json.dump(document, handle, indent=2, ensure_ascii=False)
            handle.write("\n")
        os.replace(temporary, path)
    except OSError as exc:
        raise BaselineError(f"{path}: cannot write baseline: {exc.strerror or exc}") from exc
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)


def load_baseline(path: str) -> Baseline:
    """Read a baseline file; a missing or malformed file raises :class:`BaselineError`."""
    try:
        with open(path, encoding="utf-8") as handle:
            document = json.load(handle)
    except FileNotFoundError as exc:
        raise BaselineError(f"{path}: no such baseline file (create one with --write-baseline)") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise BaselineError(f"{path}: cannot read baseline: {exc}") from exc
    except json.JSONDecodeError as exc:
        raise BaselineError(f"{path}: not a cslint baseline (invalid JSON at line {exc.lineno}: {exc.msg})") from exc
    if not isinstance(document, dict) or document.get("tool") != "cslint" or "findings" not in document:
        raise BaselineError(f"{path}: not a cslint baseline (expected an object with \"tool\": \"cslint\" and \"findings\")")
    if document.get("version") != BASELINE_VERSION:
        raise BaselineError(
            f"{path}: unsupported baseline version {document.get('version')!r} (this cslint reads version {BASELINE_VERSION}); "
            "re-create it with --write-baseline"
        )
    entries = document["findings"]
    if not isinstance(entries, list):
        raise BaselineError(f"{path}: \"findings\" must be a list")
    baseline = Baseline(root=os.path.dirname(os.path.abspath(path)))
    for index, entry in enumerate(entries):
        value = entry.get("fingerprint") if isinstance(entry, dict) else None
        if not isinstance(value, str) or not value.startswith(FINGERPRINT_VERSION + ":"):
            raise BaselineError(f"{path}: finding #{index + 1} has no valid \"fingerprint\"")
        baseline.fingerprints[value] += 1
    return baseline


def filter_new(result: CheckResult, baseline: Baseline) -> CheckResult:
    """A copy of `result` holding only the findings the baseline does not cover."""
    remaining = Counter(baseline.fingerprints)
    new: list[Finding] = []
    for finding, print_ in fingerprints(result.findings, baseline.root):
        if remaining[print_] > 0:
            remaining[print_] -= 1
        else:
            new.append(finding)
    return CheckResult(files=result.files, findings=new, errors=list(result.errors))
