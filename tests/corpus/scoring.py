"""Precision and recall of cslint over the labelled corpus.

Two parts, scored differently:

- ``real_shapes``: line level.  A line ending in ``# expect: CSL10x`` should
  carry a CSL1xx finding (any code of the family counts; the expected code
  is kept for the per-rule table).  A marked line with a finding is a true
  positive, a marked line without one a false negative, and every other line
  with a CSL1xx finding a false positive (several findings on one line count
  once).
- ``generated``: program level.  A program is predicted unsafe when it has
  any CSL1xx finding; the truth is the run-derived label in
  ``generated/manifest.json``.  Line-level figures against the generator's
  markers are reported as well, for diagnosis only.

Used by ``tests/test_accuracy.py`` and ``bench/accuracy.py``.
"""

from __future__ import annotations

import json
import pickle
import re
import subprocess
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from cslint.boundedruns import kill_session, start_bounded

CORPUS = Path(__file__).resolve().parent
REAL_SHAPES = CORPUS / "real_shapes"
GENERATED = CORPUS / "generated"
MANIFEST = GENERATED / "manifest.json"
PRESETS = ["torch_distributed", "mpi4py", "tensorrt_llm"]
FAMILY = "CSL1"
MARKER = re.compile(r"#\s*expect:\s*(CSL\d{3})")


@dataclass
class Item:
    """One scored location: a line (real_shapes) or a program (generated)."""

    path: str
    line: int
    expected: str = ""  # expected code, "" when unmarked
    found: list = field(default_factory=list)  # codes found there
    note: str = ""  # finding message or program detail


@dataclass
class Score:
    name: str
    tp: list = field(default_factory=list)
    fp: list = field(default_factory=list)
    fn: list = field(default_factory=list)
    tn: int = 0
    errors: list = field(default_factory=list)  # CSL001 findings and file errors

    @property
    def precision(self) -> float:
        flagged = len(self.tp) + len(self.fp)
        return len(self.tp) / flagged if flagged else 1.0

    @property
    def recall(self) -> float:
        real = len(self.tp) + len(self.fn)
        return len(self.tp) / real if real else 1.0

    def per_rule(self) -> dict:
        """code -> [tp, fp, fn]; TP and FN under the expected code, FP under the found one."""
        table: dict = defaultdict(lambda: [0, 0, 0])
        for item in self.tp:
            table[item.expected or (item.found[0] if item.found else "?")][0] += 1
        for item in self.fp:
            for code in sorted(set(item.found)) or ["?"]:
                table[code][1] += 1
        for item in self.fn:
            table[item.expected or "?"][2] += 1
        return dict(sorted(table.items()))


def settings():
    """Settings with all three presets and nothing from any pyproject.

    The corpora's markers were written for launchers that tear the job down
    when one rank raises (``unhandled-exceptions = "crash"``), so that is
    what they are scored under, though the tensorrt_llm preset would choose
    ``hang``; the field corpus scores its TensorRT-LLM cases under ``hang``.
    """
    from cslint.config import Settings

    return Settings(presets=list(PRESETS), unhandled_exceptions="crash")


def run_check(paths: list) -> object:
    """`cslint.api.check_paths` over `paths` with the corpus settings."""
    from cslint.api import check_paths

    try:
        return check_paths([str(p) for p in paths], settings=settings(), cache=False)
    except TypeError:  # an API without the cache switch
        return check_paths([str(p) for p in paths], settings=settings())


def _key(path: str) -> str:
    return str(Path(path).resolve())


def markers(root: Path) -> dict:
    """{(resolved path, line): expected code} for every marked line under root."""
    found = {}
    for file in sorted(root.rglob("*.py")):
        for number, text in enumerate(file.read_text(encoding="utf-8").splitlines(), start=1):
            match = MARKER.search(text)
            if match:
                found[(_key(str(file)), number)] = match.group(1)
    return found


def _split_findings(result) -> tuple[dict, list]:
    """CSL1xx findings by (path, line), and the CSL001/file errors."""
    by_line: dict = defaultdict(list)
    errors = []
    for finding in result.findings:
        if finding.code.startswith(FAMILY):
            # a finding reported by root cause stands for every site its guard decides
            for line in dict.fromkeys([finding.line] + [site.line for site in getattr(finding, "sites", ())]):
                by_line[(_key(finding.path), line)].append(finding)
        else:
            errors.append(f"{finding.path}:{finding.line}: {finding.code} {finding.message}")
    for error in result.errors:
        errors.append(f"{error.path}: {error.message}")
    return by_line, errors


def score_lines(root: Path, result, name: str) -> Score:
    """Line-level score of `result` against the markers under `root`."""
    expected = markers(root)
    by_line, errors = _split_findings(result)
    score = Score(name, errors=errors)
    for (path, line), code in sorted(expected.items()):
        findings = by_line.get((path, line), [])
        item = Item(path, line, code, [f.code for f in findings],
                    findings[0].message if findings else "")
        (score.tp if findings else score.fn).append(item)
    for (path, line), findings in sorted(by_line.items()):
        if (path, line) not in expected and Path(path).is_relative_to(root.resolve()):
            score.fp.append(Item(path, line, "", [f.code for f in findings], findings[0].message))
    return score


def load_manifest(path: Path = MANIFEST) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def score_programs(result, manifest: dict | None = None) -> Score:
    """Program-level score: any CSL1xx finding in a program = predicted unsafe."""
    manifest = manifest or load_manifest()
    by_line, errors = _split_findings(result)
    by_file: dict = defaultdict(list)
    for (path, line), findings in by_line.items():
        by_file[Path(path).name].extend(findings)
    score = Score("generated (program level)", errors=errors)
    for program in manifest["programs"]:
        findings = sorted(by_file.get(program["file"], []), key=lambda f: f.line)
        path = str(GENERATED / program["file"])
        detail = f"runs={program['runs']} placed={program['hazard_kind'] or 'none'}"
        if findings:
            first = findings[0]
            item = Item(path, first.line, "", [f.code for f in findings], f"{detail}; first finding: {first.message}")
        else:
            marked = program["expect"][0]["line"] if program["expect"] else 0
            expected = program["expect"][0]["code"] if program["expect"] else ""
            item = Item(path, marked, expected, [], detail)
        if program["label"] == "unsafe":
            if not item.expected and program["expect"]:
                item.expected = program["expect"][0]["code"]
            (score.tp if findings else score.fn).append(item)
        elif findings:
            score.fp.append(item)
        else:
            score.tn += 1
    return score


def recall_by_hazard_kind(score: Score, manifest: dict | None = None) -> dict:
    """{placed hazard kind: (caught, unsafe programs)} for the program-level score."""
    manifest = manifest or load_manifest()
    kinds = {p["file"]: p["hazard_kind"] or "none" for p in manifest["programs"]}
    table: dict = defaultdict(lambda: [0, 0])
    for item in score.tp:
        table[kinds[Path(item.path).name]][0] += 1
        table[kinds[Path(item.path).name]][1] += 1
    for item in score.fn:
        table[kinds[Path(item.path).name]][1] += 1
    return {kind: tuple(v) for kind, v in sorted(table.items())}


def score_generated_lines(result) -> Score:
    """Line-level figures against the generator's markers (diagnosis only)."""
    return score_lines(GENERATED, result, "generated (generator markers, line level)")


def score_all() -> dict:
    """Run cslint once per part and score it: {part name: Score}."""
    real = run_check([REAL_SHAPES])
    generated = run_check([GENERATED])
    return {
        "real_shapes": score_lines(REAL_SHAPES, real, "real_shapes (line level)"),
        "generated": score_programs(generated),
        "generated_lines": score_generated_lines(generated),
    }


class AnalysisTimeout(RuntimeError):
    """The analysis of the corpus did not finish in time."""


def score_all_in_subprocess(timeout: float) -> dict:
    """`score_all()` in a child process killed after `timeout` seconds, so a
    non-terminating analysis fails the caller instead of stalling it."""
    code = ("import pickle, sys; sys.path.insert(0, sys.argv[1]); import scoring; "
            "sys.stdout.buffer.write(pickle.dumps(scoring.score_all()))")
    process = start_bounded([sys.executable, "-c", code, str(CORPUS)], timeout, cwd=str(CORPUS.parent.parent),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_session(process)
        process.communicate()
        raise AnalysisTimeout(f"cslint did not finish analysing the corpus within {timeout:.0f}s") from None
    if process.returncode != 0:
        raise RuntimeError(f"scoring failed:\n{stderr.decode(errors='replace')[-2000:]}")
    return pickle.loads(stdout)


def format_table(scores: dict) -> str:
    """The per-part, per-rule table and the list of every FP/FN."""
    out = []
    header = f"{'part / rule':44} {'TP':>4} {'FP':>4} {'FN':>4} {'prec':>6} {'recall':>6}"
    out.append(header)
    out.append("-" * len(header))
    for score in scores.values():
        out.append(f"{score.name:44} {len(score.tp):4} {len(score.fp):4} {len(score.fn):4} "
                   f"{score.precision:6.2f} {score.recall:6.2f}")
        for code, (tp, fp, fn) in score.per_rule().items():
            precision = tp / (tp + fp) if tp + fp else 1.0
            recall = tp / (tp + fn) if tp + fn else 1.0
            out.append(f"  {code:42} {tp:4} {fp:4} {fn:4} {precision:6.2f} {recall:6.2f}")
    for score in scores.values():
        base = CORPUS.parent.parent
        for label, items in (("false positives", score.fp), ("false negatives", score.fn)):
            if not items:
                continue
            out.append("")
            out.append(f"{score.name}: {label} ({len(items)})")
            for item in items:
                try:
                    where = Path(item.path).resolve().relative_to(base)
                except ValueError:
                    where = Path(item.path)
                codes = ",".join(sorted(set(item.found))) or f"expected {item.expected}"
                out.append(f"  {where}:{item.line}  [{codes}]  {item.note[:150]}")
        if score.errors:
            out.append("")
            out.append(f"{score.name}: analysis errors ({len(score.errors)})")
            out.extend(f"  {error}" for error in score.errors)
    return "\n".join(out)
