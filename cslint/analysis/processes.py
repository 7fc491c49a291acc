"""Which processes a function runs in, told by how its class binds it
(issue 14).

A class that picks its event loop by a group's size,

    if self.dist.pp_size > 1:
        self.loop = self._loop_pp
    else:
        self.loop = self._loop

runs ``_loop_pp`` only in processes whose group has several ranks and
``_loop`` only in those whose group has one (each bound nowhere else and
called by no name in the tree: ``FuncFacts.single_rank_bindings``,
``FuncFacts.several_rank_bindings``).  The two never run in one process, so
nothing the first writes or hands on reaches what the second reads.

The whole-tree pass keeps one table per field or parameter for the whole
tree, so what such a function writes out carries that fact on its sources
instead: each source it hands to a table is marked with the dimensions of
the group that has several ranks wherever it runs (:func:`marked`, an entry
of the source's own ``dims`` spec no mode is named like, so evaluating the
source is unchanged).  A question asked of a function that runs only where
that group has one rank leaves the marked sources out
(:func:`apart_from`); every other question reads them as before.  A marked
source covers no unmarked one in a capped map (``divergence.merge``)."""

from __future__ import annotations

from ..presets import GENERIC_WORLD
from .divergence import SEVERAL_RANKS, several_ranks_only


def bound_methods(funcs, resolver, bindings: str, world=GENERIC_WORLD) -> dict:
    """function key -> dimensions: a method bound only on one side of a size
    test (``bindings``: the FuncFacts field naming those sides' bindings,
    ``single_rank_bindings`` or ``several_rank_bindings``) and never called
    by name anywhere in the tree runs only where that group has one rank
    (or several): no condition in a single-rank one can differ along the
    group's dimensions (see UniformityInfo.divergence), and what a
    several-rank one writes out never reaches a single-rank one."""
    bound: dict = {}
    for fn in funcs:
        for method, group in getattr(fn, bindings):
            bound.setdefault((fn.class_key, method), []).append(group)
    if not bound:
        return {}
    called = frozenset().union(*(fn.called_names for fn in funcs))
    out = {}
    for (class_key, method), groups in sorted(bound.items()):
        cls = resolver.classes.get(class_key)
        fkey = cls.methods.get(method) if cls is not None else None
        if fkey is None or method in called:
            continue
        # bound under several tests: it runs where any one of them holds
        out[fkey] = frozenset.intersection(*(world.span(g) for g in groups))
    return out


def marked(value: dict, dims: frozenset) -> dict:
    """``value`` (a divergence map) with each source marked as written out
    only where the group of ``dims`` has several ranks."""
    out = {}
    tag = (SEVERAL_RANKS, tuple(sorted(dims)))
    for k, entry in value.items():
        if k.tag == "S" and not several_ranks_only(k):
            k = k._replace(dims=k.dims + (tag,))
        out[k] = entry
    return out


def apart_from(source, single_dims: frozenset) -> bool:
    """Whether ``source`` flows only in processes where a group of
    ``single_dims`` (those of a group that has one rank wherever the reading
    function runs) has several ranks: it never reaches that function."""
    several = several_ranks_only(source)
    return bool(several) and bool(single_dims) and several <= single_dims
