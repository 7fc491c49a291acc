"""config.text_matches / pattern_matches answer what fnmatch.fnmatchcase answers,
with each pattern (or set of patterns) compiled once; correlated's plain-test
verdict, read on the fast walk, is the one an ``ast.walk`` over every node gives."""

import ast
from fnmatch import fnmatchcase

import pytest

from cslint.analysis.correlated import _plain
from cslint.config import pattern_matches, text_matches

PATTERNS = ["torch.distributed.*", "*gather_from_*_region", "dist.[ab]*", "comm.?end", "exact.name", "*", "a[!b]c"]
TEXTS = ["torch.distributed.all_reduce", "mod.gather_from_tp_region", "dist.barrier", "dist.all_gather", "comm.send",
         "comm.recv", "exact.name", "exact.names", "", "axc", "abc", "a\nc", "torch.distributed"]


@pytest.mark.parametrize("pattern", PATTERNS)
def test_text_matches_is_fnmatchcase_of_any_text(pattern):
    for texts in ([], TEXTS[:3], TEXTS[3:7], TEXTS[7:], *([text] for text in TEXTS)):
        assert text_matches(texts, pattern) == any(fnmatchcase(t, pattern) for t in texts), (pattern, texts)


def test_pattern_matches_is_fnmatchcase_of_any_pattern():
    for patterns in ([], PATTERNS, PATTERNS[:2], PATTERNS[2:5], *([p] for p in PATTERNS)):
        for text in TEXTS:
            assert pattern_matches(text, patterns) == any(fnmatchcase(text, p) for p in patterns), (patterns, text)


def _plain_by_ast_walk(expr) -> bool:
    return all(isinstance(node, (ast.Name, ast.Constant, ast.Load, ast.UnaryOp, ast.Not, ast.Compare, ast.cmpop,
                                 ast.BoolOp, ast.boolop)) for node in ast.walk(expr))


@pytest.mark.parametrize("source", ["a", "not a", "-a", "~a", "a and not b", "a < b <= 3", "a is None or b", "a.b",
                                    "f(a)", "a[0]", "(a := 1)", "not -a", "[a for a in b]", "a + 1", "'x' in a"])
def test_plain_test_verdict_is_the_full_walk_one(source):
    expr = ast.parse(source, mode="eval").body
    assert _plain(expr) == _plain_by_ast_walk(expr), source
