"""The group a field of an object holds where every construction of its
class hands it one named group.

``class Part: def __init__(self, t, group): self.group = group`` and a
method ``full`` gathering over ``self.group``: read in the class's own file,
the field names no group, so the gather spans every dimension and a stage
test parting the ranks seems to part its members.  Where the tree builds
such objects only over one named group (``Part(t, group=grid.get_tp_group())``
at each construction), every object of the class holds that group, and a
collective over the field runs over it, as does one a callee runs over the
parameter a method of the class hands the field to (``_all_true(self.group,
ok)``) (:func:`construction_groups`):

- the constructor stores the field from one parameter and nothing else
  (``FuncFacts.field_params``), and no other function of the class family
  writes it;
- every call of the tree that runs that constructor (``Part(...)``, a
  subclass built without a constructor of its own, ``super().__init__(...)``)
  is a call site the pass keeps, and every ``cls(...)`` in a classmethod of
  the family (``FuncFacts.built_own_class``: a call the pass otherwise
  leaves unresolved) a construction too,
  passing the parameter a text that names a group
  (:func:`~cslint.presets.group_from_text`), or a parameter of the
  calling function, which the calls of that function bind in turn (up to
  :data:`MAX_CONSTRUCTION_DEPTH` functions up: ``from_meta(meta, group)``
  building ``cls(t, group=group)``);
- all of them name the same group.

A construction the pass cannot read (a call passing the parameter through
``*args``, nothing or a default, a call left out of the summary's sites, a
function with no call at all, a class some function reads as a value --
``return Impl`` from a dispatcher, then ``impl(group=...)`` -- or one a file
the pass did not summarise calls) leaves the field as its file reads it."""

from __future__ import annotations

from typing import Optional

from ..presets import group_from_text
from .atoms import field_name
from .callrefs import call_offset
from .records import written_variants

#: how many functions up a parameter handed to a constructor is bound at its callers
MAX_CONSTRUCTION_DEPTH = 2


def construction_groups(program) -> tuple:
    """``(issued, passed)``: ``id(site) -> group`` for the collectives
    issued over a field of their own object (``group:self.<attr>``, or an
    attribute of it) whose every construction hands it one named group (see
    the module docstring); and ``id(site) -> {"self.<attr>": group}`` for
    the calls in the same class family that pass such a field on
    (``_all_ranks_true(self.group, ok)``), read where the callee's
    collectives over that parameter are bound to the call
    (:func:`~cslint.analysis.program.bound_group`)."""
    wanted: dict = {}  # (class key, attr) -> [the sites over that field alone]
    handing: list = []  # (class key, site) of the calls passing a field of ``self`` on
    for fn in program.funcs.values():
        if not fn.deep or fn.class_key is None:
            continue  # (a summary's call sites issue no collective)
        for variant in fn.variants.values():
            for site in variant.sites:
                found = site.collective
                if found is not None and found.group.startswith("group:self.") and found.group.count(".") == 1:
                    # (``group:self.<attr>.<more>``: a named group's own process groups are that group)
                    wanted.setdefault((fn.class_key, found.group[len("group:self."):]), []).append(site)
                elif site.ref is not None and site.group_args:
                    handing.append((fn.class_key, site))
    if not wanted:
        return {}, {}
    resolver = program.resolver
    family_of = resolver.family
    families = {family_of(key) for key, _attr in wanted}
    classes: dict = {}  # family -> its class keys
    for key in resolver.classes:
        family = family_of(key)
        if family in families:
            classes.setdefault(family, set()).add(key)
    members: dict = {}  # family -> the functions of its classes
    keys = {key: family for family, found in classes.items() for key in found}
    for fn in program.funcs.values():
        family = keys.get(fn.class_key) if fn.class_key is not None else None
        if family is not None:
            members.setdefault(family, []).append(fn)
    out: dict = {}
    fields: dict = {}  # (family, attr) -> the group its constructions name, or None
    for (key, attr), sites in sorted(wanted.items(), key=lambda item: item[0]):
        family = family_of(key)
        if (family, attr) not in fields:
            fields[family, attr] = _field_group(program, members.get(family, ()), classes.get(family, ()),
                                                family, attr)
        group = fields[family, attr]
        for site in sites if group is not None else ():
            out[id(site)] = group
    passed: dict = {}
    for key, site in handing if any(fields.values()) else ():
        family = family_of(key)
        for _where, text in site.group_args:
            if text.startswith("self.") and text.count(".") == 1:
                group = fields.get((family, text[len("self."):]))
                if group is not None:  # (only a field some collective of the family runs over directly)
                    passed.setdefault(id(site), {})[text] = group
    return out, passed


def held_field_params(program, target) -> tuple:
    """``target.field_params`` (the fields an ``__init__`` sets from its
    parameters) where no class of the tree subclasses its class, else
    nothing: they are read off the constructor's file with the object taken
    to be of that class (``self._swap()`` its method, ``super()`` the next
    of its bases), and an object of a subclass runs the subclass's
    overrides, properties and ``__setattr__``, and a ``super()`` chain that
    may pass through a class another base of the subclass brings in
    (``class Sub(Box, Mixin)``: ``super().__init__()`` in ``Box`` runs
    ``Mixin.__init__``).  Without ``program``, nothing."""
    if not target.field_params or program is None or program.resolver.subclassed(target.class_key):
        return ()
    return target.field_params


def _field_group(program, members, class_keys, family: str, attr: str) -> Optional[str]:
    """The one named group every construction hands the field ``attr`` of
    ``family`` (its functions ``members``, its classes ``class_keys``), or None."""
    family_of = program.resolver.family
    stored = None  # (the constructor, the parameter it stores the field from)
    for fn in members:
        fields = held_field_params(program, fn)
        param = dict(fields).get(attr) if fields else None
        if param is not None and stored is None:
            stored = (fn, param)
            continue
        if any(field_name(write.attr) == attr and family_of(write.class_key) == family
               for v in written_variants(fn) for write in v.fields):
            return None  # written elsewhere too (another constructor, a method)
    if stored is None or _built_unseen(program, class_keys):
        return None
    init, param = stored
    memo: dict = {}
    groups = set()
    for fn in members:  # ``cls(...)`` in a classmethod: a construction its callers bind
        for passed in fn.built_own_class:
            groups.add(_group_passed_at(program, fn, dict(passed), param, init.params.index(param) - 1, 0, memo))
    if program.resolver.callers().get(init.key):
        groups.add(_passed_group(program, init, param, 0, memo))
    return next(iter(groups)) if len(groups) == 1 else None  # (None among them: one not read)


def _built_unseen(program, class_keys) -> bool:
    """Whether an object of one of the classes ``class_keys`` may be built
    where the pass reads no call of it: a function reads the class as a
    value (hands it on, returns it, keeps it in a table:
    ``FuncFacts.handed_classes``), or a file whose functions were not
    summarised calls it."""
    classes = program.resolver.classes
    names = {classes[key].name for key in class_keys}
    return not names.isdisjoint(_handed_or_called_unseen(program))


def _handed_or_called_unseen(program) -> frozenset:
    """The names of the classes some function reads as a value, and the
    names files the pass did not summarise call; worked out once."""
    found = program.__dict__.get("_classes_built_unseen")
    if found is None:
        names: set = set()
        for fn in program.funcs.values():
            if fn.handed_classes:
                names |= fn.handed_classes
        for facts in program.files:
            if facts.skipped:
                names |= facts.called_names
        found = program._classes_built_unseen = frozenset(names)
    return found


def _passed_group(program, callee, param: str, depth: int, memo: dict) -> Optional[str]:
    """The one named group every call of ``callee`` in the tree passes for
    its parameter ``param``, or None."""
    key = (callee.key, param)
    if key not in memo:
        memo[key] = None  # (a call back into it while it is worked out passes nothing known)
        memo[key] = _passed_group_of(program, callee, param, depth, memo)
    return memo[key]


def _passed_group_of(program, callee, param: str, depth: int, memo: dict) -> Optional[str]:
    calls = program.resolver.callers().get(callee.key, ())
    if not calls or param not in callee.params:
        return None
    groups: set = set()
    position = callee.params.index(param)
    for caller, ref in calls:
        sites = [site for v in caller.variants.values() for site in v.sites if site.ref == ref]
        if not sites:
            return None  # a call the summary kept no site of: what it passes is not known
        for site in sites:
            if site.star:
                return None
            # (a method called through its class, ``Cls.build(a, g)``, binds its first
            # parameter or not as it is a classmethod or not: by keyword only there)
            offset = callee.self_offset if call_offset(site, callee) or not callee.self_offset else None
            group = _group_passed_at(program, caller, dict(site.group_args), param,
                                     None if offset is None else position - offset, depth, memo)
            if group is None:
                return None
            groups.add(group)
    return next(iter(groups)) if len(groups) == 1 else None


def _group_passed_at(program, caller, passed: dict, param: str, position, depth: int, memo: dict):
    """The named group one call in ``caller`` passes for ``param`` (by
    keyword, or at ``position`` where that is not None), its ``group_args``
    ``passed``: a text naming one, or a parameter of ``caller`` its own
    callers bind to one; else None."""
    text = passed.get(param)
    if text is None and position is not None:
        text = passed.get(position)
    if not text:
        return None  # nothing readable passed there (a default, ``None``, ``*args``)
    group = group_from_text(text)
    if group is not None:
        return group
    if text not in caller.params or depth >= MAX_CONSTRUCTION_DEPTH:
        return None
    return _passed_group(program, caller, text, depth + 1, memo)
