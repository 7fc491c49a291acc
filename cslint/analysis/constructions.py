"""What a field of an object holds where the reader sees the call that built
it: ``req = Request(ids, params)`` then ``req.ids``.

A field's table is one for every object of its class family: what each
constructor call passes for a parameter the constructor stores reaches every
reader of the field.  So a benchmark that builds its requests from a prompt
file it found on this node's disk would make the length of every request's
prompt differ, also of the requests a server builds from what every rank
received alike.  An object the reader built itself holds, of what its
constructor stores from its parameters, what that one call passed:

- beside the field's table, a table of everything written to the field except
  what a constructor stores from its own parameters (:data:`BUILT_APART`,
  written for the fields some constructor of the family stores,
  :func:`constructor_fields`); what a constructor stores that does not come
  from its parameters, what any other method or function writes, a signal
  handler's flag, still goes there;
- a read of ``attr`` of a construction (:func:`constructed_by`: a call of a
  class whose constructors call no other constructor of the family on the
  same object, ``super().__init__(...)``, so their own stores are all it
  runs; with arguments written out) reads that table and the constructors'
  stores of ``attr`` with their parameters bound to this call's arguments
  (:func:`built_field`).

The same holds of an object a factory hands back where every ``return`` of
the factory is one such construction (``def make(self, recv, *args,
**kwargs): return Req(*args, **kwargs)``; :func:`factory_construction`): the
constructor's parameters take what the factory passes them, the factory's
own parameters in turn what the call of the factory passes (a constructor
parameter that the factory's own ``**kwargs`` fills takes the keyword of
that name, not every keyword of the call).

An object of unknown provenance (an element of a queue, a field, a parameter)
still reads the whole table: which construction made it is not known.
"""

from __future__ import annotations

from .atoms import field_name
from .callrefs import ref_offset
from .divergence import extend_via, merge, substituted
from .positions import parameter_of
from .records import called_refs, written_variants

#: Spelt after a field's name (never a Python name): the table of what the
#: field holds apart from what constructors store from their parameters.
BUILT_APART = "#built"

#: the references of a call that builds an object of a class the tree defines
#: (a local bound to one of several: classargs.py)
CONSTRUCTION_REFS = frozenset({"class", "qual", "chosen"})


def built_apart(attr: str) -> str:
    return attr + BUILT_APART


def is_constructor(fn) -> bool:
    return fn.class_key is not None and fn.qualname.endswith(".__init__")


def stores_own_field(fn, write, family_of) -> bool:
    """Whether ``write`` is a constructor's plain store into a field of its own
    object (``self.attr = value``, not an element, not into another object)."""
    return (not write.element and is_constructor(fn) and write.attr == field_name(write.attr)
            and family_of(write.class_key) == family_of(fn.class_key))


def constructor_fields(funcs, family_of) -> frozenset:
    """(family, attr) of the fields some constructor of the family stores into
    its own object: those keep :data:`BUILT_APART` tables."""
    out = set()
    for fn in funcs:
        if not is_constructor(fn):
            continue
        for v in written_variants(fn):
            for write in v.fields:
                if stores_own_field(fn, write, family_of):
                    out.add((family_of(write.class_key), write.attr))
    return frozenset(out)


def _runs_another_constructor(fn, resolve) -> bool:
    """Whether a constructor runs another constructor on its object, or may:
    ``super().__init__(...)``, ``Base.__init__(self, ...)``."""
    for ref in called_refs(fn):  # (a call passing nothing binds no parameter of the other)
        if ref.tag in CONSTRUCTION_REFS and not (ref.tag == "qual" and ref.dotted.endswith(".__init__")):
            continue  # another object built
        if any(target.qualname.endswith(".__init__") for target in resolve(ref)):
            return True
    return False


def constructed_by(resolver, atom) -> tuple:
    """The constructors a call result ``atom`` is the object of, where they
    are all it runs on it and the call writes its arguments out (directly,
    or through a factory: :func:`factory_construction`); else ()."""
    if atom.tag != "R" or not (atom.args or atom.kwargs):
        return ()  # (a call past the nesting limit keeps no arguments: they went beside it)
    if not _builds(resolver, atom):
        made = factory_construction(resolver, atom)
        return () if made is None else constructed_by(resolver, made[1])
    targets = resolver.resolve(atom.ref)
    if any(_runs_another_constructor(fn, resolver.resolve) for fn in targets):
        return ()
    return tuple(targets)


def _builds(resolver, atom) -> bool:
    """Whether the call ``atom`` calls a class itself (every target a constructor)."""
    if atom.ref.tag not in CONSTRUCTION_REFS:
        return False
    targets = resolver.resolve(atom.ref)
    return bool(targets) and all(is_constructor(fn) for fn in targets)


def factory_construction(resolver, atom):
    """``(factory, construction)`` where the call ``atom`` runs one function
    of the tree (no constructor) every ``return`` of which, in every variant,
    hands back one and the same call building an object
    (``return Req(*args, **kwargs)``), its arguments in the factory's terms;
    else None."""
    targets = resolver.resolve(atom.ref)
    if len(targets) != 1 or is_constructor(targets[0]) or not targets[0].returns_terms:
        return None  # (a factory declares or builds what it returns: the typing of its result reads the same)
    (factory,) = targets
    made = None
    for v in factory.variants.values():
        if len(v.returns) != 1:
            return None
        (returned,) = v.returns
        if returned.tag != "R" or returned.ref.tag not in CONSTRUCTION_REFS or (made is not None and returned != made):
            return None
        made = returned
    if made is None or not any(is_constructor(fn) for fn in resolver.resolve(made.ref)):
        return None
    return factory, made


def constructor_stores(program, targets, family, attr: str):
    """(constructor, write) of the stores the constructors ``targets`` make into
    their object's field ``attr``."""
    family_of = program.resolver.family
    for fn in targets:
        for v in written_variants(fn):
            for write in v.fields:
                if write.attr == attr and family_of(write.class_key) == family and stores_own_field(fn, write, family_of):
                    yield fn, v, write


def built_field(program, atom, targets, family, attr: str, mode: frozenset) -> dict:
    """What the constructors ``targets`` store into ``attr`` from their
    parameters, bound to the arguments of the call ``atom`` (the rest of
    what they store is in the :data:`BUILT_APART` table)."""
    out: dict = {}
    made = None if _builds(program.resolver, atom) else factory_construction(program.resolver, atom)
    call = atom if made is None else made[1]  # the construction itself
    for fn, v, write in constructor_stores(program, targets, family, attr):
        if program.variant(fn, mode) is not v:
            continue
        stored = {k: entry for k, entry in program.eval(write.atoms, mode).items() if k.tag == "PARAM"}
        if not stored:
            continue
        def passed(k, fn=fn):
            arg = program.arg_for_param(fn, k.index, call.args, call.kwargs, 1)
            if arg is None:
                return None
            name = fn.params[parameter_of(k.index)]
            link = (call.path, call.line, f"passed as `{name}` to `{fn.qualname}`")
            program.link_functions[link] = ("param", (fn.key,), name)
            value = program.eval(arg, mode)
            if made is not None:  # the factory's parameters: what the call of the factory passes
                value = substituted(value, lambda p: _factory_argument(program, made[0], p, atom, name, mode))
            return {k2: (dims, extend_via(via, link)) for k2, (dims, via) in value.items()}
        link = (fn.path, write.line, f"`self.{attr}` is assigned from it in `{fn.qualname}`")
        program.link_functions[link] = ("field", (fn.key,), f"self.{attr}")
        for k, (dims, via) in substituted(stored, passed).items():
            merge(out, k, dims, via, link)
    return out


def _factory_argument(program, factory, slot, atom, name: str, mode: frozenset):
    """What the call ``atom`` of ``factory`` passes for its parameter
    ``slot`` (a ``PARAM`` source), which the factory hands on to the
    constructor's parameter ``name``: for the factory's own ``**kwargs``,
    the call's keyword ``name`` alone where it spreads no mapping itself."""
    offset = ref_offset(atom.ref, factory)
    index = slot.index
    if index < len(factory.params) and factory.params[index][:2] == "**" and name not in factory.params:
        if not any(kw[:2] == "**" for kw, _atoms in atom.kwargs):  # (a mapping spread may hold the keyword)
            arg = next((atoms for kw, atoms in atom.kwargs if kw == name), None)
            return _passed_to_factory(program, factory, atom, factory.params[index], arg, mode)
    arg = program.arg_for_param(factory, index, atom.args, atom.kwargs, offset)
    pname = factory.params[parameter_of(index)]
    return _passed_to_factory(program, factory, atom, pname, arg, mode)


def _passed_to_factory(program, factory, atom, pname: str, arg, mode: frozenset):
    if arg is None:
        return None
    link = (atom.path, atom.line, f"passed as `{pname.lstrip('*')}` to `{factory.qualname}`")
    program.link_functions[link] = ("param", (factory.key,), pname)
    return {k: (dims, extend_via(via, link)) for k, (dims, via) in program.eval(arg, mode).items()}


def stored_apart(fn, write, stored: dict, family_of):
    """What the store ``write`` of ``fn`` (its value ``stored``, parameters
    symbolic) puts in the :data:`BUILT_APART` table where it is a
    constructor's store into its own object: what does not come from the
    constructor's parameters; None for any other store (all of it goes there)."""
    if not stores_own_field(fn, write, family_of):
        return None
    return {k: entry for k, entry in stored.items() if k.tag != "PARAM"}


def built_reads(program, atom, attr: str, families) -> list:
    """(table entry, atoms) that a read of ``attr`` of the object ``atom``
    depends on beyond the field's tables, where a call built it
    (:func:`constructed_by`): the :data:`BUILT_APART` tables, what the
    constructors store and, through a factory, what its construction passes
    them (for ``table_reads``)."""
    built = constructed_by(program.resolver, atom) if families else ()
    out = []
    # through a factory, the constructors' parameters take the construction's
    # arguments, in the factory's own terms (its fields, its calls): read
    # where the object is read, not through what the factory returns
    made = None if not built or _builds(program.resolver, atom) else factory_construction(program.resolver, atom)
    passed = () if made is None else [*made[1].args, *(arg for _, arg in made[1].kwargs)]
    for family in families if built else ():
        out.append((("field", family, built_apart(attr)), ()))
        out.extend((("field", family, built_apart(attr)), write.atoms)
                   for _fn, _v, write in constructor_stores(program, built, family, attr))
        out.extend((("field", family, built_apart(attr)), arg) for arg in passed if arg)
    return out


def field_of(program, atom, built: tuple, family, attr: str, mode: frozenset) -> dict:
    """The field ``attr`` (of ``family``) of the object ``atom``: where a call
    built it (``built``: its constructors, :func:`constructed_by`), the
    :data:`BUILT_APART` table and what they store from this call's
    arguments; else the field's table."""
    if not built or (family, attr) not in program.built_fields:
        return program.fields.get((family, attr, mode), {})
    out = built_field(program, atom, built, family, attr, mode)
    for k, (dims, via) in program.fields.get((family, built_apart(attr), mode), {}).items():
        merge(out, k, dims, via)
    return out
