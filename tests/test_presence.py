"""presence: tests that only ask whether a value is there."""

from __future__ import annotations

import ast

from cslint.analysis.presence import is_none_literal


def test_is_none_literal_is_the_constant_none_alone():
    # one test of the literal None (noneness, membership and presentfields each wrote their own)
    values = [ast.parse(text, mode="eval").body for text in ("None", "0", "False", "'None'", "None or x", "x")]
    assert [is_none_literal(value) for value in values] == [True, False, False, False, False, False]
