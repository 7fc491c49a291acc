"""``apply``: lint a TensorRT-LLM tree, fix the executor code, write a reviewable patch.

One analysis over the whole ``tensorrt_llm/`` package (so wrappers such as
``_allgather_model_parallel_status`` are known to be collectives wherever they
are called), then the codemods over the files selected by ``include`` (the
executor code by default).  Nothing here knows a function name, a line number
or a function body of TensorRT-LLM: what gets changed is exactly what the
analysis reports in the version at hand, and the report says so.

Outputs (see ``docs/tensorrt_llm_patch.md``):

* ``out=DIR``: ``DIR`` receives a mirror of the changed files at their
  tree-relative paths (or, with ``full_copy=True``, a complete copy of the tree
  with the fixes applied, runnable in place), ``patch.diff``, ``report.md`` and
  ``report.json``.  ``DIR`` must not exist or be empty; it is built in a
  temporary sibling directory and renamed into place, so an error leaves
  nothing behind.
* ``write=True``: the tree's files are replaced atomically, each original kept
  as ``<file>.orig`` (an existing ``.orig`` is never overwritten: it holds the
  oldest original), and the reports go to ``<tree>/.tensorrt_llm_patch/``
  (or ``report_dir``).  Every new file is staged before the first replace.
* neither: a dry run; the returned :class:`ApplyReport` holds the diff.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
import shutil
import stat
import tempfile
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cslint.diffs import unified_diff
from cslint.model import CONFIDENCE_LEVELS, CheckResult, FileError, Finding
from cslint.paths import under_root

from .locate import PACKAGE, LocateError, TreeInfo, find_installed, identify_tree

if TYPE_CHECKING:  # the codemods are imported when a plan is made, not with this module
    from codemods.driver import AppliedFix, FixPlan, RefusedFix
    from cslint.config import Settings

DEFAULT_INCLUDE = (
    "tensorrt_llm/_torch/pyexecutor/",
    "tensorrt_llm/_torch/disaggregation/",
    "tensorrt_llm/_torch/pyexecutor/scheduler/",
)
STRATEGIES = ("auto", "always-enter", "propagate", "consensus")
EXIT_MODES = ("keep-local", "decide-from-gathered")
REPORT_DIR_NAME = ".tensorrt_llm_patch"
REPORT_FILES = ("patch.diff", "report.md", "report.json")
PRESET = "tensorrt_llm"
# Never copied by full_copy: version control, caches and build outputs.
COPY_IGNORE = (".git", ".hg", ".svn", "__pycache__", ".cslint_cache", ".pytest_cache", ".mypy_cache",
               ".ruff_cache", "*.pyc", REPORT_DIR_NAME)

# Outcomes a hazard can have in the report.
FIXED = "fixed"
REFUSED = "refused"
HELD_BACK = "held-back"  # an unsafe fix exists but unsafe fixes were not allowed
OUTSIDE = "outside-include"  # analysed for facts, not selected for rewriting
NOT_ANALYSABLE = "not-analysable"  # CSL001
NOT_PLANNED = "not-planned"  # the codemods returned neither a fix nor a refusal
REVIEW = "review"  # the analysis is not sure enough of the finding to rewrite its site

#: the confidence a finding needs before its site is rewritten (see cslint.model.Confidence)
DEFAULT_MIN_CONFIDENCE = "medium"


class PatchError(Exception):
    """An input or target problem; ``kind`` selects the exit status (see ``__main__``)."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


@dataclass
class Hazard:
    """One finding as the report shows it: where, why, and what was done."""

    finding: Finding
    relpath: str
    outcome: str
    strategy: str | None = None
    safe: bool | None = None
    reason: str = ""
    effect: str = ""  # what every rank now does at the site (fixed sites)

    def key(self) -> tuple:
        """The site's identity (see :meth:`cslint.model.FindingIdentity.site_key`)."""
        return self.finding.identity(self.relpath).site_key()

    def to_json(self, root: Path) -> dict:
        f = self.finding
        data = f.to_json()
        data["path"] = self.relpath
        data["chain"] = [
            {"path": _rel(link.path, root), "line": link.line, "note": link.note, "kind": link.kind}
            for link in f.chain
        ]
        hint = f.fix
        data["recommended_fix"] = {"strategy": hint.strategy, "safe": hint.safe, "reason": hint.reason} if hint else None
        data["outcome"] = self.outcome
        data["applied_strategy"] = self.strategy
        data["safe"] = self.safe
        data["reason"] = self.reason
        data["key"] = list(self.key())
        from .report import every_rank_now

        data["every_rank_now"] = every_rank_now(self)
        return data


@dataclass
class ChangedFile:
    relpath: str
    original_sha256: str
    patched_sha256: str
    fixes: int


@dataclass
class ApplyReport:
    """What one apply run found and did."""

    tree: Path
    tree_info: TreeInfo
    status: str  # patched | nothing-to-do | dry-run
    findings: list[Finding] = field(default_factory=list)  # every finding in the analysed tree
    hazards: list[Hazard] = field(default_factory=list)
    applied: list[AppliedFix] = field(default_factory=list)
    refused: list[RefusedFix] = field(default_factory=list)
    changed_files: list[ChangedFile] = field(default_factory=list)
    out_dir: Path | None = None
    report_dir: Path | None = None
    diff: str = ""
    include: list[str] = field(default_factory=list)
    analysed_paths: list[str] = field(default_factory=list)
    files_analysed: int = 0
    errors: list[FileError] = field(default_factory=list)
    strategy: str = "auto"
    exit_mode: str = "keep-local"
    unsafe_fixes: bool = True
    min_confidence: str = DEFAULT_MIN_CONFIDENCE
    full_copy: bool = False
    write: bool = False
    timings: dict[str, float] = field(default_factory=dict)
    wall_time_s: float = 0.0
    presets: list[str] = field(default_factory=list)
    backups: list[str] = field(default_factory=list)

    @property
    def nothing_to_do(self) -> bool:
        return not self.changed_files

    def sites(self) -> list[dict]:
        """The rewritten sites: the fixed hazards grouped by the guard their fix rewrote, each with
        why it is a hazard (the chain of its first finding), the strategy, what every rank now does
        and what it costs."""
        from .report import every_rank_now

        groups: dict[tuple, list[Hazard]] = {}
        for hazard in self.hazards:
            if hazard.outcome == FIXED:
                guard = hazard.finding.guard
                groups.setdefault((hazard.relpath, hazard.finding.function, guard.line if guard else hazard.finding.line),
                                  []).append(hazard)
        out = []
        for (relpath, function, line), members in sorted(groups.items()):
            first = members[0]
            out.append({
                "path": relpath, "function": function, "guard_line": line, "condition": first.finding.condition,
                "strategy": first.strategy, "safe": first.safe, "every_rank_now": every_rank_now(first),
                "cost": _COSTS.get(first.strategy or "", ""),
                "confidence": first.finding.confidence.level if first.finding.confidence else None,
                "findings": [{"line": h.finding.line, "code": h.finding.code, "callee": h.finding.callee,
                              "collective": h.finding.collective, "group": h.finding.group} for h in members],
                "why": [{"path": _rel(link.path, self.tree), "line": link.line, "note": link.note}
                        for link in first.finding.chain],
                "reason": first.reason,
            })
        return out

    def counts_by_rule(self) -> dict[str, int]:
        return dict(sorted(Counter(h.finding.code for h in self.hazards).items()))

    def counts_by_outcome(self) -> dict[str, int]:
        return dict(sorted(Counter(h.outcome for h in self.hazards).items()))

    def counts_by_rule_outcome(self) -> dict[str, dict[str, int]]:
        table: dict[str, Counter] = {}
        for h in self.hazards:
            table.setdefault(h.finding.code, Counter())[h.outcome] += 1
        return {code: dict(sorted(c.items())) for code, c in sorted(table.items())}

    def to_json(self) -> dict:
        root = self.tree
        return {
            "tool": "tensorrt_llm_patch",
            "report_version": 1,
            "status": self.status,
            "tree": str(root),
            "origin": self.tree_info.origin,
            "tensorrt_llm_version": self.tree_info.version,
            "version_source": self.tree_info.version_source,
            "git_describe": self.tree_info.git_describe or None,
            "analysed_paths": list(self.analysed_paths),
            "analysed_files": self.files_analysed,
            "presets": list(self.presets),
            "include": list(self.include),
            "strategy": self.strategy,
            "exit_mode": self.exit_mode,
            "unsafe_fixes": self.unsafe_fixes,
            "min_confidence": self.min_confidence,
            "mode": "write" if self.write else ("out" if self.out_dir else "dry-run"),
            "full_copy": self.full_copy,
            "out_dir": str(self.out_dir) if self.out_dir else None,
            "wall_time_s": round(self.wall_time_s, 3),
            "timings_s": {k: round(v, 3) for k, v in self.timings.items()},
            "counts": {
                "hazards": len(self.hazards),
                "by_rule": self.counts_by_rule(),
                "by_outcome": self.counts_by_outcome(),
                "by_rule_outcome": self.counts_by_rule_outcome(),
                "fixes_applied": sum(1 for h in self.hazards if h.outcome == FIXED),
                "changed_files": len(self.changed_files),
            },
            "changed_files": [
                {"path": c.relpath, "original_sha256": c.original_sha256, "patched_sha256": c.patched_sha256,
                 "fixes": c.fixes}
                for c in self.changed_files
            ],
            "backups": list(self.backups),
            "sites": self.sites(),
            "hazards": [h.to_json(root) for h in self.hazards],
            "errors": [{"path": _rel(e.path, root), "message": e.message} for e in self.errors],
        }


# --------------------------------------------------------------------------- helpers


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", errors="surrogateescape")).hexdigest()


def _rel(path: str, root: Path) -> str:
    """``path`` relative to the tree root, POSIX style; unchanged if outside it."""
    return under_root(path, str(root), resolve=True) or str(path)


def normalize_include(include: Iterable[str] | None) -> list[str]:
    if include is None:
        return list(DEFAULT_INCLUDE)
    result = []
    for item in include:
        item = item.strip().replace(os.sep, "/")
        while item.startswith("./"):
            item = item[2:]
        if item:
            result.append(item)
    return result


def is_included(relpath: str, include: list[str]) -> bool:
    """A directory entry (``dir/``, or no wildcard and a path prefix) selects everything under it."""
    for pattern in include:
        if any(ch in pattern for ch in "*?["):
            if fnmatch.fnmatchcase(relpath, pattern) or fnmatch.fnmatchcase(relpath, pattern.rstrip("/") + "/*"):
                return True
        else:
            prefix = pattern.rstrip("/")
            if relpath == prefix or relpath.startswith(prefix + "/"):
                return True
    return False


def _read_only_reason(path: Path) -> str | None:
    """Why ``path`` must not be written, or None.

    Permission bits are honoured even where the process could override them
    (root): a file or directory marked read-only is a deliberate choice.
    """
    try:
        st = path.stat()
    except OSError as exc:
        return f"{path}: cannot stat: {exc.strerror or exc}"
    if not os.access(path, os.W_OK):
        return f"{path}: not writable"
    if not st.st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH):
        return f"{path}: marked read-only"
    return None


def _settings_for(root: Path, base_settings: Settings | None = None) -> Settings:
    from cslint.config import ConfigError, load_settings

    if base_settings is None:
        try:
            settings = load_settings(str(root))
        except ConfigError as exc:
            raise PatchError("analysis", f"configuration error: {exc}") from exc
    else:
        settings = base_settings
    if PRESET not in settings.presets:
        settings.presets = list(settings.presets) + [PRESET]
    return settings


def analysed_paths_for(info: TreeInfo, is_trtllm: bool) -> list[Path]:
    """The whole package (a checkout's tests and examples are not executor code)."""
    if is_trtllm:
        return [info.root / PACKAGE]
    return [info.root]


DEEP_RECURSION_LIMIT = 100_000
DEEP_STACK_BYTES = 512 * 1024 * 1024


def _check_with_deep_stack(check_paths: Any, args: list[str], settings: Any, jobs: int | None, discovery: Any):
    """Run the analysis in a thread with a large stack and recursion limit.

    Long def-use chains in an 8,000-line executor can take the analysis past
    Python's default recursion limit; retrying with room to spare is cheaper
    than failing the whole run.
    """
    import sys
    import threading

    outcome: dict[str, Any] = {}

    def work() -> None:
        try:
            outcome["result"] = check_paths(args, settings=settings, jobs=jobs, cache=False, report="per-site",
                                            discovery=discovery)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the calling thread
            outcome["error"] = exc

    old_limit = sys.getrecursionlimit()
    old_stack = threading.stack_size()
    try:
        sys.setrecursionlimit(max(old_limit, DEEP_RECURSION_LIMIT))
        threading.stack_size(DEEP_STACK_BYTES)
        worker = threading.Thread(target=work, name="tensorrt_llm_patch-analysis")
        worker.start()
        worker.join()
    finally:
        threading.stack_size(old_stack)
        sys.setrecursionlimit(old_limit)
    if "error" in outcome:
        raise outcome["error"]
    return outcome["result"]


def run_check(paths: list[Path], settings: Settings, jobs: int | None = None) -> CheckResult:
    """cslint over ``paths``; an analysis crash becomes a PatchError, never a traceback."""
    from cslint.api import check_paths
    from cslint.engine.discovery import DiscoveryOptions

    args = [str(p) for p in paths]
    # The tree handed over is analysed whole, whatever a repository around it
    # ignores: a patched copy in an ignored output folder (``demo-out/patch``)
    # is exactly what ``verify`` must lint again, and skipping its files would
    # make every fixed site look gone.
    whole_tree = DiscoveryOptions(respect_gitignore=False)
    try:
        try:
            return check_paths(args, settings=settings, jobs=jobs, cache=False, report="per-site",
                               discovery=whole_tree)
        except RecursionError:
            return _check_with_deep_stack(check_paths, args, settings, jobs, whole_tree)
    except Exception as exc:
        raise PatchError("analysis", f"analysis failed: {type(exc).__name__}: {exc}") from exc


def resolve_tree(tree: str | Path | None, installed: bool = False, require_trtllm: bool = True) -> tuple[TreeInfo, bool]:
    """(tree info, whether it has TensorRT-LLM's layout)."""
    try:
        if installed:
            return find_installed(), True
        if tree is None:
            raise PatchError("usage", "give a tree (--tree PATH) or --installed")
        try:
            return identify_tree(tree), True
        except LocateError as exc:
            if exc.kind == "not-trtllm" and not require_trtllm and Path(tree).is_dir():
                root = Path(tree).resolve()
                return TreeInfo(root=root, version="n/a (not a TensorRT-LLM tree)", version_source="",
                                origin="checkout"), False
            raise
    except LocateError as exc:
        raise PatchError(exc.kind, str(exc)) from exc


# --------------------------------------------------------------------------- main entry


def apply_tree(
    tree: str | Path | None,
    *,
    out: str | Path | None = None,
    write: bool = False,
    include: list[str] | None = None,
    strategy: str = "auto",
    exit_mode: str = "keep-local",
    full_copy: bool = False,
    unsafe_fixes: bool = True,
    installed: bool = False,
    report_dir: str | Path | None = None,
    require_trtllm: bool = True,
    settings: Settings | None = None,
    jobs: int | None = None,
    min_confidence: str = DEFAULT_MIN_CONFIDENCE,
) -> ApplyReport:
    """Lint ``tree``, fix the included executor files and write the outputs.

    Returns the :class:`ApplyReport`; raises :class:`PatchError` (with nothing
    written) on bad input or an unusable target.  ``status`` is ``patched``
    when files changed, ``nothing-to-do`` when no fix applies (an already
    patched or a clean tree; reports are still written), ``dry-run`` when
    neither ``out`` nor ``write`` was given.  ``unsafe_fixes=False`` applies
    only fixes labelled safe; the others are reported as held back.
    ``require_trtllm=False`` accepts any directory (the whole of it is
    analysed; ``include`` should then be given).  A finding whose
    confidence is below ``min_confidence`` is not rewritten: the report
    lists it as ``review``, with the analysis' doubts.
    """
    started = time.perf_counter()
    if strategy not in STRATEGIES:
        raise PatchError("usage", f"unknown strategy {strategy!r}; choose from {', '.join(STRATEGIES)}")
    if exit_mode not in EXIT_MODES:
        raise PatchError("usage", f"unknown exit mode {exit_mode!r}; choose from {', '.join(EXIT_MODES)}")
    if min_confidence not in CONFIDENCE_LEVELS:
        raise PatchError("usage", f"unknown confidence {min_confidence!r}; choose from {', '.join(CONFIDENCE_LEVELS)}")
    if out is not None and write:
        raise PatchError("usage", "give either an output directory or write=True, not both")
    if full_copy and out is None:
        raise PatchError("usage", "full_copy needs an output directory")
    info, is_trtllm = resolve_tree(tree, installed=installed, require_trtllm=require_trtllm)
    root = info.root
    include_list = normalize_include(include)
    out_path = Path(out).expanduser().resolve() if out is not None else None
    if out_path is not None:
        _check_out_target(out_path, root)
    report_path = None
    if write:
        report_path = Path(report_dir).expanduser().resolve() if report_dir else root / REPORT_DIR_NAME

    settings = _settings_for(root, settings)
    paths = analysed_paths_for(info, is_trtllm)
    t0 = time.perf_counter()
    result = run_check(paths, settings, jobs=jobs)
    t_analysis = time.perf_counter() - t0

    report = ApplyReport(
        tree=root, tree_info=info, status="dry-run", include=include_list, strategy=strategy,
        exit_mode=exit_mode, unsafe_fixes=unsafe_fixes, min_confidence=min_confidence, full_copy=full_copy,
        write=write,
        analysed_paths=[_rel(str(p), root) if p != root else "." for p in paths],
        files_analysed=result.files, errors=list(result.errors), presets=list(settings.presets),
    )
    report.findings = list(result.findings)

    t1 = time.perf_counter()
    plan, held_back = _plan(result, root, include_list, strategy, exit_mode, unsafe_fixes, min_confidence)
    t_codemods = time.perf_counter() - t1
    report.hazards = _classify(result.findings, plan, held_back, root, include_list, min_confidence)
    report.applied = list(plan.applied) if plan else []
    report.refused = list(plan.refused) if plan else []

    fixes_per_file = Counter(_rel(a.finding.path, root) for a in report.applied)
    changed: list[tuple[str, str, str]] = []
    for file_fix in (plan.files if plan else []):
        if file_fix.fixed != file_fix.original:
            rel = _rel(file_fix.path, root)
            changed.append((rel, file_fix.original, file_fix.fixed))
    changed.sort()
    report.changed_files = [
        ChangedFile(rel, sha256_text(orig), sha256_text(fixed), fixes_per_file.get(rel, 0))
        for rel, orig, fixed in changed
    ]
    report.diff = "".join(unified_diff(orig, fixed, rel, git_header=True) for rel, orig, fixed in changed)
    report.status = "patched" if changed else "nothing-to-do"
    if out_path is None and not write:
        report.status = "dry-run" if changed else "nothing-to-do"

    t2 = time.perf_counter()
    report.timings = {"analysis": t_analysis, "codemods": t_codemods}
    if out_path is not None:
        report.out_dir = out_path
        report.report_dir = out_path
        _write_out(report, changed, out_path, full_copy, is_trtllm, started, t2)
    elif write:
        report.report_dir = report_path
        _write_in_place(report, changed, report_path, started, t2)
    else:
        report.timings["write"] = 0.0
        report.wall_time_s = time.perf_counter() - started
    return report


#: what each strategy adds to the path it rewrites
_COSTS = {
    "consensus": "one more collective each time the site runs",
    "always-enter": "no new collective (the ranks that skipped it enter the existing one)",
    "propagate": "no collective added (the condition travels in an existing broadcast)",
}


def sure_enough(finding: Finding, min_confidence: str) -> bool:
    """Whether the analysis is sure enough of ``finding`` to rewrite its site."""
    return finding.confidence is None or finding.confidence.at_least(min_confidence)


def _plan(result: CheckResult, root: Path, include: list[str], strategy: str, exit_mode: str,
          unsafe_fixes: bool, min_confidence: str) -> tuple[FixPlan | None, list[AppliedFix]]:
    """The codemods' plan for the included findings the analysis is sure
    enough of; unsafe fixes held back unless allowed."""
    from codemods.driver import plan_fixes

    selected = [f for f in result.findings if f.code != "CSL001" and is_included(_rel(f.path, root), include)
                and sure_enough(f, min_confidence)]
    if not selected:
        return None, []
    try:
        plan = plan_fixes(CheckResult(files=result.files, findings=selected, errors=[]),
                          strategy=strategy, exit_mode=exit_mode, unsafe=unsafe_fixes)
        held_back = list(plan.held_back)
    except PatchError:
        raise
    except Exception as exc:
        raise PatchError("analysis", f"codemods failed: {type(exc).__name__}: {exc}") from exc
    return plan, held_back


def _classify(findings: list[Finding], plan: FixPlan | None, held_back: list[AppliedFix], root: Path,
              include: list[str], min_confidence: str = DEFAULT_MIN_CONFIDENCE) -> list[Hazard]:
    # the plan's outcomes hold the very findings of the check result
    applied = {id(a.finding): a for a in (plan.applied if plan else [])}
    refused = {id(r.finding): r for r in (plan.refused if plan else [])}
    held = {id(a.finding): a for a in held_back}
    hazards = []
    for f in sorted(findings, key=lambda x: (x.path, x.line, x.column, x.code)):
        rel = _rel(f.path, root)
        ident = id(f)
        if f.code == "CSL001":
            hazards.append(Hazard(f, rel, NOT_ANALYSABLE, reason=f.message))
        elif not is_included(rel, include):
            hazards.append(Hazard(f, rel, OUTSIDE,
                                  reason="outside the include set: analysed for cross-file facts, not rewritten"))
        elif not sure_enough(f, min_confidence):
            doubts = "; ".join(d.note for d in f.confidence.doubts)
            hazards.append(Hazard(f, rel, REVIEW,
                                  reason=f"confidence {f.confidence.level} (below {min_confidence}): {doubts}"))
        elif ident in applied:
            a = applied[ident]
            hazards.append(Hazard(f, rel, FIXED, strategy=a.strategy, safe=bool(a.safe), reason=a.reason,
                                  effect=a.effect))
        elif ident in held:
            a = held[ident]
            hazards.append(Hazard(f, rel, HELD_BACK, strategy=a.strategy, safe=False,
                                  reason=f"unsafe fix not applied (safe fixes only): {a.reason}"))
        elif ident in refused:
            hazards.append(Hazard(f, rel, REFUSED, reason=refused[ident].reason))
        else:
            hazards.append(Hazard(f, rel, NOT_PLANNED, reason="the codemods offered no fix for this finding"))
    return hazards


# --------------------------------------------------------------------------- writing


def _check_out_target(out_path: Path, root: Path) -> None:
    if out_path == root or root in out_path.parents:
        raise PatchError("not-writable", f"{out_path}: the output directory must be outside the tree")
    if out_path.exists():
        if not out_path.is_dir():
            raise PatchError("not-writable", f"{out_path}: exists and is not a directory")
        if any(out_path.iterdir()):
            raise PatchError("not-writable", f"{out_path}: output directory exists and is not empty")
        why = _read_only_reason(out_path)
        if why:
            raise PatchError("not-writable", why)
    parent = out_path.parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        raise PatchError("not-writable", f"{parent}: not a directory")
    why = _read_only_reason(parent)
    if why:
        raise PatchError("not-writable", f"cannot create {out_path}: {why}")


def _report_texts(report: ApplyReport) -> dict[str, str]:
    from .report import render_markdown

    return {
        "patch.diff": report.diff,
        "report.md": render_markdown(report),
        "report.json": json.dumps(report.to_json(), indent=2, sort_keys=False) + "\n",
    }


def _write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", errors="surrogateescape", newline="") as handle:
        handle.write(text)


def _copy_tree(src: Path, dst: Path) -> None:
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns(*COPY_IGNORE), symlinks=True, dirs_exist_ok=True)


def _write_out(report: ApplyReport, changed: list, out_path: Path, full_copy: bool, is_trtllm: bool,
               started: float, t_write: float) -> None:
    """Build everything in a temporary sibling, then rename it into place."""
    root = report.tree
    parent = out_path.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        stage = Path(tempfile.mkdtemp(prefix=f".{out_path.name}.tmp-", dir=parent))
    except OSError as exc:
        raise PatchError("not-writable", f"cannot create {out_path}: {exc.strerror or exc}") from exc
    try:
        if full_copy:
            if report.tree_info.origin == "installed" and is_trtllm:
                _copy_tree(root / PACKAGE, stage / PACKAGE)
            else:
                _copy_tree(root, stage)
        for rel, original, fixed in changed:
            target = stage / rel
            _write_text(target, fixed)
            source = root / rel
            try:
                shutil.copymode(source, target)
            except OSError:
                pass
        report.timings["write"] = time.perf_counter() - t_write
        report.wall_time_s = time.perf_counter() - started
        for name, text in _report_texts(report).items():
            _write_text(stage / name, text)
        os.chmod(stage, 0o777 & ~_current_umask())  # mkdtemp makes it private
        if out_path.exists():
            out_path.rmdir()  # checked empty before the run
        os.rename(stage, out_path)
    except BaseException as exc:
        shutil.rmtree(stage, ignore_errors=True)
        if isinstance(exc, OSError):
            raise PatchError("not-writable", f"cannot write {out_path}: {exc.strerror or exc}") from exc
        raise


def _write_in_place(report: ApplyReport, changed: list, report_path: Path, started: float, t_write: float) -> None:
    """Stage every new file next to its target, then replace; on a staging error remove the stages.

    With nothing to change, nothing is written: the report directory keeps the
    record of the run that patched the tree, which ``verify`` reads.
    """
    root = report.tree
    if not changed:
        report.timings["write"] = 0.0
        report.wall_time_s = time.perf_counter() - started
        return
    problems = []
    for rel, _original, _fixed in changed:
        target = root / rel
        for candidate in (target, target.parent):
            why = _read_only_reason(candidate)
            if why:
                problems.append(why)
    existing = report_path
    while not existing.exists():
        existing = existing.parent
    why = _read_only_reason(existing if existing.is_dir() else existing.parent)
    if why:
        problems.append(f"report directory {report_path}: {why}")
    if problems:
        raise PatchError("not-writable", "target is read-only, nothing written:\n  " + "\n  ".join(dict.fromkeys(problems)))

    staged: list[tuple[Path, Path]] = []  # (temporary file, final path)
    report_stage: Path | None = None
    backups = []
    try:
        for rel, original, fixed in changed:
            target = root / rel
            backup = target.with_name(target.name + ".orig")
            if not backup.exists():
                tmp = _stage_file(target, original)
                staged.append((tmp, backup))
                backups.append(_rel(str(backup), root))
            tmp = _stage_file(target, fixed)
            staged.append((tmp, target))
        report.backups = backups
        report.timings["write"] = time.perf_counter() - t_write
        report.wall_time_s = time.perf_counter() - started
        report_path.parent.mkdir(parents=True, exist_ok=True)
        report_stage = Path(tempfile.mkdtemp(prefix=f".{report_path.name}.tmp-", dir=report_path.parent))
        for name, text in _report_texts(report).items():
            _write_text(report_stage / name, text)
    except BaseException as exc:
        for tmp, _ in staged:
            tmp.unlink(missing_ok=True)
        if report_stage is not None:
            shutil.rmtree(report_stage, ignore_errors=True)
        if isinstance(exc, OSError):
            raise PatchError("not-writable", f"cannot stage the patched files: {exc.strerror or exc}") from exc
        raise
    # Commit: backups first, so a replaced file always has its original beside it.
    originals = {root / rel: original for rel, original, _fixed in changed}
    done: list[Path] = []
    try:
        for tmp, final in staged:
            os.replace(tmp, final)
            done.append(final)
        report_path.mkdir(parents=True, exist_ok=True)
        for name in REPORT_FILES:
            os.replace(report_stage / name, report_path / name)
    except OSError as exc:
        _roll_back(done, originals, staged)
        raise PatchError("not-writable", f"replacing the patched files failed, originals restored: "
                         f"{exc.strerror or exc}") from exc
    finally:
        shutil.rmtree(report_stage, ignore_errors=True)


def _roll_back(done: list[Path], originals: dict[Path, str], staged: list[tuple[Path, Path]]) -> None:
    """Undo a partly committed in-place write: restore replaced files, drop new backups."""
    for final in reversed(done):
        if final in originals:
            try:
                os.replace(_stage_file(final, originals[final]), final)
            except OSError:
                pass  # the .orig backup beside it still holds the original
        else:
            final.unlink(missing_ok=True)  # a backup this run created
    for tmp, _final in staged:
        tmp.unlink(missing_ok=True)


def _current_umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _stage_file(target: Path, text: str) -> Path:
    fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    tmp = Path(name)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", errors="surrogateescape", newline="") as handle:
            handle.write(text)
        try:
            shutil.copymode(target, tmp)
        except OSError:
            pass
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return tmp
