"""The hottest loops of the whole-tree pass and of the extraction read their
dicts with ``in`` and a subscript, not a call of ``dict.get`` per entry
(issue 13): the divergence map ``TableValues.eval`` builds and its memo,
``divergence.merge``, the dataflow's replay of an unchanged statement
(``dataflow._replay``), the interned atoms (``atoms.made``) and the memos of
a map seen through a transform, of an expression's atoms, of a callee's
reference and of a statement's calls, and a class's family, met ``dict.get``
7.3 M times on vLLM, 13.9 % of every call.  A full map's cover is read in one
loop (``merge``), a text met before is not digested again by a call
(``structure_digest``), and a projection of a projection reads the table of
composed transforms itself (``atoms.project``).  The findings stay what they
were."""

import cProfile
import os
import pstats
import sys

from cslint.analysis import atoms as atoms_module
from cslint.analysis import divergence
from cslint.analysis.atoms import Projection, call_result, made, project, source, start_file
from cslint.analysis.callrefs import func_ref
from cslint.analysis.divergence import MAX_SOURCES, SEVERAL_RANKS, merge, structure_digest
from cslint.analysis.tablevalues import TableValues
from cslint.api import check_paths

EXAMPLE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                       "examples", "trtllm_replica", "tensorrt_llm")

#: (module file's tail, function name) of the loops that read their dicts without a call
_HOT = {("analysis/tablevalues.py", "eval"), ("analysis/divergence.py", "merge"),
        ("analysis/dataflow.py", "_replay"), ("analysis/atoms.py", "made"), ("analysis/tablevalues.py", "seen_through"),
        ("analysis/evaluator.py", "eval"), ("analysis/function.py", "resolve_ref"),
        ("analysis/summarycalls.py", "_resolved_calls"), ("analysis/resolution.py", "family"),
        ("analysis/dataflow.py", "cond_atoms"), ("analysis/dataflow.py", "single_rank"),
        ("analysis/dataflow.py", "_solve")}


def _tail(path: str) -> str:
    return "/".join(path.replace(os.sep, "/").split("/")[-2:])


def test_the_hot_loops_read_their_dicts_without_calling_get():
    profile = cProfile.Profile()
    profile.enable()
    try:
        findings = check_paths([EXAMPLE], jobs=1)
    finally:
        profile.disable()
    assert findings  # (the replica's hazards are found: the loops below ran on real work)
    stats = pstats.Stats(profile).stats
    ran = {(_tail(path), name) for (path, _line, name) in stats} & _HOT
    assert ran == _HOT
    getters = next(callers for (path, _line, name), (*_counts, callers) in stats.items()
                   if path == "~" and name == "<method 'get' of 'dict' objects>")
    calling_get = {(_tail(path), name) for (path, _line, name) in getters} & _HOT
    assert not calling_get


def _marked(text: str, dims: frozenset):
    """A source written out only where a group has several ranks (processes.py)."""
    return source("rank id", text, "f.py", 1, (("*", dims), (SEVERAL_RANKS, dims)))


def test_a_full_map_reads_its_cover_in_one_loop(monkeypatch):
    tp, pp = frozenset({"tp"}), frozenset({"pp"})
    table: dict = {}
    for index in range(MAX_SOURCES - 1):
        assert merge(table, source("rank id", f"r{index}", "f.py", index, (("*", tp),)), tp, ())
    assert merge(table, _marked("marked", pp), pp, ())
    asked = []
    original = divergence.several_ranks_only
    monkeypatch.setattr(divergence, "several_ranks_only", lambda k: asked.append(k) or original(k))
    # covered by the unmarked entries: dropped, with one question (of the new source itself)
    assert not merge(table, source("rank id", "again", "f.py", 50, (("*", tp),)), tp, ())
    assert len(asked) == 1
    # a marked entry covers no unmarked source (it reaches where the marked one does not): kept
    assert merge(table, source("rank id", "pipeline", "f.py", 60, (("*", pp),)), pp, ())
    assert len(asked) == 2
    # ... but another marked one
    assert not merge(table, _marked("marked again", pp), pp, ())


def test_a_text_digested_before_is_read_from_the_memo(monkeypatch):
    memo: dict = {}
    first = structure_digest(("tag", "path.py", "text"), memo)
    digested = []
    original = divergence.structure_digest
    monkeypatch.setattr(divergence, "structure_digest", lambda value, m: digested.append(value) or original(value, m))
    again = divergence.structure_digest(("tag", "path.py", "text", "new"), memo)
    assert digested == [("tag", "path.py", "text", "new"), "new"]  # the tuple, and the one text not met before
    assert again != first and divergence.structure_digest(("tag", "path.py", "text"), memo) == first


def test_a_projection_of_a_projection_reads_the_table_of_composed_transforms(monkeypatch):
    start_file()  # (no projection made before)
    inner = frozenset({call_result(func_ref("m", "f"), (), (), frozenset(), "m.py", 1, "f", 1)})
    projected = frozenset({made(Projection, ("J", "WC-", inner))})
    composed = []
    original = atoms_module.compose
    monkeypatch.setattr(atoms_module, "compose", lambda first, then: composed.append(1) or original(first, then))
    assert project("W--", projected) == {made(Projection, ("J", original("WC-", "W--"), inner))}
    assert not composed
    # a pair never met (a length read after a kind test) is composed by compose itself, and kept
    assert project("L--", frozenset({made(Projection, ("J", "Kq-", inner))})) and composed


def test_eval_reads_a_projection_itself(monkeypatch):
    """``TableValues.eval`` evaluates a projection's inner set itself (three
    atoms in four it reads are projections: on SGLang srt/ they were 832k
    calls of ``eval_atom``, each calling ``seen_through``), and sees an empty
    map through no transform; the maps stay what they were."""
    tags, empty_seen = [], []
    eval_atom, seen_through = TableValues.eval_atom, TableValues.seen_through

    def counted_eval_atom(self, atom, mode):
        tags.append(atom.tag)
        return eval_atom(self, atom, mode)

    def counted_seen_through(self, value, transform):
        if not value and sys._getframe(1).f_code.co_name in ("eval", "eval_atom"):
            empty_seen.append(transform)
        return seen_through(self, value, transform)

    monkeypatch.setattr(TableValues, "eval_atom", counted_eval_atom)
    monkeypatch.setattr(TableValues, "seen_through", counted_seen_through)
    assert check_paths([EXAMPLE], jobs=1).findings
    assert tags and "J" not in tags  # (the other atoms still reach it)
    assert not empty_seen


class _CountedDims(frozenset):
    """An entry's dimensions that note each union made of them."""

    unions: list = []

    def __or__(self, other):
        self.unions.append(self)
        return frozenset(self) | frozenset(other)

    __ror__ = __or__


def test_a_full_map_builds_no_union_where_one_entry_covers_a_source(monkeypatch):
    """``merge`` on a full map: a new source that one entry covers alone (as
    every covered source of SGLang srt/managers was) is dropped without the
    union of the entries' dimensions; one only their union covers is still
    dropped, one they do not cover still kept."""
    tp, pp, dp = frozenset({"tp"}), frozenset({"pp"}), frozenset({"dp"})
    table: dict = {}
    for index, dims in enumerate([tp, pp, dp, frozenset({"tp", "pp"})][:MAX_SOURCES]):
        merge(table, source("rank id", f"r{index}", "f.py", index, (("*", dims),)), _CountedDims(dims), ())
    assert len(table) == MAX_SOURCES
    monkeypatch.setattr(_CountedDims, "unions", [])
    assert not merge(table, source("rank id", "again", "f.py", 50, (("*", tp),)), tp, ())
    assert _CountedDims.unions == []
    assert not merge(table, source("rank id", "both", "f.py", 51, (("*", tp | dp),)), tp | dp, ())
    assert merge(table, source("rank id", "other", "f.py", 52, (("*", frozenset({"ep"})),)), frozenset({"ep"}), ())
