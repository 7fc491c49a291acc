"""Which processes a function runs in, told by how its class binds it, or
by where every call of it is made (issue 14).

A class that picks its event loop by a group's size,

    if self.dist.pp_size > 1:
        self.loop = self._loop_pp
    else:
        self.loop = self._loop

runs ``_loop_pp`` only in processes whose group has several ranks and
``_loop`` only in those whose group has one (each bound nowhere else and
called by no name in the tree: ``FuncFacts.single_rank_bindings``,
``FuncFacts.several_rank_bindings``).  The two never run in one process, so
nothing the first writes or hands on reaches what the second reads.  What
such a method calls runs there too, where nothing else runs it
(:func:`closed_over_calls`): the first stage's ``_schedule_and_propagate()``,
called only from ``_loop_pp``, writes out only where the group has several
ranks.  A method every call of which is made on the single-rank side alone
(``elif get_parallel().pp_size > 1: scheduler.event_loop_pp() else:
scheduler.event_loop()``, :func:`called_methods`) runs only where the group
has one rank as well.

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
from .callrefs import ref_name
from .divergence import SEVERAL_RANKS, several_ranks_only
from .records import every_called_ref, written_variants


def runs_only_where(funcs, files, resolver, bindings: str, world=GENERIC_WORLD,
                    protocol: frozenset = frozenset()) -> dict:
    """function key -> dimensions: the methods bound only on one side of a
    size test (:func:`bound_methods`), for the single-rank side the methods
    called only there (:func:`called_methods`; ``protocol``: the method
    names a library runs without a call naming them), and the methods only
    they call (:func:`closed_over_calls`)."""
    several = bindings == "several_rank_bindings"
    funcs = list(funcs)
    found = bound_methods(funcs, resolver, bindings, world, several)
    if not several:
        for key, dims in called_methods(funcs, files, resolver, world, protocol).items():
            found[key] = found[key] & dims if key in found else dims
    return closed_over_calls(found, funcs, files, resolver, several)


def asserted_single_rank(found: dict, funcs, world=GENERIC_WORLD) -> None:
    """Add to ``found`` (function key -> dimensions) the dimensions of the
    groups a function's opening asserts say have one rank
    (``FuncFacts.asserted_single_groups``): past them it runs only there,
    so these join what is already known of it as a union (each group has
    one rank there)."""
    for fn in funcs:
        if fn.asserted_single_groups:
            dims = frozenset().union(*(world.span(g) for g in fn.asserted_single_groups))
            found[fn.key] = found.get(fn.key, frozenset()) | dims


def called_methods(funcs, files, resolver, world=GENERIC_WORLD, protocol: frozenset = frozenset()) -> dict:
    """function key -> dimensions: a method that every function naming it in
    a call calls only on the side of a size test where the group has one
    rank (``FuncFacts.single_rank_calls``: the stage-count dispatch of an
    event loop, ``elif get_parallel().pp_size > 1: scheduler.event_loop_pp()
    else: scheduler.event_loop()``) runs only where that group has one rank:
    no condition in it can differ along the group's dimensions.  Told by the
    name (:func:`_named_only_there`: no other call names it, no library
    runs it unnamed, ``protocol``, no file reads it as a value,
    ``FileFacts.value_names``: ``finish = info.finalize_local``,
    ``getattr(info, "finalize_local")``: it runs wherever that value is
    called), and only of
    the classes those calls reach (their families, :func:`_reached_families`):
    another class's method of that name runs wherever its own callers do."""
    sides: dict = {}  # method name -> caller key -> the groups of the sides it is called on
    for fn in funcs:
        for name, group in fn.single_rank_calls:
            sides.setdefault(name, {}).setdefault(fn.key, []).append(group)
    out: dict = {}
    if not sides:
        return out
    by_key = {fn.key: fn for fn in funcs}
    for name in _named_only_there(sides, funcs, files, _run_unnamed(files, protocol)):
        callers = sides[name]
        dims = _joined([world.span(group) for key in sorted(callers) for group in callers[key]], False)
        families = _reached_families(resolver, [by_key[key] for key in sorted(callers)], name) if dims else None
        if families:
            for fkey in _methods_named(resolver, name, families):
                out[fkey] = dims
    return out


def _run_unnamed(files, protocol: frozenset, own_receivers: bool = True) -> frozenset:
    """The method names a method may run by without a call naming it: a
    library's ``protocol``, and every name a file reads as a value
    (``FileFacts.value_names``: ``step = server.loop``, ``getattr(self,
    "loop")``), which runs wherever that value is called; with
    ``own_receivers``, those a method reads on its own receiver too
    (``FileFacts.self_value_reads``: ``Thread(target=self._poll)``)."""
    out = protocol.union(*(f.value_names for f in files))
    if own_receivers:
        out = out.union(*({name for _class_key, name in f.self_value_reads} for f in files))
    return out


def _read_on_own_receivers(files, resolver, names) -> frozenset:
    """The keys of the methods of ``names`` that a method's read of
    ``self.<name>`` as a value (``FileFacts.self_value_reads``) may hand on
    (:meth:`~cslint.analysis.resolution.Resolver.reached_through_self`):
    such a method runs wherever that value is called.  Where the reading
    class's lineage in the tree has no method of that name (a mixin reading
    what a class it is joined to has), every method so named may be it."""
    out: set = set()
    for f in files:
        for class_key, name in f.self_value_reads:
            if name in names:
                reached = [fn.key for fn in resolver.reached_through_self(class_key, name)]
                out.update(reached or _methods_named(resolver, name))
    return frozenset(out)


def _reached_families(resolver, callers: list, name: str):
    """The families of the classes whose methods the calls of ``callers``
    naming ``name`` reach, or None where one of them reaches none the tree
    defines (a receiver nothing types): what it runs is then not known, so
    no method is said to run only there."""
    families = set()
    for fn in callers:
        refs = [ref for ref in every_called_ref(fn) if ref_name(ref) == name]
        if not refs:
            return None
        for ref in refs:
            targets = resolver.resolve(ref)
            if not targets or any(target.class_key is None for target in targets):
                return None
            families.update(resolver.family(target.class_key) for target in targets)
    return frozenset(families)


def _named_only_there(sides: dict, funcs, files, unnamed: frozenset = frozenset()) -> list:
    """The method names of ``sides`` (name -> caller key -> what each call
    there says) that no function but those callers names in a call, nor a
    skipped file; no dunder and none of ``unnamed`` (names a method runs by
    without a call naming it: a library's protocol, ``module(x)`` runs
    ``forward``; a read as a value, ``Thread(target=info.finalize_local)``)."""
    if not sides:
        return []
    skipped = frozenset().union(*(f.called_names for f in files if f.skipped))
    naming: dict = {}  # method name -> the keys of the functions with a call naming it
    for fn in funcs:
        for name in sides.keys() & fn.called_names:
            naming.setdefault(name, set()).add(fn.key)
    return [name for name in sorted(sides) if not name.startswith("__") and name not in skipped
            and name not in unnamed and naming.get(name, set()) <= sides[name].keys()]


def _methods_named(resolver, name: str, families=None) -> list:
    """The keys of the methods of that name of every class (no property),
    or of the classes of ``families`` alone."""
    out = []
    for class_key in sorted(resolver.classes):
        if families is not None and resolver.family(class_key) not in families:
            continue
        cls = resolver.classes[class_key]
        fkey = cls.methods.get(name)
        if fkey is not None and name not in cls.properties:
            out.append(fkey)
    return out


def runs_only_on_root(funcs, files, resolver, rank_dims, protocol: frozenset = frozenset()) -> dict:
    """function key -> the dimensions of the groups of which it runs on one
    rank alone (:mod:`~cslint.analysis.rootside`): a method every call naming
    which is made only where a field of the caller's class is there, every
    non-None store of which runs only where this rank's id equals one
    constant ``K`` (:func:`root_fields`).  Told by the name, as
    :func:`called_methods` tells them (a method read as a value runs
    wherever that value is called: a name read so on another receiver is
    none of these, a read of ``self.<name>`` rules out the methods that
    receiver may be, :func:`_read_on_own_receivers`).  ``rank_dims(fn, text)``: the
    dimensions along which ``text`` read in ``fn`` is this rank's id (empty
    where it is not one)."""
    roots = root_fields(funcs, files, resolver.family, rank_dims)
    if not roots:
        return {}
    sides: dict = {}  # method name -> caller key -> [(K, dims, the family of the field's class)]
    for fn in funcs:
        for name, attr in fn.present_calls:
            family = resolver.family(fn.class_key)
            root = roots.get((family, attr))
            if root is not None:
                sides.setdefault(name, {}).setdefault(fn.key, []).append(root + (family,))
    out: dict = {}
    names = _named_only_there(sides, funcs, files, _run_unnamed(files, protocol, own_receivers=False))
    handed = _read_on_own_receivers(files, resolver, frozenset(names))
    for name in names:
        found = [root for key in sorted(sides[name]) for root in sides[name][key]]
        if len({constant for constant, _dims, _family in found}) != 1:
            continue  # the root of one caller's field is not another's
        dims = frozenset.intersection(*(dims for _constant, dims, _family in found))
        if dims:  # (a self call: a method of that name of the callers' families, not of another class)
            for fkey in _methods_named(resolver, name, frozenset(family for _constant, _dims, family in found)):
                if fkey not in handed:
                    out[fkey] = dims
    return out


def root_fields(funcs, files, family_of, rank_dims) -> dict:
    """(family, attr) -> ``(K, dims)``: the fields that are there on one
    rank alone, every non-None store of which (``self.attr = value`` of
    the family's methods, no element store) runs where a test
    ``text == K`` holds, ``text`` this rank's id along ``dims``
    (``FuncFacts.rooted_writes``), no file storing that name on another
    object."""
    rooted: dict = {}  # (family, attr) -> {(function key, line): (function, tests)}
    for fn in funcs:
        for attr, line, tests in fn.rooted_writes:
            rooted.setdefault((family_of(fn.class_key), attr), {})[(fn.key, line)] = (fn, tests)
    if not rooted:
        return {}
    foreign = frozenset().union(*(f.foreign_stores for f in files))
    families = frozenset(family for family, _attr in rooted)
    stores: dict = {}  # (family, attr) -> every (function key, line) storing a value that is not None
    for fn in funcs:
        if fn.class_key is None or family_of(fn.class_key) not in families:
            continue  # (a store into self is made by a method of the family)
        for variant in written_variants(fn):
            for write in variant.fields:
                key = (family_of(write.class_key), write.attr)
                if key in rooted and not write.absent and not write.element:
                    stores.setdefault(key, set()).add((fn.key, write.line))
    out: dict = {}
    for key in sorted(rooted):
        if key[1] in foreign or not stores.get(key):
            continue
        held = None  # K -> the dimensions along which every store so far holds it
        for store in sorted(stores[key]):
            fn, tests = rooted[key].get(store, (None, ()))
            here: dict = {}
            for text, constant in tests:
                dims = rank_dims(fn, text)
                if dims:
                    here[constant] = here.get(constant, frozenset()) | dims
            held = here if held is None else {k: held[k] & here[k] for k in held.keys() & here.keys()}
            if not held:
                break
        found = [(constant, dims) for constant, dims in sorted(held.items(), key=lambda item: item[0]) if dims]
        if len(found) == 1:
            out[key] = found[0]
    return out


def bound_methods(funcs, resolver, bindings: str, world=GENERIC_WORLD, several: bool = False) -> dict:
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
        dims = _joined([world.span(g) for g in groups], several)
        if dims:
            out[fkey] = dims
    return out


def _joined(spans: list, several: bool) -> frozenset:
    """The dimensions of a group that has several ranks (``several``), or
    one, wherever any one group of ``spans`` has: a group spanning the
    dimensions of them all has several ranks where any one of them has;
    only a group spanning the dimensions they share has one rank wherever
    any one of them has."""
    return frozenset().union(*spans) if several else frozenset.intersection(*spans)


def closed_over_calls(found: dict, funcs: list, files, resolver, several: bool) -> dict:
    """``found`` (function key -> dimensions) with each method every call
    naming which is made by a function of it, transitively.  The method is
    of a module where one is bound on a side of a size test, so the
    module's reads of ``self`` attributes as values are known
    (``FuncFacts.handed_methods``); it is no dunder or property (those run
    without a call naming them) and is not read as a value there, and no
    skipped file names it in a call.  Told by the name alone, so every way
    the resolver may tie a call to it is covered, and a call of another
    class's method of that name counts too.  It runs in no process but
    its callers': where a group spanning all their dimensions has several
    ranks (or where a group of the dimensions they share has one).  A call
    of its own counts for nothing."""
    if not found:
        return found
    handed = {fn.path: fn.handed_methods for fn in funcs if fn.single_rank_bindings or fn.several_rank_bindings}
    methods: dict = {}  # name -> the methods of those modules so named
    for fn in funcs:
        if fn.path in handed and fn.self_offset == 1:
            methods.setdefault(fn.qualname.rsplit(".", 1)[-1], []).append(fn)
    wanted = frozenset(methods)
    naming: dict = {}  # method name -> the keys of the functions with a call naming it
    for fn in funcs:
        for name in fn.called_names & wanted:
            naming.setdefault(name, set()).add(fn.key)
    skipped = frozenset().union(*(f.called_names for f in files if f.skipped))
    by_key = {fn.key: fn for fn in funcs}
    out = dict(found)
    work = sorted(found)
    while work:
        caller = by_key.get(work.pop())
        for name in sorted(caller.called_names & wanted if caller is not None else ()):
            if name.startswith("__") or name in skipped:
                continue
            for fn in methods[name]:
                cls = resolver.classes.get(fn.class_key)
                if fn.key in out or name in handed[fn.path] or (cls is not None and name in cls.properties):
                    continue
                ways = naming[name] - {fn.key}
                if not ways or not ways <= out.keys():
                    continue
                dims = _joined([out[key] for key in sorted(ways)], several)
                if dims:
                    out[fn.key] = dims
                    work.append(fn.key)
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
