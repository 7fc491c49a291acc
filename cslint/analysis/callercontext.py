"""The calling conditions of a summarised function reach every function it
calls.

A summary keeps a call site only where its arguments or its own tests carry
something (``SummaryWalk._calls``), so the whole-tree pass hands a
function's calling conditions (``Program.ctx``) on through those sites
alone.  A helper that reaches no collective, called under a rank test
(``if rank == 0: fill(buf)``), runs everything it calls on those ranks
only, whatever it passes: a method it calls with constant arguments, or
none (``buf.init_data()``), sets its fields there alone.  Its other calls,
``FuncFacts.passing_refs`` and ``FuncFacts.bare_refs``, take the same
conditions here, its calls on ``self`` too: ``if rank == 0: self._maybe()``
with ``_maybe`` calling ``self._set()`` sets the field on rank 0 alone
(reviewB54 fx/bare b2; its sites, those on ``self`` a test of its own keeps
included, hand them on in ``Program._step``).  A constructor's calls on
``self`` are the exception (:func:`hands_context_to`): the object it makes
exists only where it ran, so whoever reads the fields those methods set
holds it, and got the calling conditions already (the implicit flow of the
assignment), as for the constructor's own fields.
"""

from __future__ import annotations

from .divergence import merge
from .selfcalls import SELF_REFS
from .syntax import CONSTRUCTORS


def pass_calling_context(program, fn, variant, calling_ctx: dict, mode: frozenset, direct_only) -> bool:
    """Merge ``calling_ctx`` (``fn``'s calling conditions in ``mode``, the
    kinds in ``direct_only`` left out) into the calling conditions of each
    function ``fn`` calls without a site of ``variant`` (those get it at
    their site); whether a table changed."""
    if fn.deep or not calling_ctx:
        return False
    passed = {k: e for k, e in calling_ctx.items() if not (k.tag == "S" and k.kind in direct_only)}
    if not passed:
        return False
    at_sites = {site.ref for site in variant.sites}
    resolve = program.resolver.resolve
    changed = False
    for ref in fn.passing_refs + fn.bare_refs:
        if ref in at_sites or not hands_context_to(fn, ref):
            continue
        for target in resolve(ref):
            link = (fn.path, fn.line, f"`{fn.qualname}` runs only on some ranks and calls `{target.qualname}`")
            table = program.ctx.setdefault((target.key, mode), {})
            for k, (dims, via) in passed.items():
                if merge(table, k, dims, via, link):
                    changed = True
                    program.changed_keys.add(("ctx", target.key))
    return changed


def hands_context_to(fn, ref) -> bool:
    """Whether the summarised ``fn`` hands its calling conditions to what its
    call ``ref`` runs: to all but a constructor's calls on ``self``."""
    return ref.tag not in SELF_REFS or fn.qualname.rsplit(".", 1)[-1] not in CONSTRUCTORS


def context_receivers(fn) -> list:
    """The references whose calling conditions a step of the summarised
    ``fn`` may change besides its sites' (``demand.table_writes``)."""
    out = []
    if not fn.deep:
        for refs in (fn.passing_refs, fn.bare_refs):
            for ref in refs:
                if hands_context_to(fn, ref):
                    out.append(ref)
    return out


def reads_no_context(fn) -> bool:
    """Whether a step of ``fn`` reads nothing of its calling conditions: a
    summary that writes no field and calls nothing of the tree hands them
    to nothing (``Program._step``), so stepping what calls it for them
    changes nothing read."""
    if fn.deep or context_receivers(fn):
        return False
    for v in fn.variants.values():
        if v.fields or v.sites:
            return False
    return True
