"""Broadcasts a fix can carry a condition in, mixed into the query object (:class:`BroadcastCarriers`): another method
of a condition's class (family) that broadcasts, on every call, an object a class of the tree builds over a group
covering the condition's, so the condition can travel in that object instead of a new collective
(:class:`ScheduleCarrier`, ``schedule_carrier``)."""

from __future__ import annotations

from typing import NamedTuple

from .records import FuncFacts, Site


class ScheduleCarrier(NamedTuple):
    """An object a method of the finding's class broadcasts to every rank
    of a group on every call (no condition in that method decides the
    broadcast): a condition can travel in it instead of a new collective."""

    function: str  # qualified name of the broadcasting method
    path: str
    site: Site  # the broadcast call
    collective: str
    group: str
    factory: str  # text of the call that builds the object on the root
    cls: str  # the class's dotted name (module and class), as imported
    cls_path: str  # its file, "" when that file was not analysed
    module: str  # the broadcasting function's module (where to look for an unanalysed class's file)


#: collectives that hand the root's object to every rank of their group
_BROADCAST_WORDS = ("broadcast", "bcast")


class BroadcastCarriers:
    """Mixed into :class:`~cslint.analysis.uniformity.UniformityInfo`: reads ``self.program`` and ``self.knowledge``,
    and keeps the functions of a class family per file in ``self._members_of``."""

    def schedule_carrier(self, function: FuncFacts, group: str, mode: frozenset = frozenset()):
        """A :class:`ScheduleCarrier` for a condition of ``function`` that
        must be the same on every rank of ``group``: another method of the
        same class (family) that broadcasts, unconditionally, over a group
        covering ``group``, an object built by a call of a class of the tree
        (a class method or its constructor); None when there is none."""
        program = self.program
        resolver = program.resolver
        family = resolver.family(function.class_key)
        if family is None:
            return None
        span = self.knowledge.world.span(group)
        for other in self._family_members(family, function.path):
            if other is function or not other.deep:  # (a summary's call sites issue no collective: summary.py)
                continue
            variant = program.variant(other, mode)
            if variant is None:
                continue
            for site in variant.sites:
                found = site.collective
                if found is None or site.conds or not any(word in found.name.lower() for word in _BROADCAST_WORDS):
                    continue
                if not self.knowledge.world.span(found.group) >= span or site.fix is None or site.fix.payload is None \
                        or site.fix.payload_keyword or not site.args:
                    continue
                built = self._constructed_class(site.args[0])
                if built is not None:
                    factory, dotted, cls_path = built
                    return ScheduleCarrier(other.qualname, other.path, site, found.name, found.group, factory,
                                           dotted, cls_path, other.module)
        return None

    def _family_members(self, family: str, path: str) -> list:
        """The functions of a class family defined in one file, by key
        (indexed once: every hazard of a class asks)."""
        if self._members_of is None:
            resolver = self.program.resolver
            index: dict = {}
            for fn in sorted(self.program.funcs.values(), key=lambda f: f.key):
                member_of = resolver.family(fn.class_key)
                if member_of is not None:
                    index.setdefault((member_of, fn.path), []).append(fn)
            self._members_of = index
        return self._members_of.get((family, path), [])

    def _constructed_class(self, atoms: frozenset):
        """``(call text, class dotted name, class file)`` of the call among
        ``atoms`` that builds an instance of a class by naming it (its
        constructor, or a class method: ``Schedule.from_result(...)``); the
        file is "" when the class's module was not analysed (a module with
        no collective); None when no such call is there."""
        program = self.program
        resolver = program.resolver
        for atom in sorted(atoms, key=lambda a: (a.tag, getattr(a, "text", ""))):
            if atom.tag != "R" or atom.ref.tag not in ("qual", "class"):
                continue  # built through an instance's method, not by naming the class
            cls = resolver.class_of_ref(atom.ref)
            if cls is None:
                targets = resolver.resolve(atom.ref)
                owners = {t.class_key for t in targets}
                if len(owners) == 1 and None not in owners and targets[0].qualname.rsplit(".", 1)[-1] != "__init__":
                    cls = resolver.classes.get(next(iter(owners)))
            if cls is not None:
                module = program.modules.get(cls.module)
                return atom.text, f"{cls.module}.{cls.key.split(':', 1)[1]}", module.path if module else ""
            if atom.ref.tag == "qual" and not resolver.resolve(atom.ref):
                # `pkg.mod.Class.method` of a module the run did not analyse
                dotted = atom.ref.dotted.rsplit(".", 1)[0]
                if dotted.rsplit(".", 1)[-1][:1].isupper():
                    return atom.text, dotted, ""
        return None
