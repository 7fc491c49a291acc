"""Divergence maps: what a value's divergence resolves to in the whole-tree
pass.  A map goes from a rank-local :class:`~cslint.analysis.atoms.Source`
(or a :class:`ParamSlot` standing for whatever callers pass) to ``(the
dimensions it still differs along, the flow links it travelled)``.

Every operation on maps (union, a group collective removing its dimensions,
narrowing to what a parameter carries) works dimension by dimension, so the
dimensions of a map stay exact even where the list of alternative
explanations is cut (:data:`MAX_SOURCES`).  The order in which a map meets
its entries picks the explanation a finding cites, so atoms are visited in a
canonical order (:func:`canonical_order`) that follows neither the hash seed
nor how a set was built.
"""

from __future__ import annotations

import functools
import hashlib
import os
from typing import NamedTuple, Optional

from .atoms import DROP, IDENT, KINDS_ONLY, STRENGTH_OF_WHOLE, compose, project_source, unpicked
from .modulenames import module_name_for

#: flow links an explanation shows (the first ones: from the source onwards);
#: a longer flow is shown cut
MAX_VIA = 4
#: flow links kept per entry: what the whole-tree pass reads of a flow past
#: what an explanation shows -- how long it is (the shortest flow explains a
#: finding) and which fields it passes (the root-cause report's downstream
#: fold, ``hazards._fold_downstream``)
MAX_KEPT_VIA = 32
#: the link a flow ends with when links past MAX_KEPT_VIA were dropped: a
#: flow of MAX_KEPT_VIA links without it is complete
CUT_LINK = ("", 0, "")


# A divergence map keeps every source until it holds this many; past that a
# new source is kept only if it makes a dimension divergent that none of the
# kept ones does.  The dimensions of the map (what decides a hazard) stay
# exact, because every operation on maps (union, a group collective removing
# its dimensions, narrowing to what a parameter carries) works dimension by
# dimension; only the list of alternative explanations is cut.  Without the
# cap, tables on large trees collected hundreds of sources each and the
# fixpoint crawled through one new source per round.
MAX_SOURCES = 4

class ParamSlot(NamedTuple):
    """A divergence-map key standing for whatever callers pass as the
    parameter at ``index`` (return summaries keep parameters symbolic),
    seen through ``transform`` (:func:`~cslint.analysis.atoms.compose`):
    ``len(p)`` returned depends on the structure of what callers pass."""

    tag: str  # "PARAM"
    index: int
    transform: str = IDENT


def param_slot(index: int, transform: str = IDENT) -> ParamSlot:
    return ParamSlot("PARAM", index, transform)


#: compose(first, then) by (first, then): a handful of transforms, met often
_COMPOSED: dict = {}


def substituted(value: dict, argument) -> dict:
    """``value`` with each symbolic parameter (a ``PARAM`` source) replaced by
    what ``argument(source)`` says is passed for it (a divergence map, or
    None for nothing), seen through the parameter's transform and kept to
    the dimensions the parameter differed along."""
    out: dict = {}
    for k, (dims, via) in value.items():
        if k.tag != "PARAM":
            if len(out) < MAX_SOURCES and k not in out:
                out[k] = (dims, via)  # what merge does with a new key below the cap
            else:
                merge(out, k, dims, via)
            continue
        passed = argument(k)
        if not passed:
            continue
        for k2, (d2, v2) in transformed(passed, k.transform).items():
            d = d2 & dims
            if d:
                merge(out, k2, d, v2)
    return out


def transformed(value: dict, transform: str) -> dict:
    """A divergence map seen through a transform: each source keeps the
    part (structure, contents) that still counts; symbolic parameters
    compose the transform."""
    if transform == IDENT or not value:
        return value
    out: dict = {}
    for k, (dims, via) in value.items():
        if k.tag == "PARAM":
            combined = _COMPOSED.get((k.transform, transform))
            if combined is None:
                combined = _COMPOSED[(k.transform, transform)] = compose(k.transform, transform)
            if combined != DROP:
                merge(out, param_slot(k.index, combined), dims, via)
            continue
        seen = project_source(k, transform)
        if seen is not None:
            if len(out) < MAX_SOURCES and seen not in out:
                out[seen] = (dims, via)  # what merge does with a new key below the cap
            else:
                merge(out, seen, dims, via)
    return out


#: the key of the entry of a source's ``dims`` spec that marks it
SEVERAL_RANKS = "@several-ranks"


def several_ranks_only(source) -> frozenset:
    """The dimensions of the group that has several ranks wherever the flow
    of ``source`` (a divergence map's key) was written out; empty for an
    unmarked one."""
    if source.tag != "S" or not source.dims:
        return frozenset()
    last = source.dims[-1]
    return frozenset(last[1]) if last[0] == SEVERAL_RANKS else frozenset()


def read_as_stored(value: dict) -> dict:
    """A divergence map read back from where a function stored it (a field):
    a source marked as the index of a pick from a parameter
    (:attr:`~.atoms.Source.picks_from`) no longer is one, since what a later
    call passes there says nothing of the list the stored pick came from."""
    for k in value:  # (a loop, not a generator: a field is read very often, almost never with a mark)
        if k.tag == "S" and k.picks_from:
            break
    else:
        return value
    out: dict = {}
    for k, (dims, via) in value.items():
        merge(out, unpicked(k) if k.tag == "S" and k.picks_from else k, dims, via)
    return out


def merge(target: dict, key, dims: frozenset, via: tuple, link: Optional[tuple] = None) -> bool:
    """Add ``key``'s dimensions to a map; whether the map changed.  With
    ``link``, an added entry's flow is ``via`` continued by it
    (:func:`extend_via`), made only then: an entry the map holds keeps its
    own flow, and most merges add nothing."""
    if key not in target:  # (``in`` and a subscript below, not a call of target.get: merge is met very often)
        if len(target) >= MAX_SOURCES and key.tag != "PARAM":
            # a source is covered only by others that count as much (see
            # atoms.strength): whose structure differs, for one whose
            # structure differs (a structure read drops the rest); that are
            # not only held, for one of contents (a test drops what is held)
            # (and one marked as written out only where a group has several
            # ranks covers no unmarked one, which reaches where it does not;
            # one read only as a pick's index covers none, as a call handing
            # an alike display drops it: atoms.Source.picks_from)
            part = STRENGTH_OF_WHOLE[key.whole]
            unmarked = not several_ranks_only(key)
            covered: frozenset = frozenset()
            # (a loop with several_ranks_only written out, not a generator calling it per entry: a full map
            # meets every later source here)
            for k, (d, _v) in target.items():
                if k.tag == "S" and STRENGTH_OF_WHOLE[k.whole] <= part and k.whole != KINDS_ONLY \
                        and not k.picks_from \
                        and not (unmarked and k.dims and k.dims[-1][0] == SEVERAL_RANKS and k.dims[-1][1]):
                    if dims <= d:
                        return False  # (one entry alone covers it, as for every source covered in SGLang srt/managers: no union)
                    covered = covered | d if covered else d
            if dims <= covered:
                return False
        target[key] = (dims, via if link is None else extend_via(via, link))
        return True
    old_dims, old_via = target[key]
    if dims <= old_dims:
        return False
    target[key] = (old_dims | dims, old_via)
    return True


def extend_via(via: tuple, link: tuple) -> tuple:
    """The flow ``via`` continued by ``link`` (up to :data:`MAX_KEPT_VIA`
    links; past them it ends with :data:`CUT_LINK`)."""
    if len(via) >= MAX_KEPT_VIA:
        return via if via[-1] == CUT_LINK else via + (CUT_LINK,)
    return via + (link,)


def is_cut(via: tuple) -> bool:
    """Whether an explanation of the flow ``via`` leaves links out (it has
    more than :data:`MAX_VIA`)."""
    return len(via) > MAX_VIA


def links_dropped(via: tuple) -> bool:
    """Whether links of the flow ``via`` were dropped (past :data:`MAX_KEPT_VIA`):
    what the pass knows of the flow is not all of it."""
    return bool(via) and via[-1] == CUT_LINK


def shown_links(via: tuple) -> tuple:
    """The links of ``via`` an explanation shows."""
    return via[:MAX_VIA]


def dims_in(spec: tuple, mode: frozenset) -> frozenset:
    """The dimensions a source's ``dims`` spec gives under a mode assignment."""
    table = dict(spec)
    for name in sorted(mode):
        if name in table:
            return table[name]
    if not mode and "" in table:
        return table[""]
    return table.get("*", frozenset())


def fewest_links_first(entry) -> tuple:
    """Order of a divergence map's entries when one explains a hazard: the
    shortest flow first, ties broken by the source's own text and place
    (never by the order of the set of dimensions it carries, which follows
    the hash seed)."""
    origin, (_dims, via) = entry
    if origin.tag != "S":
        return (len(via), 0, repr(tuple(origin)))
    return (len(via), 1, origin.kind, origin.text, origin.path, origin.line, not origin.whole,
            structure_digest(origin.dims, {}))


def _atom_rank(atom: tuple) -> tuple:
    """What usually tells atoms apart, made of strings and ints only."""
    tag = atom.tag
    if tag == "S":
        return (tag, atom.kind, atom.text, atom.path, atom.line)
    if tag == "R":
        return (tag, atom.path, atom.line, atom.text, atom.depth, repr(tuple(atom.ref)))
    if tag == "E" or tag == "X" or tag == "T":
        return (tag, atom.path, atom.line, atom.text, repr(tuple(atom.ref)))
    if tag == "C":
        return (tag, atom.group, "", atom.depth)
    if tag == "J":
        return (tag, atom.transform)
    if tag == "A":
        return (tag, atom.attr)
    return (tag,) + tuple(str(part) for part in atom[1:])


def canonical_order(atoms, digests: Optional[dict] = None) -> tuple:
    """The atoms sorted by :func:`_atom_rank`; atoms that share a rank (the
    same call on one line with other arguments, collectives over one group)
    are ordered by a digest of their whole structure."""
    listed = list(atoms)
    return tuple(listed[i] for i in canonical_positions(listed, digests))


def canonical_positions(listed: list, digests: Optional[dict] = None) -> list:
    """:func:`canonical_order` as positions in ``listed`` (the set's atoms in
    its own iteration order): what a process that shares the set's memory
    can hand to another without sending the atoms."""
    # each atom's rank is computed once (it spells out the atom's reference)
    ranks = [_atom_rank(atom) for atom in listed]
    order = sorted(range(len(listed)), key=ranks.__getitem__)
    # Only atoms whose rank ties with another's need a digest: sorting a run
    # of equal ranks by digest is what sorting everything by (rank, digest)
    # does to it, and the digest is the costly part.
    memo = None
    start = 0
    while start < len(order):
        end = start + 1
        rank = ranks[order[start]]
        while end < len(order) and ranks[order[end]] == rank:
            end += 1
        if end - start > 1:
            if memo is None:
                memo = {} if digests is None else digests
            # (the run holds its positions in ascending order, as the stable sort
            # by rank left them: a digest tie keeps that order either way)
            run = order[start:end]
            order[start:end] = [i for _digest, i in sorted(zip([structure_digest(listed[i], memo) for i in run], run))]
        start = end
    return order


@functools.lru_cache(maxsize=None)
def _portable(text: str) -> str:
    """What a digest reads of a text: the absolute path of a Python file (atoms
    name the file they come from) reads as its path below the directory Python
    imports it from, so the order of atoms that tie, and with it which source
    or chain a finding cites, does not change when the tree is copied or moved
    elsewhere (results never depend on where a tree lives, issue 12)."""
    if not text.endswith(".py") or not os.path.isabs(text):
        return text
    depth = module_name_for(text).count(".") + (2 if os.path.basename(text) == "__init__.py" else 1)
    return "/".join(text.replace(os.sep, "/").split("/")[-depth:])


def structure_digest(value, memo: dict) -> bytes:
    """A digest of nested tuples and frozensets that does not depend on the
    iteration order of any set in them (the digests of a set's elements are
    sorted).  ``memo`` maps ``id(part)`` to ``(part, digest)``: atom sets
    share parts (a DAG), each is digested once, and keeping the part beside
    its digest keeps its id from being reused.  It also maps a part itself
    (a tuple, a frozenset or a text) to its digest: atoms built again in the
    fixpoint, or unpickled from different workers, are equal objects with
    other ids.  Equal values have equal digests here because an atom's
    leaves are texts, ints and bools that never stand in for one another
    (``1 == True``, but no field holds either)."""
    t = type(value)
    if t is str:  # the memo's other keys are ids (ints) and tuples: no clash
        found = memo.get(value)
        if found is None:
            found = memo[value] = hashlib.blake2b(repr(_portable(value)).encode("utf-8", "surrogateescape"),
                                                  digest_size=12).digest()
        return found
    if t is int or t is bool:  # leaves met again and again: kept under (type, value), no part's key (1 == True)
        found = memo.get((t, value))
        if found is None:
            found = memo[(t, value)] = hashlib.blake2b(repr(value).encode("utf-8", "surrogateescape"),
                                                     digest_size=12).digest()
        return found
    is_set = t is frozenset  # (no frozenset is of a class of its own)
    if is_set or t is tuple or isinstance(value, tuple):  # typed atoms and refs are tuples
        known = memo.get(id(value))
        if known is not None:
            owner, result = known
            if owner is value:
                return result
        found = memo.get(value)
        if found is None:
            # (a text met before is looked up here, not digested by a call: atoms hold many)
            parts = [memo[item] if type(item) is str and item in memo else structure_digest(item, memo)
                     for item in value]
            if is_set:
                parts.sort()
            found = memo[value] = hashlib.blake2b((b"{" if is_set else b"(") + b"".join(parts),
                                                  digest_size=12).digest()
        memo[id(value)] = (value, found)
        return found
    return hashlib.blake2b(repr(value).encode("utf-8", "surrogateescape"), digest_size=12).digest()
