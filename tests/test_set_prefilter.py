"""The byte test that lets a file skip the set-order search
(``ModuleContext.may_make_sets``) says yes wherever a set may be made."""

from __future__ import annotations

import itertools

import pytest

from cslint.analysis.orders import may_make_sets

MAKES = ["s = set(x)", "s = frozenset(x)", "(set(a))", "x = {a for a in b}", "d: Set[int] = f()",
         "y = [set()]", "\nfrozenset()", "{ k for k in v }", "return {f(a) for a in b}"]
NEVER = ["s = x.set(1)", "s = reset(1)", "self.frozenset(1)", "a_set(2)", "xfrozenset(1)", "{a: b for a in c}",
         "{'k': v}", "settings(1)", "set", "frozenset [1]", "{a\nfor a in b}", "{a.format}", "{foreign}", ""]


@pytest.mark.parametrize("source", MAKES)
def test_a_set_made_is_seen_in_text_and_bytes(source):
    assert may_make_sets(source)
    assert may_make_sets(source.encode())


@pytest.mark.parametrize("source", NEVER)
def test_no_set_made_is_seen_nowhere(source):
    assert not may_make_sets(source)
    assert not may_make_sets(source.encode())


def test_pieces_joined_anyhow_are_judged_by_what_they_form():
    # a piece of the pattern may only complete across a joint: ``fro`` +
    # ``zenset(``, ``.`` + ``set(``
    pieces = ["set(", "frozen", "fro", "zenset(", ".", "a", " ", "{", "for", ":", "\n", "Set[", "}"]
    seen = set()
    for size in range(4):
        for parts in itertools.product(pieces, repeat=size):
            text = "".join(parts)
            seen.add(may_make_sets(text))
            assert may_make_sets(text) == may_make_sets(text.encode())
            expected = (_called(text) or "Set[" in text or _comprehension(text))
            assert may_make_sets(text) == expected, text
    assert seen == {True, False}


def _called(text: str) -> bool:
    """``set(``/``frozenset(`` not preceded by a name character or a dot."""
    for start in range(len(text)):
        for name in ("set(", "frozenset("):
            if text.startswith(name, start) and (start == 0 or not (text[start - 1].isalnum()
                                                                    or text[start - 1] in "_.")):
                return True
    return False


def _comprehension(text: str) -> bool:
    """A ``{`` followed, on its line and before any ``{``, ``}`` or ``:``, by the word ``for``."""
    for start, char in enumerate(text):
        if char != "{":
            continue
        rest = text[start + 1:]
        for end, c in enumerate(rest):
            if c in "{}:\n":
                break
            if rest.startswith("for", end) and (end == 0 or not (rest[end - 1].isalnum() or rest[end - 1] == "_")) \
                    and not (rest[end + 3:end + 4].isalnum() or rest[end + 3:end + 4] == "_"):
                return True
    return False
