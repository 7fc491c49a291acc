"""Names across the tree: which function a typed reference
(:mod:`cslint.analysis.atoms`) calls, the class hierarchy (bases, overrides,
families of classes sharing fields) and what each field of ``self`` holds.

A method call resolves by its receiver's type where the function shows it
(:class:`~cslint.analysis.receiverclasses.ReceiverClasses`); on a receiver nothing is known about, when
exactly one method of the tree has that name.

Every answer is a function of the question and the facts alone, whatever
was asked before (see :class:`OpenQuestions`): the whole-tree analysis may
ask in any order, in any process.
"""

from __future__ import annotations

from typing import Optional

from .classargs import ParamClasses
from .receiverclasses import ReceiverClasses
from .receivers import binds
from .records import called_refs, written_variants
from .vocabulary import GENERIC_METHODS


#: methods through which an object shows more than its attributes: its
#: truth, length, equality and order, a call, iteration, item access, a
#: conversion to a number
_VALUE_METHODS = frozenset({
    "__bool__", "__len__", "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__hash__", "__call__",
    "__iter__", "__getitem__", "__contains__", "__int__", "__float__", "__index__",
})
#: bases that add none of those
_NEUTRAL_BASES = frozenset({"object", "ABC", "Protocol", "Generic"})


class OpenQuestions:
    """The questions of a :class:`Resolver` being answered now (``resolve``
    of a reference, ``receiver_types`` of type terms), for the recursion
    their answers can take: a receiver's type can depend on what the very
    call returns (``self.x = self.x.clone()``), and a question asked again
    while open sees nothing (its guard answer).

    An answer that met no guard is the same wherever it is asked: it is
    kept for good.  One that met a guard depends on which questions were
    open: were it kept, the answer to a later question would depend on the
    order of the questions.  So it is kept only as the answer to the
    question asked with nothing open, when no guard it met was that of a
    question open before it (only its own, or those of questions it asked
    itself); asked with something open, it is worked out again.  Each
    answer is then what the recursion gives from that question alone.
    (An answer that met no guard asked nothing open, and could not have
    whatever was open: a question open further out that it reached would
    have reached it back, a guard of its own.)  Cycles are few and small: a
    whole run on vLLM meets 35 guards."""

    __slots__ = ("refs", "terms", "depth", "lowest")

    #: ``lowest`` when no guard answered
    NONE = 1 << 30

    def __init__(self):
        self.refs: dict = {}  # open reference -> its depth
        self.terms: dict = {}  # open type terms -> its depth
        self.depth = 0  # how many questions are open
        self.lowest = self.NONE  # the shallowest open question asked again in the answer being worked out

    def again(self, depth: int) -> None:
        """A question open at ``depth`` was asked again (its guard answers)."""
        if depth < self.lowest:
            self.lowest = depth

    def open(self) -> int:
        """Open a question; the ``lowest`` of the answers around it, to give
        back to :meth:`close`."""
        self.depth += 1
        saved = self.lowest
        self.lowest = self.NONE
        return saved

    def close(self, saved: int) -> int:
        """Close the question opened last; the shallowest guard its answer met
        (``NONE`` for none)."""
        self.depth -= 1
        met = self.lowest
        self.lowest = met if met < saved else saved
        return met

    def answer(self, open_now: dict, key, work, kept: dict, kept_top: dict, guard_answer):
        """The answer to ``key`` (``work(key)``) under the rule above:
        ``open_now`` holds the open questions of its kind, ``kept`` the
        answers that met no guard, ``kept_top`` those kept only for a
        question asked with nothing open; ``guard_answer`` answers a question
        asked again while open.  The caller looks in ``kept`` first."""
        if not self.depth:
            found = kept_top.get(key)
            if found is not None:
                return found
        depth = open_now.get(key)
        if depth is not None:
            self.again(depth)
            return guard_answer
        depth = self.depth
        open_now[key] = depth
        saved = self.open()
        try:
            out = work(key)
        finally:
            del open_now[key]
            met = self.close(saved)
        if met == self.NONE:
            kept[key] = out
        elif met >= depth:
            kept_top[key] = out
        return out


class Resolver:
    """The functions and classes of the analysed files, by key and by
    dotted name; resolves references to the functions they may call."""

    def __init__(self, files: list, discovered: frozenset = frozenset()):
        self.files = files
        self.funcs: dict = {}
        self.classes: dict = {}
        self.modules: dict = {}
        self.funcs_by_qual: dict = {}
        self.alternatives: dict = {}  # key -> the other definitions of a name a block defines (_with_alternatives)
        self.classes_by_qual: dict = {}
        self.methods_by_name: dict = {}
        for ff in self.files:
            self.modules[ff.module] = ff
            for fn in ff.functions:
                self.funcs[fn.key] = fn
                if fn.key != f"{fn.module}:{fn.qualname}":  # (facts.alternative_definitions: a key apart)
                    self.alternatives.setdefault(f"{fn.module}:{fn.qualname}", []).append(fn)
                    continue
                self.funcs_by_qual[f"{fn.module}.{fn.qualname}"] = fn
            for cls in ff.classes:
                self.classes[cls.key] = cls
                self.classes_by_qual[f"{cls.module}.{cls.key.split(':', 1)[1]}"] = cls
                for name, fkey in cls.methods.items():
                    self.methods_by_name.setdefault(name, []).append(fkey)
        self.project_packages = frozenset(module.split(".", 1)[0] for module in self.modules)
        #: module files of the run the prefilter left unanalysed (no collective, no wrapper call): what
        #: they define is known to exist, and known to reach no collective of the tree
        self.unanalysed_modules = frozenset(discovered) - self.modules.keys()
        self._bases: dict = {}
        self._subclasses: dict = {}
        for cls in self.classes.values():
            resolved = []
            for ref in cls.bases:
                base = self.class_of_ref(ref)
                if base is not None:
                    resolved.append(base.key)
                    self._subclasses.setdefault(base.key, []).append(cls.key)
            self._bases[cls.key] = resolved
        self._family = {}
        for key in self.classes:
            self._family[key] = self._find_family(key)
        self.open = OpenQuestions()
        self.receivers = ReceiverClasses(self)
        self._resolve_cache: dict = {}  # ref -> answer, the same wherever asked
        self._resolve_top: dict = {}  # ref -> answer, asked with no question open (see OpenQuestions)
        self._holds_only_fields: dict = {}
        self._methods_asked: Optional[dict] = None  # (family, field) -> the methods called on it
        self.param_classes = ParamClasses(self)
        self._callers: Optional[dict] = None  # see callers

    # -- classes -----------------------------------------------------------------
    def _lookup_qual(self, table: dict, dotted: str, depth: int = 0):
        found = table.get(dotted)
        if found is not None or depth > 3 or "." not in dotted:
            return found
        # re-exports: `pkg.Name` where pkg/__init__ imports Name from elsewhere
        parts = dotted.split(".")
        for split in range(len(parts) - 1, 0, -1):
            mod = ".".join(parts[:split])
            rest = parts[split:]
            ff = self.modules.get(mod)
            if ff is not None and rest and rest[0] in ff.imports:
                target = ".".join([ff.imports[rest[0]]] + rest[1:])
                if target != dotted:
                    return self._lookup_qual(table, target, depth + 1)
        return self._under_unread_package(table, dotted, depth)

    def _under_unread_package(self, table: dict, dotted: str, depth: int):
        """``pkg.Name`` or ``pkg.Name.method`` where ``pkg/__init__.py``
        re-exports ``Name`` but was not analysed (it holds no collective,
        so its imports are unknown): what ``Name`` is in a module under
        ``pkg`` where exactly one analysed class there bears that name, the
        reading :class:`ReceiverClasses` already gives such a name as a type.
        Without it a call of the class, or of a classmethod of it, through
        the package's name ran nothing of the tree: its result was every
        argument at once, and each attribute read of it all of them (a
        model path chosen on this rank made the degree read back from the
        same settings object differ), while the same call through the
        defining module's name bound each argument to its own field.  An
        analysed module on the way ends the search (its own imports were
        followed above)."""
        parts = dotted.split(".")
        if parts[0] not in self.project_packages:
            return None
        for split in range(len(parts) - 1, 0, -1):
            package = ".".join(parts[:split])
            if package in self.modules:
                return None
            cls = self.class_under_package(package + "." + parts[split])
            if cls is not None:
                target = ".".join([f"{cls.module}.{cls.key.split(':', 1)[1]}"] + parts[split + 1:])
                return self._lookup_qual(table, target, depth + 1) if target != dotted else None
        return None

    def class_under_package(self, dotted: str):
        """``pkg.Name``: the one analysed class named ``Name`` in a module
        under ``pkg``; None when there is none or several (same-named
        classes of different modules are never merged)."""
        package, _, name = dotted.rpartition(".")
        if not package:
            return None
        found = [cls for cls in self._by_name().get(name, ()) if cls.module.startswith(package + ".")]
        return found[0] if len(found) == 1 else None

    def function_under_package(self, dotted: str) -> list:
        """``pkg.name`` that no analysed module defines or imports by name
        (``pkg/__init__.py`` was not analysed, or re-exports ``name`` with
        ``from .utils import *``): the one analysed module-level function
        named ``name`` in a module under ``pkg``, as
        :meth:`class_under_package` reads a class ([] when there is none or
        several).  Asked only of what an index picks from a call's result
        (:meth:`~cslint.analysis.reads.ProgramReads._returned`)."""
        package, _, name = dotted.rpartition(".")
        if not package or package.partition(".")[0] not in self.project_packages \
                or package in self.modules and name in self.modules[package].imports:
            return []
        by_name = self.__dict__.get("_functions_by_name")
        if by_name is None:
            by_name = self._functions_by_name = {}
            for fn in self.funcs.values():
                if fn.class_key is None and "." not in fn.qualname:
                    by_name.setdefault(fn.qualname, []).append(fn)
        found = [fn for fn in by_name.get(name, ()) if fn.module.startswith(package + ".")]
        return found if len(found) == 1 else []

    def has_class_named(self, name: str) -> bool:
        """Whether an analysed class bears ``name``."""
        return name in self._by_name()

    def _by_name(self) -> dict:
        by_name = self.__dict__.get("_classes_by_name")
        if by_name is None:
            by_name = {}
            for cls in self.classes.values():
                by_name.setdefault(cls.name, []).append(cls)
            self._classes_by_name = by_name
        return by_name

    def class_of_ref(self, ref):
        """The class a reference names (``class``/``qual``), or None."""
        if ref is None:
            return None
        if ref.tag == "class":
            return self.classes.get(ref.key)
        if ref.tag == "qual":
            return self._lookup_qual(self.classes_by_qual, ref.dotted)
        return None

    def callers(self) -> dict:
        """function key -> ``[(caller, ref), ...]``: the call references of
        every function of the tree (:func:`called_refs`, each once per
        caller) by the functions they may run, in the order of the
        functions; built when first asked.  A call of a class handed in is
        left out: which classes it builds is itself read from this map
        (:class:`~cslint.analysis.classargs.ParamClasses`)."""
        found = self._callers
        if found is None:
            found = {}
            resolve = self.resolve
            for fn in self.funcs.values():
                for ref in dict.fromkeys(called_refs(fn)):
                    if ref.tag != "paramcall":
                        for target in resolve(ref):
                            found.setdefault(target.key, []).append((fn, ref))
            self._callers = found
        return found

    def built_classes(self, ref) -> tuple:
        """The keys of the classes a call through ``ref`` builds an object
        of: the class it names, those a called parameter is handed or a
        called local is bound to (:mod:`~cslint.analysis.classargs`); empty
        for any other call."""
        if ref.tag == "paramcall":
            return self.param_classes.classes(ref)
        if ref.tag == "chosen":  # a local bound to one of these classes: each a class of the tree, or none known
            chosen = [self.class_of_ref(named) for named in ref.refs]
            return () if None in chosen else tuple(sorted({cls.key for cls in chosen}))
        cls = self.class_of_ref(ref)
        return (cls.key,) if cls is not None else ()

    def _find_family(self, key: str) -> str:
        seen = set()
        stack = [key]
        root = key
        while stack:
            k = stack.pop()
            if k in seen:
                continue
            seen.add(k)
            root = min(root, k)
            stack.extend(self._bases.get(k, ()))
        # the family is named by its smallest root-most member; subclasses
        # join the family of their bases
        roots = [k for k in seen if not self._bases.get(k)]
        return min(roots) if roots else root

    def family(self, class_key: Optional[str]) -> Optional[str]:
        """The key naming a class's family: a class and its bases share fields."""
        if class_key is None:
            return None
        families = self._family
        return families[class_key] if class_key in families else class_key  # (asked very often: no call of get)

    def subclassed(self, class_key: Optional[str]) -> bool:
        """Whether some class of the tree names the class among its bases."""
        return class_key in self._subclasses

    def holds_only_fields(self, class_key: str) -> bool:
        """Whether an instance of the class shows nothing of its own but its
        fields and methods: it and its bases (all of the tree, or ``object``,
        ``ABC``, ``Protocol``) define no truth, length, equality, call,
        iteration, item access or conversion, so the instance is truthy,
        equal only to itself and read through its attributes alone."""
        known = self._holds_only_fields.get(class_key)
        if known is None:
            known = True
            for k in self.mro(class_key):
                cls = self.classes.get(k)
                if cls is None or any(name in cls.methods for name in _VALUE_METHODS):
                    known = False
                    break
                if any(self.class_of_ref(ref) is None and not (
                        ref.tag == "qual" and ref.dotted.rsplit(".", 1)[-1] in _NEUTRAL_BASES) for ref in cls.bases):
                    known = False
                    break
            self._holds_only_fields[class_key] = known
        return known

    def mro(self, class_key: str) -> list:
        out, seen = [], set()
        stack = [class_key]
        while stack:
            k = stack.pop(0)
            if k in seen:
                continue
            seen.add(k)
            out.append(k)
            stack.extend(self._bases.get(k, ()))
        return out

    def reached_through_self(self, class_key: str, name: str) -> list:
        """The methods ``self.<name>`` read in a method of the class may be:
        for the class and each class having it among its bases, the first
        ``name`` along that class's MRO (a mixin's ``self.<name>`` is a
        sibling base's method in a class joining both)."""
        found, seen, stack = [], set(), [class_key]
        while stack:
            k = stack.pop()
            if k in seen:
                continue
            seen.add(k)
            for fn in self.lookup_method(k, name, include_overrides=False):
                if fn not in found:
                    found.append(fn)
            stack.extend(self._subclasses.get(k, ()))
        return found

    def lookup_method(self, class_key: str, name: str, include_overrides: bool = True) -> list:
        """The method ``name`` of a class (through its bases) and, with
        ``include_overrides``, every override in its subclasses."""
        found = []
        for k in self.mro(class_key):
            cls = self.classes.get(k)
            if cls is not None and name in cls.methods:
                fkey = cls.methods[name]
                if fkey in self.funcs:
                    found.append(self.funcs[fkey])
                break
        if include_overrides:
            stack = list(self._subclasses.get(class_key, ()))
            seen = set()
            while stack:
                k = stack.pop()
                if k in seen:
                    continue
                seen.add(k)
                cls = self.classes.get(k)
                if cls is not None and name in cls.methods and cls.methods[name] in self.funcs:
                    fn = self.funcs[cls.methods[name]]
                    if fn not in found:
                        found.append(fn)
                stack.extend(self._subclasses.get(k, ()))
        return found

    def resolved(self, ref) -> Optional[list]:
        """What :meth:`resolve` answered for ``ref`` so far; None when it was
        not asked yet (and asking nothing here leaves its memo as it was)."""
        try:
            found = self._resolve_cache.get(ref)
            return found if found is not None else self._resolve_top.get(ref)
        except TypeError:
            return None

    def resolve(self, ref) -> list:
        """The functions a call through ``ref`` may run ([FuncFacts])."""
        if ref is None:
            return []
        try:
            return self._resolve_cache[ref]
        except KeyError:
            pass
        except TypeError:  # unhashable (should not happen)
            return []
        # A receiver's type can depend on what this very call returns
        # (``self.x = self.x.clone()``): the inner question sees nothing.
        return self.open.answer(self.open.refs, ref, self._resolve_now, self._resolve_cache,
                                self._resolve_top, [])

    def _resolve_now(self, ref) -> list:
        out: list = []
        tag = ref.tag
        if tag == "func":
            out = _with_alternatives(self.funcs.get(f"{ref.module}:{ref.qualname}"), self.alternatives)
        elif tag == "qual":
            out = _with_alternatives(self._lookup_qual(self.funcs_by_qual, ref.dotted), self.alternatives)
            if not out:
                cls = self._lookup_qual(self.classes_by_qual, ref.dotted)
                if cls is not None:
                    out = self.lookup_method(cls.key, "__init__", include_overrides=False)
        elif tag == "method":
            out = self.lookup_method(ref.class_key, ref.name)
        elif tag == "super":
            for base in self._bases.get(ref.class_key, ()):
                out = self.lookup_method(base, ref.name, include_overrides=False)
                if out:
                    break
        elif tag == "fieldmethod":
            receivers = self.receivers
            family = self.family(ref.class_key)
            types = receivers.field_receiver_types(family, ref.attr)
            out = receivers.methods_on(types, ref.name)
            if not types[0] and not types[1]:
                if not out:
                    out = self._by_methods_asked(family, ref.attr, ref.name)
                # Found by its name alone: a field of an object rarely holds another object of its
                # own class (``self.logger.log()`` inside a logger adapter's ``log`` is the wrapped
                # logger's), so the name-only match never lands back in the caller's class family;
                # nor is it a method the call's arguments cannot bind.
                out = [fn for fn in out if (fn.class_key is None or self.family(fn.class_key) != family)
                       and binds(fn, ref.shape)]
        elif tag == "typed":
            out = self.receivers.methods_on(self.receivers.receiver_types(ref.terms), ref.name, ref.shape)
        elif tag == "class":
            out = self.lookup_method(ref.key, "__init__", include_overrides=False)
        elif tag == "name":
            out = [fn for fn in self.receivers.method_by_name(ref.name) if binds(fn, ref.shape)]
        elif tag == "part":
            out = self.resolve(ref.ref)
        elif tag == "paramcall" or tag == "chosen":
            for key in self.built_classes(ref):
                out.extend(fn for fn in self.lookup_method(key, "__init__", include_overrides=False) if fn not in out)
        return out


    def _by_methods_asked(self, family: Optional[str], attr: str, name: str) -> list:
        """``self.attr.name()`` on a field nothing types that holds what a
        caller handed in (``self.controller = controller``): the class the
        field holds must define every method the class family calls on it,
        so where exactly one class of the tree defines them all, and one of
        them is no generic name (``forward`` and ``dummy_forward`` asked of
        one controller), the call is that class's method.  A field assigned
        from a call the analysis could not type stays unknown."""
        asked = self._methods_asked
        if asked is None:
            asked = self._methods_asked = {}
            handed_in = set()  # fields assigned a parameter as it is: what the caller chose
            for fn in self.funcs.values():
                for ref in called_refs(fn):
                    if ref.tag == "fieldmethod":
                        asked.setdefault((self.family(ref.class_key), ref.attr), set()).add(ref.name)
                for variant in written_variants(fn):
                    for write in variant.fields:
                        if write.atoms and all(atom.tag == "P" for atom in write.atoms):
                            handed_in.add((self.family(write.class_key), write.attr))
            self._methods_asked = asked = {key: names for key, names in asked.items() if key in handed_in}
        names = asked.get((family, attr), ())
        if len(names) < 2 or all(n in GENERIC_METHODS or n.startswith("__") for n in names):
            return []
        holders = None
        for n in names:
            classes = {self.funcs[k].class_key for k in self.methods_by_name.get(n, ()) if k in self.funcs}
            holders = classes if holders is None else holders & classes
            if not holders:
                return []
        if len(holders) != 1:
            return []
        (cls_key,) = holders
        if self.family(cls_key) == family:
            return []
        return self.lookup_method(cls_key, name, include_overrides=False)


def issued_collective(resolver: Resolver, site):
    """The collective a call site issues itself (its name, group and API),
    or None.  ``self.all_reduce(x)``, where the field ``all_reduce`` holds an
    object of classes of the tree each of which defines or inherits a
    ``__call__`` of the tree (the site's reference a
    :class:`~cslint.analysis.callrefs.FieldMethodRef` to it,
    :func:`~cslint.analysis.deep.called_field`), runs that ``__call__``
    whatever the field is called: the call reaches what it issues, over the
    group it names, and is no collective of the field's name over the world;
    a field the tree does not type (or the library's collective itself,
    ``self.all_reduce = dist.all_reduce``) keeps the name's collective."""
    found = site.collective
    ref = site.ref
    if found is None or ref is None or ref.tag != "fieldmethod":
        return found
    classes, _known = resolver.receivers.field_receiver_types(resolver.family(ref.class_key), ref.attr)
    defines = resolver.classes.get
    if classes and all(any(ref.name in getattr(defines(key), "methods", ()) for key in resolver.mro(cls))
                       for cls in classes):
        return None  # (a method the prefilter left unparsed reaches no collective)
    return found


def _with_alternatives(fn, alternatives: dict) -> list:
    """``[fn]`` and the other module-level definitions of its name a block defines (``if HAVE_X: def probe(): ...
    else: def probe(): ...``; ``facts.alternative_definitions`` keys each apart): a call of the name may run any of
    them; ``[]`` for no function."""
    if fn is None:
        return []
    others = alternatives.get(fn.key)
    return [fn, *others] if others else [fn]
