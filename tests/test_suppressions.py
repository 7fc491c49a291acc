"""`# cslint: ignore[...]` comments and unused-suppression reports."""

from cslint.model import Finding
from cslint.suppressions import apply_suppressions, find_suppressions


def finding(line, code="CSL102", path="m.py"):
    return Finding(code, path, line, 5, line, 20, "msg", "tp_allgather", "tp")


def test_comment_codes_and_bare_form():
    text = (
        "a = f()  # cslint: ignore[CSL102, csl101]\n"
        "b = g()  # cslint: ignore\n"
        "s = '# cslint: ignore[CSL101]'\n"
    )
    found = find_suppressions(text)
    assert found[1][0] == frozenset({"CSL102", "CSL101"})
    assert found[2][0] is None
    assert 3 not in found  # inside a string: not a comment


def test_suppression_drops_matching_finding_and_reports_unused():
    sup = {"m.py": find_suppressions("x\ny  # cslint: ignore[CSL1]\nz  # cslint: ignore[CSL104]\n")}
    kept, unused = apply_suppressions([finding(2), finding(3)], sup)
    assert [f.line for f in kept] == [3]  # CSL102 is not covered by CSL104
    assert [(u.code, u.line) for u in unused] == [("CSL002", 3)]


def test_untokenizable_source_still_scanned():
    text = "def f(:\n    x  # cslint: ignore[CSL101]\n"
    assert find_suppressions(text)[2][0] == frozenset({"CSL101"})
