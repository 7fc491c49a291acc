"""The whole text of an expression (``syntax.unparsed``: ``ast.unparse``'s,
not cut short nor its spaces joined) is kept on the node as
``syntax.unparse`` keeps the short text, and each reads what the other made:
the alternatives of a block (``alternatives.complement_partner``: sibling
``if`` statements whose tests negate each other) ask each test's whole text
after the analysis asked its short text, and unparsed it a second time
(issue 13).  The texts are ``ast.unparse``'s exactly, so two tests that
differ only in a string's spaces are still no complements."""

import ast
import collections
import textwrap

import pytest

from cslint.analysis import syntax
from cslint.analysis.facts import extract_file_facts
from cslint.api import check_source
from cslint.config import Settings
from cslint.presets import load_presets

KNOWLEDGE = load_presets(["torch_distributed"])


def test_no_test_of_the_alternatives_is_unparsed_twice(monkeypatch):
    seen = collections.Counter()
    real = ast.unparse

    def counting(node):
        seen[id(node)] += 1
        return real(node)

    monkeypatch.setattr(ast, "unparse", counting)
    body = "".join(f"    if flag == {i}:\n        dist.barrier()\n    if flag != {i}:\n        dist.barrier()\n"
                   f"    if not flag.ready({i}):\n        dist.barrier()\n" for i in range(20))
    source = f"import torch.distributed as dist\n\n\ndef many(flag):\n{body}".encode()
    tree = ast.parse(source)
    extract_file_facts("many.py", source, Settings(), KNOWLEDGE, module="many", tree=tree)
    tests = [node.test for node in ast.walk(tree) if isinstance(node, ast.If)]
    assert all(seen[id(test)] == 1 for test in tests)


CUT = "self.first_rank_of_the_pipeline_group + " * 4 + "offset"


@pytest.mark.parametrize("text", ["rank", "self.group.rank", "f(x)", 'x == "a  b"', "[a,\n b]", CUT,
                                  "a.b(c).d"])
@pytest.mark.parametrize("short_first", [True, False])
def test_the_whole_and_the_short_text_are_those_of_ast_unparse(text, short_first):
    node = ast.parse(f"({text})", mode="eval").body
    fresh = ast.parse(f"({text})", mode="eval").body
    if short_first:
        short = syntax.unparse(node)
        whole = syntax.unparsed(node)
    else:
        whole = syntax.unparsed(node)
        short = syntax.unparse(node)
    assert whole == ast.unparse(fresh)
    assert short == syntax.unparse(fresh)
    assert syntax.whole_text(node) == syntax.whole_text(fresh)


@pytest.mark.parametrize("other, reported", [('"0  1"', []), ('"0 1"', [6, 8])])
def test_tests_negating_each_other_only_by_their_exact_text_pair_up(other, reported):
    source = textwrap.dedent(f"""
        import torch.distributed as dist

        def step(rank):
            if str(rank) == "0  1":
                dist.barrier()
            if str(rank) != {other}:
                dist.barrier()
    """)
    result = check_source(source, report="per-site", presets=["torch_distributed"])
    assert sorted(f.line for f in result.findings) == reported
