"""environment.merge_into unions the atoms each side holds of a variable and
builds no set where one side already holds the other's."""

from __future__ import annotations

from cslint.analysis.environment import merge_into

A, B, C = frozenset({"a"}), frozenset({"b"}), frozenset({"c"})


def test_a_merge_keeps_the_set_that_holds_the_other():
    both = A | B
    merged = {"held": both, "grows": A, "equal": frozenset(both), "apart": A, "mine": C}
    merge_into(merged, {"held": frozenset(A), "grows": both, "equal": A | B, "apart": B, "theirs": C})
    assert merged["held"] is both  # the other side's atoms are among these already
    assert merged["grows"] is both  # these are among the other side's: its set is the union
    assert merged["equal"] == both
    assert merged["apart"] == A | B  # neither holds the other: the union (the hazard shape of a merge)
    assert merged["mine"] is C and merged["theirs"] is C
    assert list(merged) == ["held", "grows", "equal", "apart", "mine", "theirs"]
