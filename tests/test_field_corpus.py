"""The field corpus (tests/field) is well formed, and its scorer counts right.

No recall target is asserted here yet: the engine work of issue 15 part 2
comes first.  ``bench/accuracy.py`` prints the current figures.

- The stored corpus: every manifest row has its folder and variants, a
  reference, a header naming the upstream fix, a marker in buggy.py (and
  none elsewhere), and every file parses.
- The validator catches each kind of defect in a synthetic corpus.
- The scorer's verdicts on a synthetic corpus, with a scripted checker
  (exact counting) and with the real analysis (end to end).
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

FIELD = Path(__file__).resolve().parent / "field"
sys.path.insert(0, str(FIELD))

import field_scoring

HEADER = '"""{title}\n\nUpstream: example/project PR #1.\nGroup: world.\n"""\n'
MANIFEST_HEAD = "\t".join(field_scoring.COLUMNS) + "\n"


def _row(case_id, kind="bug", category="per-rank-data", expected="CSL102", reference="example/project PR #1"):
    return "\t".join([case_id, kind, "example", category, "world", expected, reference]) + "\n"


def _write(root: Path, rows: str, files: dict) -> list:
    (root / "MANIFEST.tsv").write_text("# synthetic\n" + MANIFEST_HEAD + rows, encoding="utf-8")
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return field_scoring.load_manifest(root / "MANIFEST.tsv")


# -- the stored corpus ---------------------------------------------------------------


def test_stored_corpus_is_well_formed():
    cases = field_scoring.load_manifest()
    assert field_scoring.problems(cases) == []


def test_stored_corpus_has_enough_cases_spread_over_projects():
    cases = field_scoring.load_manifest()
    bugs = [c for c in cases if c.kind == "bug"]
    negatives = [c for c in cases if c.kind == "negative"]
    assert len(bugs) >= 40
    assert len(negatives) >= 10
    per_project = {p: sum(c.project == p for c in bugs) for p in {c.project for c in bugs}}
    assert len(per_project) >= 10
    assert max(per_project.values()) <= 8, per_project


def test_stored_corpus_is_analysable():
    """No variant of the stored corpus makes the analysis report CSL001 or a file error."""
    score = field_scoring.score_field_in_subprocess(120.0)
    assert score.errors == []
    assert len(score.results) == len(field_scoring.load_manifest())


# -- the validator ---------------------------------------------------------------------


def test_problems_names_each_defect(tmp_path):
    good_buggy = HEADER.format(title="ok") + "import torch.distributed as dist\ndist.barrier()  # expect: CSL102\n"
    good_fixed = HEADER.format(title="ok") + "import torch.distributed as dist\ndist.barrier()\n"
    rows = "".join([
        _row("complete"),
        _row("no_fixed"),
        _row("no_marker"),
        _row("marker_in_fixed"),
        _row("syntax_error"),
        _row("no_header"),
        _row("no_reference", reference="-"),
        _row("bad_category", category="weather"),
        _row("wrong_code", expected="CSL101"),
        _row("negative_with_buggy", kind="negative", category="consensus", expected="-"),
        _row("missing_folder"),
    ])
    files = {
        "complete/buggy.py": good_buggy, "complete/fixed.py": good_fixed,
        "no_fixed/buggy.py": good_buggy,
        "no_marker/buggy.py": good_fixed, "no_marker/fixed.py": good_fixed,
        "marker_in_fixed/buggy.py": good_buggy, "marker_in_fixed/fixed.py": good_buggy,
        "syntax_error/buggy.py": good_buggy, "syntax_error/fixed.py": good_fixed + "def broken(:\n",
        "no_header/buggy.py": "import torch.distributed as dist\ndist.barrier()  # expect: CSL102\n",
        "no_header/fixed.py": good_fixed,
        "no_reference/buggy.py": good_buggy, "no_reference/fixed.py": good_fixed,
        "bad_category/buggy.py": good_buggy, "bad_category/fixed.py": good_fixed,
        "wrong_code/buggy.py": good_buggy, "wrong_code/fixed.py": good_fixed,
        "negative_with_buggy/negative.py": good_fixed, "negative_with_buggy/buggy.py": good_buggy,
        "unlisted/buggy.py": good_buggy,
    }
    cases = _write(tmp_path, rows, files)
    found = field_scoring.problems(cases, root=tmp_path)
    expected = {
        "no_fixed": "fixed.py is missing",
        "no_marker": "marks no collective line",
        "marker_in_fixed": "fixed.py carries '# expect:' markers",
        "syntax_error": "fixed.py does not parse",
        "no_header": "buggy.py has no header docstring",
        "no_reference": "no upstream reference",
        "bad_category": "category 'weather'",
        "wrong_code": "marks CSL102 but the manifest expects CSL101",
        "negative_with_buggy": "buggy.py does not belong to a negative case",
        "missing_folder": "no folder",
        "unlisted": "folder not in the manifest",
    }
    for case_id, fragment in expected.items():
        assert any(p.startswith(f"{case_id}:") and fragment in p for p in found), (case_id, found)
    assert not any(p.startswith("complete:") for p in found), found


def test_manifest_with_a_wrong_header_is_refused(tmp_path):
    (tmp_path / "MANIFEST.tsv").write_text("id\tkind\n", encoding="utf-8")
    with pytest.raises(ValueError, match="header"):
        field_scoring.load_manifest(tmp_path / "MANIFEST.tsv")


# -- the scorer -----------------------------------------------------------------------


def _scripted_checker(findings_by_file: dict):
    """A stand-in for cslint: reports the findings listed for each analysed file."""
    def check(paths):
        out = []
        for path in paths:
            for line, code in findings_by_file.get(Path(path).name, {}).get(Path(path).parent.name, []):
                out.append(SimpleNamespace(path=str(path), line=line, code=code, message=f"{code} here"))
        return SimpleNamespace(findings=out, errors=[])
    return check


def test_scorer_counts_verdicts_on_a_synthetic_corpus(tmp_path):
    buggy = HEADER.format(title="b") + "import torch.distributed as dist\n\ndist.barrier()  # expect: CSL102\n"
    fixed = HEADER.format(title="f") + "import torch.distributed as dist\n\ndist.barrier()\n"
    support_buggy = HEADER.format(title="b") + "from .support import sync\n\nsync()  # expect: CSL102\n"
    rows = "".join([
        _row("hit"), _row("elsewhere"), _row("missed"), _row("support_hit"),
        _row("quiet", kind="negative", category="consensus", expected="-"),
        _row("noisy", kind="negative", category="consensus", expected="-"),
    ])
    files = {
        "hit/buggy.py": buggy, "hit/fixed.py": fixed,
        "elsewhere/buggy.py": buggy, "elsewhere/fixed.py": fixed,
        "missed/buggy.py": buggy, "missed/fixed.py": fixed,
        "support_hit/buggy.py": support_buggy, "support_hit/fixed.py": fixed,
        "support_hit/support.py": "def sync():\n    pass\n",
        "quiet/negative.py": fixed, "noisy/negative.py": fixed,
    }
    cases = _write(tmp_path, rows, files)
    marked = 8  # the marker line in every synthetic buggy.py
    check = _scripted_checker({
        "buggy.py": {"hit": [(marked, "CSL102"), (2, "CSL101")], "elsewhere": [(2, "CSL101")],
                     "support_hit": [(marked, "CSL104")]},
        "fixed.py": {"hit": [], "elsewhere": [(7, "CSL101")], "missed": [(7, "CSL001")]},
        "support.py": {"support_hit": [(2, "CSL101")]},
        "negative.py": {"noisy": [(7, "CSL103")]},
    })
    score = field_scoring.score_cases(cases, check)
    assert [c.id for c in score.buggy_flagged] == ["hit", "support_hit"]
    assert [c.id for c in score.buggy_missed] == ["elsewhere", "missed"]
    # a finding in a support module spoils the fixed variant too; CSL001 is an error, not a verdict
    assert [c.id for c in score.fixed_clean] == ["hit", "missed"]
    assert [c.id for c in score.fixed_flagged] == ["elsewhere", "support_hit"]
    assert [c.id for c in score.negatives_clean] == ["quiet"]
    assert [c.id for c in score.negatives_flagged] == ["noisy"]
    assert [(f.path, f.line) for f in score.results["hit"]["buggy"].extra] == [("buggy.py", 2)]
    assert score.errors == ["missed/fixed: fixed.py:7: CSL001 CSL001 here"]
    assert score.by_category() == {"per-rank-data": [2, 4, 2]}
    summary = field_scoring.to_json(score)
    assert (summary["buggy_flagged"], summary["fixed_clean"], summary["negatives_clean"]) == (2, 2, 1)
    report = field_scoring.format_report(score)
    assert "buggy flagged at the marked line  2/4 (0.50)" in report
    assert "negatives clean                   1/2 (0.50)" in report


def test_scorer_end_to_end_with_the_analysis(tmp_path):
    """A rank-0 early return before an all-reduce is flagged at the marker and
    its consensus-gated fix is clean, through the real analysis."""
    buggy = HEADER.format(title="b") + (
        "import torch.distributed as dist\n\n\n"
        "def step(t):\n"
        "    if dist.get_rank() == 0:\n"
        "        return t\n"
        "    dist.all_reduce(t)  # expect: CSL102\n"
        "    return t\n")
    fixed = HEADER.format(title="f") + (
        "import torch.distributed as dist\n\n\n"
        "def step(t):\n"
        "    dist.all_reduce(t)\n"
        "    return t\n")
    rows = _row("early_return") + _row("plain", kind="negative", category="consensus", expected="-")
    cases = _write(tmp_path, rows, {
        "early_return/buggy.py": buggy, "early_return/fixed.py": fixed, "plain/negative.py": fixed,
    })
    score = field_scoring.score_cases(cases)
    assert score.errors == []
    assert [c.id for c in score.buggy_flagged] == ["early_return"]
    assert [c.id for c in score.fixed_clean] == ["early_return"]
    assert [c.id for c in score.negatives_clean] == ["plain"]
