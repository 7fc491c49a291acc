"""divergence.merge with a link: an added entry's flow is continued by the
link, an entry the map holds keeps its own, and the longer flow is built only
where an entry is added (the fixpoint merges the same sources again round after
round; most merges add nothing)."""

from __future__ import annotations

from cslint.analysis import divergence
from cslint.analysis.divergence import MAX_KEPT_VIA, extend_via, merge

RANK, NODE = frozenset({"rank"}), frozenset({"node"})
FIRST, SECOND = ("m.py", 3, "passed as `x`"), ("m.py", 9, "passed as `y`")
VIA = (("m.py", 1, "returned by `f()`"),)


def test_an_added_entry_takes_the_link_and_a_held_one_keeps_its_flow(monkeypatch):
    table: dict = {}
    assert merge(table, "src", RANK, VIA, FIRST)
    assert table["src"] == (RANK, VIA + (FIRST,))
    built = []
    monkeypatch.setattr(divergence, "extend_via", lambda via, link: built.append(link) or extend_via(via, link))
    assert not merge(table, "src", RANK, VIA, SECOND)  # nothing new
    assert merge(table, "src", RANK | NODE, VIA, SECOND)  # wider: the dimensions grow, the flow stays
    assert table["src"] == (RANK | NODE, VIA + (FIRST,))
    assert built == []  # no flow built for an entry the map holds
    assert merge(table, "other", NODE, VIA, SECOND)
    assert built == [SECOND] and table["other"] == (NODE, VIA + (SECOND,))


def test_a_merge_with_a_link_adds_what_one_of_the_extended_flow_adds():
    long_via = tuple(("m.py", line, "step") for line in range(MAX_KEPT_VIA))
    for via in ((), VIA, long_via):
        linked, extended = {}, {}
        assert merge(linked, "src", RANK, via, FIRST) == merge(extended, "src", RANK, extend_via(via, FIRST))
        assert linked == extended
    plain: dict = {}
    assert merge(plain, "src", RANK, VIA)  # without a link the flow is taken as it is
    assert plain["src"] == (RANK, VIA)
