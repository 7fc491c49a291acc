"""What ordering atoms that tie costs (``divergence.canonical_positions``,
``structure_digest``): a digest of an int or a bool leaf is kept in the
memo under its type and value, so the depths and lines that every atom
holds are hashed once, not once per part that holds them; and a run of
tied atoms is sorted by digests worked out in one pass (issue 13).  The
digests and the order are those a digest of every leaf made anew gives:
1 and True still digest apart, and atoms that differ only inside nested
sets still come out in one order whatever the set's own order."""

import hashlib

from cslint.analysis import divergence
from cslint.analysis.atoms import call_result, collective_result, field_read, param, source
from cslint.analysis.callrefs import name_ref
from cslint.analysis.divergence import _atom_rank, _portable, canonical_order, canonical_positions, structure_digest


def _digest_anew(value) -> bytes:
    """Every part digested anew, no memo: what structure_digest's digests must equal."""
    if type(value) is str:
        return hashlib.blake2b(repr(_portable(value)).encode("utf-8", "surrogateescape"), digest_size=12).digest()
    if type(value) is frozenset or isinstance(value, tuple):
        parts = [_digest_anew(item) for item in value]
        if type(value) is frozenset:
            parts.sort()
        return hashlib.blake2b((b"{" if type(value) is frozenset else b"(") + b"".join(parts), digest_size=12).digest()
    return hashlib.blake2b(repr(value).encode("utf-8", "surrogateescape"), digest_size=12).digest()


INNER_A = frozenset({source("rank id", "a", "f.py", 1, (("*", frozenset({"tp", "pp"})),))})
INNER_B = frozenset({source("rank id", "b", "f.py", 1, (("*", frozenset({"dp"})),))})
ATOMS = [
    call_result(name_ref("f"), (INNER_A,), (), frozenset(), "f.py", 3, "f", 2),
    call_result(name_ref("f"), (INNER_B,), (), frozenset(), "f.py", 3, "f", 2),
    collective_result("world", INNER_A, 2),
    collective_result("world", INNER_B, 2),
    collective_result("world", INNER_B, 1),
    source("rank id", "r", "f.py", 2, (("*", frozenset({"tp"})),)),
    source("rank id", "r", "f.py", 2, (("*", frozenset({"pp"})),)),
    param(0),
    field_read("m:C", "x"),
]


def test_an_int_leaf_is_hashed_once_per_memo(monkeypatch):
    hashed = []
    real = hashlib.blake2b

    class Counting:
        @staticmethod
        def blake2b(data, digest_size):
            hashed.append(data)
            return real(data, digest_size=digest_size)

    monkeypatch.setattr(divergence, "hashlib", Counting)
    memo: dict = {}
    for value in ((7, "a"), (7, "b"), (7, "c"), (True, 7)):
        structure_digest(value, memo)
    assert hashed.count(b"7") == 1 and hashed.count(b"True") == 1


def test_the_digests_are_those_of_every_leaf_made_anew():
    memo: dict = {}
    values = [(1, "x"), (0, "y", False), frozenset({(1, 2), (2, 1)}), (3, (4, True)), tuple(ATOMS)]
    for _round in range(2):  # the second round reads the memo
        for value in values:
            assert structure_digest(value, memo) == _digest_anew(value)
    # (a part equal to another is read from the memo: 1 and True apart in leaves, in fresh memos)
    assert structure_digest((True, "x"), {}) == _digest_anew((True, "x")) != structure_digest((1, "x"), {})


def test_tied_atoms_come_out_by_rank_then_digest_whatever_the_set_s_order():
    expected = sorted(ATOMS, key=lambda atom: (_atom_rank(atom), _digest_anew(atom)))
    for built in (frozenset(ATOMS), frozenset(reversed(ATOMS)), set(ATOMS[::2] + ATOMS[1::2])):
        listed = list(built)
        assert [listed[i] for i in canonical_positions(listed, {})] == expected
        assert list(canonical_order(built)) == expected
