"""The byte searches of the gather and the kept texts of syntax.unparse
answer as the plain forms they replace."""

import ast
import re

import pytest

from cslint.analysis.syntax import unparse
from cslint.engine.gather import _class_definition, _top_definition

CALLEE_KEYWORDS = rb"(?:async[ \t]+)?(?:def|class)"

MODULES = [
    b"def check(): pass\n",
    b"x = 1\nasync  def check():\n    pass\n",
    b"    def check(self): pass\n",
    b"class check:\n    pass\n",
    b"x = 1\nclass checked:\n    pass\n",
    b"x = 1\r\nasync\tdef check(): pass\n",
    b"\nclass\tcheck(Base): pass\n",
    b"asyncdef check(): pass\n",
    b"# def check\n",
    b"y = 'def check'\n",
    b"",
]


@pytest.mark.parametrize("data", MODULES)
def test_top_definition_is_a_line_anchored_search(data):
    line_anchored = re.search(rb"^" + CALLEE_KEYWORDS + rb"[ \t]+check\b", data, re.M) is not None
    assert _top_definition(CALLEE_KEYWORDS, "check")(data) is line_anchored


@pytest.mark.parametrize("data", MODULES)
def test_class_definition_is_a_line_anchored_search(data):
    line_anchored = re.search(rb"^class[ \t]+check\b", data, re.M) is not None
    assert _class_definition("check")(data) is line_anchored


def test_definitions_found_at_start_and_after_a_newline():
    assert _top_definition(CALLEE_KEYWORDS, "check")(b"def check(): pass")
    assert _top_definition(CALLEE_KEYWORDS, "check")(b"x = 1\nasync def check(): pass")
    assert not _top_definition(CALLEE_KEYWORDS, "check")(b"x = 1\n    def check(self): pass")


def test_unparse_keeps_the_text_of_a_node():
    test = ast.parse("if group.rank() == 0:\n    pass\n").body[0].test
    first = unparse(test)
    assert first == "group.rank() == 0"
    assert unparse(test) is first
    other = ast.parse("if group.rank() == 1:\n    pass\n").body[0].test
    assert unparse(other) == "group.rank() == 1"
