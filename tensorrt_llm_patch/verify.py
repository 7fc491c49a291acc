"""``verify``: the patched files compile and re-linting shows the fixed hazards gone.

Three ways to say what was patched:

* ``verify_tree(T)`` where ``T`` was patched in place (``apply --write``): the
  record ``T/.tensorrt_llm_patch/report.json`` lists the changed files and the
  fixed hazards.
* ``verify_tree(T, against=OUT)`` where ``OUT`` is an apply output directory
  (it holds ``report.json``): ``T`` may be the patched tree (a full copy, or a
  checkout after ``git apply``) or the original tree, in which case the
  mirrored files of ``OUT`` are overlaid on a temporary copy of ``T``.
* ``verify_tree(T, against=ORIG)`` where ``ORIG`` is the unpatched tree: the
  patched files are those whose text differs; both trees are linted, and the
  hazards that disappeared are the fixed ones.

Hazards are matched by file, function and the text of the call, never by
line (the fixes move lines).  The check passes when every patched file
compiles, no site recorded as fixed is reported again and no new site appears,
except behind a guard the record reports as left unfixed (listed separately).

"""

from __future__ import annotations

import json
import py_compile
import shutil
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cslint.model import Finding

from .apply import (
    COPY_IGNORE,
    FIXED,
    PACKAGE,
    REPORT_DIR_NAME,
    PatchError,
    _rel,
    _settings_for,
    resolve_tree,
    run_check,
    sha256_text,
)
from .locate import LocateError, identify_tree


@dataclass
class VerifyReport:
    tree: Path
    mode: str  # record | overlay | original
    patched_files: list[str] = field(default_factory=list)
    compile_errors: list[str] = field(default_factory=list)
    still_reported: list[dict] = field(default_factory=list)  # hazards recorded fixed, reported again
    new_hazards: list[dict] = field(default_factory=list)
    consequences: list[dict] = field(default_factory=list)  # new sites behind a guard left unfixed
    fixed: list[dict] = field(default_factory=list)  # recorded fixed and gone
    #: hazards still reported that the record says were left, each with why
    #: (outcome review / refused / held-back / outside-include, and the reason)
    left: list[dict] = field(default_factory=list)
    remaining: int = 0  # hazards reported after the patch (expected ones included)
    relint_error: str = ""  # the re-lint itself failed (analysis error); compile results still stand
    files_analysed: int = 0
    wall_time_s: float = 0.0
    notes: list[str] = field(default_factory=list)

    @property
    def compiles(self) -> bool:
        return not self.compile_errors

    @property
    def relint_ok(self) -> bool:
        return not self.relint_error and not self.still_reported and not self.new_hazards

    @property
    def ok(self) -> bool:
        return self.compiles and self.relint_ok

    def to_json(self) -> dict:
        return {
            "tree": str(self.tree), "mode": self.mode, "ok": self.ok, "compiles": self.compiles,
            "relint_ok": self.relint_ok, "patched_files": self.patched_files,
            "compile_errors": self.compile_errors, "fixed": self.fixed,
            "still_reported": self.still_reported, "new_hazards": self.new_hazards,
            "consequences_of_unfixed": self.consequences, "left": self.left,
            "remaining": self.remaining, "files_analysed": self.files_analysed,
            "relint_error": self.relint_error or None,
            "wall_time_s": round(self.wall_time_s, 3), "notes": self.notes,
        }


def _key_dict(key: tuple) -> dict:
    path, function, callee = key
    return {"path": path, "function": function, "callee": callee}


def _finding_dict(finding: Finding, relpath: str) -> dict:
    return {"path": relpath, "line": finding.line, "code": finding.code, "function": finding.function,
            "callee": finding.callee, "collective": finding.collective, "group": finding.group,
            "condition": finding.condition, "message": finding.message}


def _split_new(new: list[tuple[tuple, Finding, str]], unfixed_conditions: set) -> tuple[list[dict], list[dict]]:
    """Split re-lint hits into (real problems, consequences of a hazard that stays unfixed).

    The analysis reports one controlling guard per call.  Once a fix removes
    that guard, or adds a collective (a consensus gather), the call can show
    up under another guard of the same function that the record already
    reports as not fixed: not a failed fix or a new problem, but the same
    unfixed hazard seen from another call.
    """
    really_new, consequences = [], []
    for _key, finding, relpath in new:
        entry = _finding_dict(finding, relpath)
        if (relpath, finding.function, finding.condition) in unfixed_conditions:
            consequences.append(entry)
        else:
            really_new.append(entry)
    return really_new, consequences


def _load_record(directory: Path) -> dict | None:
    candidate = directory / "report.json"
    if not candidate.is_file():
        return None
    try:
        data = json.loads(candidate.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise PatchError("nothing-to-verify", f"{candidate}: unreadable apply record: {exc}") from exc
    if not isinstance(data, dict) or data.get("tool") != "tensorrt_llm_patch":
        raise PatchError("nothing-to-verify", f"{candidate}: not a tensorrt_llm_patch report")
    return data


def _compile_all(view_root: Path, files: list[str]) -> list[str]:
    errors = []
    with tempfile.TemporaryDirectory(prefix="tensorrt_llm_patch-pyc-") as scratch:
        for index, rel in enumerate(files):
            path = view_root / rel
            if not path.is_file():
                errors.append(f"{rel}: missing")
                continue
            try:
                # cfile in a scratch directory: verifying must not leave __pycache__ in the tree.
                py_compile.compile(str(path), cfile=str(Path(scratch) / f"{index}.pyc"), doraise=True)
            except py_compile.PyCompileError as exc:
                errors.append(f"{rel}: {exc.msg.strip()}")
    return errors


def _lint(view_root: Path, analysed: list[str], settings: Any, jobs: int | None) -> tuple[list, int]:
    """(key, finding, relpath) for every hazard of the tree at ``view_root``, and the file count."""
    paths = [view_root / p if p != "." else view_root for p in analysed]
    result = run_check(paths, settings, jobs=jobs)
    items = []
    for f in result.findings:
        if f.code == "CSL001":
            continue
        relpath = _rel(f.path, view_root)
        items.append((f.identity(relpath).site_key(), f, relpath))
    items.sort(key=lambda item: (item[2], item[1].line, item[1].column))
    return items, result.files


def _excess(items: list, allowed: Counter) -> list:
    """The items beyond ``allowed`` occurrences of their key, in order."""
    seen: Counter = Counter()
    extra = []
    for item in items:
        seen[item[0]] += 1
        if seen[item[0]] > allowed[item[0]]:
            extra.append(item)
    return extra


def _copy_for_overlay(root: Path, analysed: list[str], scratch: Path) -> Path:
    view = scratch / "tree"
    view.mkdir()
    for rel in analysed:
        src = root if rel == "." else root / rel
        dst = view if rel == "." else view / rel
        if src.is_dir():
            shutil.copytree(src, dst, ignore=shutil.ignore_patterns(*COPY_IGNORE), symlinks=True, dirs_exist_ok=True)
        elif src.is_file():
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)
    return view


def verify_tree(tree: str | Path, *, against: str | Path | None = None, settings: Any = None,
                jobs: int | None = None, require_trtllm: bool = True) -> VerifyReport:
    """Compile the patched files and re-lint; see the module docstring for the modes."""
    started = time.perf_counter()
    info, is_trtllm = resolve_tree(tree, require_trtllm=require_trtllm)
    root = info.root
    settings = _settings_for(root, settings)
    against_path = Path(against).expanduser() if against is not None else None
    if against_path is not None and not against_path.exists():
        raise PatchError("missing", f"{against}: no such file or directory")

    record = None
    if against_path is not None:
        record = _load_record(against_path.resolve())
    else:
        # In place (--write) the record sits in REPORT_DIR_NAME; a full-copy output
        # directory carries it at its top level.
        record = _load_record(root / REPORT_DIR_NAME) or _load_record(root)
        if record is None:
            raise PatchError(
                "nothing-to-verify",
                f"{root}: no apply record in {REPORT_DIR_NAME}/; give --against ORIGINAL_TREE "
                "or --against the apply output directory",
            )

    with tempfile.TemporaryDirectory(prefix="tensorrt_llm_patch-verify-") as scratch_name:
        scratch = Path(scratch_name)
        if record is not None:
            report = _verify_with_record(root, record, against_path, settings, jobs, scratch)
        else:
            assert against_path is not None
            report = _verify_against_original(root, against_path, is_trtllm, settings, jobs)
    report.wall_time_s = time.perf_counter() - started
    return report


def _verify_with_record(root: Path, record: dict, against: Path | None, settings: Any, jobs: int | None,
                        scratch: Path) -> VerifyReport:
    changed = record.get("changed_files", [])
    analysed = record.get("analysed_paths") or [PACKAGE]
    view = root
    mode = "record"
    notes = []
    overlay = []
    for entry in changed:
        rel = entry["path"]
        target = root / rel
        try:
            text = target.read_text(encoding="utf-8", errors="surrogateescape")
        except OSError:
            text = None
        digest = sha256_text(text) if text is not None else None
        if digest == entry["patched_sha256"]:
            continue
        mirrored = (against / rel) if against is not None else None
        if digest == entry["original_sha256"] and mirrored is not None and mirrored.is_file():
            overlay.append((rel, mirrored))
            continue
        state = "missing" if text is None else "differs from both the original and the patched text in the record"
        raise PatchError("nothing-to-verify", f"{target}: {state}; is this the tree the record was made for?")
    if overlay:
        mode = "overlay"
        view = _copy_for_overlay(root, analysed, scratch)
        for rel, mirrored in overlay:
            shutil.copyfile(mirrored, view / rel)
        notes.append(f"overlaid {len(overlay)} patched file(s) from {against} on a copy of {root}")
    files = [entry["path"] for entry in changed]
    report = VerifyReport(tree=root, mode=mode, patched_files=files, notes=notes)
    if not files:
        report.notes.append("the record lists no changed file")
    report.compile_errors = _compile_all(view, files)
    try:
        items, report.files_analysed = _lint(view, analysed, settings, jobs)
    except PatchError as exc:
        report.relint_error = str(exc)
        return report
    actual = Counter(item[0] for item in items)
    hazards = [h for h in record.get("hazards", []) if h.get("code") != "CSL001"]
    recorded_all = Counter(tuple(h["key"]) for h in hazards)
    expected_after = Counter(tuple(h["key"]) for h in hazards if h.get("outcome") != FIXED)
    fixed_keys = sorted({tuple(h["key"]) for h in hazards if h.get("outcome") == FIXED})
    unfixed_conditions = {(h["path"], h.get("function", ""), h.get("condition", ""))
                          for h in hazards if h.get("outcome") != FIXED}
    for key in fixed_keys:
        if actual[key] > expected_after[key]:
            again = [(k, f, rel) for k, f, rel in items if k == key][expected_after[key]:]
            still, behind = _split_new(again, unfixed_conditions)
            report.still_reported.extend(still)
            report.consequences.extend(behind)
            if not still:
                report.fixed.append(_key_dict(key))
        else:
            report.fixed.append(_key_dict(key))
    new, behind = _split_new(_excess(items, recorded_all), unfixed_conditions)
    report.new_hazards = new
    report.consequences.extend(behind)
    report.remaining = len(items)
    report.left = _left_as_recorded(items, hazards)
    return report


def _left_as_recorded(items: list, hazards: list[dict]) -> list[dict]:
    """The hazards re-lint still reports that the record left on purpose, each with the record's why."""
    why: dict = {}
    for h in hazards:
        if h.get("outcome") != FIXED:
            why.setdefault(tuple(h["key"]), []).append(h)
    left = []
    for key, finding, relpath in items:
        recorded = why.get(key)
        if not recorded:
            continue
        h = recorded.pop(0) if len(recorded) > 1 else recorded[0]
        entry = _finding_dict(finding, relpath)
        entry["outcome"] = h.get("outcome", "")
        entry["reason"] = h.get("reason", "")
        confidence = h.get("confidence") or {}
        entry["confidence"] = confidence.get("level", "")
        left.append(entry)
    return left


def _verify_against_original(root: Path, original: Path, is_trtllm: bool, settings: Any,
                             jobs: int | None) -> VerifyReport:
    try:
        original_info = identify_tree(original)
        original_root = original_info.root
    except LocateError as exc:
        if is_trtllm:
            raise PatchError(exc.kind, f"--against: {exc}") from exc
        original_root = original.resolve()
    analysed = [PACKAGE] if is_trtllm else ["."]
    files = []
    for rel in analysed:
        base = root if rel == "." else root / rel
        for path in sorted(base.rglob("*.py")):
            if any(part in ("__pycache__", ".git") for part in path.parts):
                continue
            relpath = path.relative_to(root).as_posix()
            other = original_root / relpath
            if not other.is_file() or other.read_bytes() != path.read_bytes():
                files.append(relpath)
    report = VerifyReport(tree=root, mode="original", patched_files=files)
    if not files:
        report.notes.append(f"no Python file differs from {original_root}")
    report.compile_errors = _compile_all(root, files)
    try:
        after, report.files_analysed = _lint(root, analysed, settings, jobs)
        before, _ = _lint(original_root, analysed, settings, jobs)
    except PatchError as exc:
        report.relint_error = str(exc)
        return report
    before_keys = Counter(item[0] for item in before)
    after_keys = Counter(item[0] for item in after)
    gone = before_keys - after_keys
    report.fixed = [_key_dict(k) for k in sorted(gone.elements())]
    remaining_conditions = {(rel, f.function, f.condition) for k, f, rel in before if after_keys[k]}
    report.new_hazards, report.consequences = _split_new(_excess(after, before_keys), remaining_conditions)
    report.remaining = len(after)
    changed = set(files)
    if files and not gone:
        report.still_reported = [_finding_dict(f, rel) for _k, f, rel in before if rel in changed]
        report.notes.append("files differ but no hazard disappeared")
    return report


def _short(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def summary_lines(report: VerifyReport) -> list[str]:
    lines = [f"tensorrt_llm_patch verify: {report.tree} ({report.mode}; {len(report.patched_files)} patched file(s))"]
    for note in report.notes:
        lines.append(f"  note: {note}")
    if report.compile_errors:
        lines.append(f"  compile: FAILED for {len(report.compile_errors)} file(s)")
        lines += [f"    {e}" for e in report.compile_errors]
    else:
        lines.append(f"  compile: ok ({len(report.patched_files)} file(s))")
    if report.relint_error:
        lines.append(f"  re-lint: FAILED to run: {report.relint_error}")
    else:
        lines.append(f"  re-lint: {len(report.fixed)} fixed site(s) gone, {len(report.still_reported)} still reported, "
                     f"{len(report.new_hazards)} new, {len(report.consequences)} behind guards left unfixed; "
                     f"{report.remaining} hazard(s) reported in total")
    for item in report.still_reported:
        lines.append(f"    still reported: {item['path']}:{item['line']} {item['code']} {item['function']}: "
                     f"`{item['callee']}` under `{item['condition']}`")
    for item in report.new_hazards:
        lines.append(f"    new: {item['path']}:{item['line']} {item['code']} {item['function']}: "
                     f"`{item['callee']}` under `{item['condition']}`")
    for item in report.consequences:
        lines.append(f"    behind an unfixed guard: {item['path']}:{item['line']} {item['code']} {item['function']}: "
                     f"`{item['callee']}` under `{item['condition']}`")
    if report.left:
        by_outcome = Counter(item["outcome"] for item in report.left)
        lines.append(f"  left on purpose (as recorded by apply): {len(report.left)} ("
                     + ", ".join(f"{outcome} {n}" for outcome, n in sorted(by_outcome.items())) + ")")
        for item in report.left:
            lines.append(f"    {item['outcome']}: {item['path']}:{item['line']} {item['code']} {item['function']}: "
                         f"{_short(item['reason'])}")
    lines.append(f"  result: {'PASSED' if report.ok else 'FAILED'} in {report.wall_time_s:.2f} s")
    return lines
