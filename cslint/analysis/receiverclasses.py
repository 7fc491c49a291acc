"""Which classes a receiver may be an instance of (:class:`ReceiverClasses`), from its type terms
(:mod:`cslint.analysis.receivers`): what a call ``x.name()`` reaches when the function shows what ``x`` is, what each
field of ``self`` holds as type terms (the calls assigned to it, the annotations and assignments of the class body),
and the method a name alone finds where it is the tree's only method of that name.  Made by the
:class:`~cslint.analysis.resolution.Resolver`, whose questions it asks back."""

from __future__ import annotations

from typing import Optional

from .atoms import BY_METHOD, EMPTY, REBUILT_APART, field_name
from .callrefs import ANY_ARGUMENTS
from .receivers import CONTAINER_ACCESSORS, binds
from .records import written_variants
from .vocabulary import GENERIC_METHODS


class ReceiverClasses:
    """Which classes a receiver may be an instance of, from its type terms
    (:mod:`cslint.analysis.receivers`): what a call ``x.name()`` reaches when
    the function shows what ``x`` is, and when a method is found by its name
    alone.  A library object is never a project class; a name-only match
    needs the name to be the tree's only method of that name."""

    def __init__(self, resolver):  # the Resolver that makes it
        self.resolver = resolver
        # What each field holds, as type terms: the calls assigned to it and
        # the annotations and assignments of the class body.
        self.field_terms: dict = {}
        for fn in resolver.funcs.values():
            for variant in written_variants(fn):
                for class_key, attr, ref in variant.field_types:
                    term = _term_of_assigned_call(ref)
                    if term is not None:
                        _add_term(self.field_terms, (resolver.family(class_key), attr), term)
        for cls in resolver.classes.values():
            for attr, terms in cls.field_terms:
                for term in terms:
                    _add_term(self.field_terms, (resolver.family(cls.key), attr), term)
        self.project_packages = resolver.project_packages
        # subclasses of a base class the analysis holds no facts for, by the
        # base's dotted name: an object typed as that base may be one of them
        self.subclasses_of_unknown: dict = {}
        for cls in resolver.classes.values():
            for ref in cls.bases:
                if ref.tag == "qual" and resolver.class_of_ref(ref) is None:
                    self.subclasses_of_unknown.setdefault(ref.dotted, []).append(cls.key)
        self._receiver_memo: dict = {}  # terms -> answer, the same wherever asked
        self._receiver_top: dict = {}  # terms -> answer, asked with no question open (see OpenQuestions)
        self._classes_memo: dict = {}
        self._attached: Optional[dict] = None  # see attached_by_name
        #: (family, attr) of every field some method of the tree assigns
        self.assigned_fields: set = set()
        for fn in resolver.funcs.values():
            for variant in written_variants(fn):
                for write in variant.fields:
                    self.assigned_fields.add((resolver.family(write.class_key), write.attr))

    def methods_on(self, types: tuple, name: str, shape: tuple = ANY_ARGUMENTS) -> list:
        """The methods ``name`` of a receiver of ``types`` (see
        :meth:`receiver_types`): those of its classes; none when the
        receiver is known to be something else (a library object, a class
        the tree holds no facts for); by the name alone when nothing is
        known, if the call's arguments (``shape``) bind it."""
        classes, known = types
        if classes:
            out: list = []
            for cls_key in sorted(classes):
                for fn in self.resolver.lookup_method(cls_key, name):
                    if fn not in out:
                        out.append(fn)
            return out
        if known:
            return []
        return [fn for fn in self.method_by_name(name) if binds(fn, shape)]

    def method_by_name(self, name: str) -> list:
        """A method found by its name alone: only when the tree's analysed
        code defines exactly one method of that name, and never for names
        every other class has (``get``, ``run``, ``close``...); and every
        function the tree attaches to objects under that name
        (:mod:`~cslint.analysis.attached`), which an untyped receiver may be."""
        if name.startswith("__") or name in GENERIC_METHODS:
            return []
        candidates = self.resolver.methods_by_name.get(name, [])
        only = self.resolver.funcs.get(candidates[0]) if len(candidates) == 1 else None
        found = [only] if only is not None else []
        # (the one method a name finds first; then the attached functions that are not it)
        return found + [fn for fn in self.attached_by_name().get(name, ()) if only is None or fn.key != candidates[0]]

    def attached_by_name(self) -> dict:
        """attr -> the functions the tree attaches under that name (``FuncFacts.attached``), by key; made on
        first use."""
        table = self._attached
        if table is None:
            by_key: dict = {}  # attr -> {key: function}
            resolver = self.resolver
            for fn in resolver.funcs.values():
                for attr, ref in fn.attached:
                    if ref.tag == "func":
                        found = resolver.funcs.get(f"{ref.module}:{ref.qualname}")
                        targets = [found] if found is not None else []
                    else:
                        targets = resolver.lookup_method(ref.class_key, ref.name)
                    held = by_key.setdefault(attr, {})
                    for target in targets:
                        held[target.key] = target
            # by key, whatever order the files came in
            table = self._attached = {attr: [held[key] for key in sorted(held)] for attr, held in by_key.items()}
        return table

    def field_receiver_types(self, family: Optional[str], attr: str) -> tuple:
        """:meth:`receiver_types` of what the field ``attr`` of a class family holds."""
        terms = self.field_terms.get((family, attr))
        return self.receiver_types(tuple(terms)) if terms else (EMPTY, False)

    def receiver_types(self, terms: tuple) -> tuple:
        """``(class keys, known)`` for a receiver of type ``terms``: the
        project classes it may be an instance of, and whether anything is
        known about it at all (a library object, a class of code the
        analysis holds no facts for: neither can reach a project's
        collective).  Terms that say nothing add nothing; the known ones
        decide."""
        found = self._receiver_memo.get(terms)
        if found is not None:
            return found
        questions = self.resolver.open
        # asked again while being answered: nothing known
        return questions.answer(questions.terms, terms, self._receiver_types_now, self._receiver_memo,
                                self._receiver_top, (EMPTY, False))

    def _receiver_types_now(self, terms: tuple) -> tuple:
        classes: set = set()
        known = False
        for term in terms:
            term_classes, term_known = self._term_types(term)
            classes |= term_classes
            known = known or term_known
        return frozenset(classes), known or bool(classes)

    def _term_types(self, term: tuple) -> tuple:
        kind = term[0]
        if kind == "library":
            return EMPTY, True
        if kind == "class":
            return (frozenset({term[1]}) if term[1] in self.resolver.classes else EMPTY), True
        if kind == "named":
            dotted = self._as_analysed(term[1])
            cls = self.resolver._lookup_qual(self.resolver.classes_by_qual, dotted)
            if cls is not None:
                return frozenset({cls.key}), True
            fn = self.resolver._lookup_qual(self.resolver.funcs_by_qual, dotted)
            if fn is not None:
                return self.receiver_types(fn.returns_terms)
            cls = self.resolver.class_under_package(dotted)
            if cls is not None:
                return frozenset({cls.key}), True
            subclasses = self.subclasses_of_unknown.get(term[1]) or self.subclasses_of_unknown.get(dotted)
            if subclasses:
                if dotted.split(".", 1)[0] in self.project_packages:
                    return frozenset(subclasses), True
                # a library base class (``nn.Module``) that the tree's own
                # classes extend says nothing about which of them it is
                return EMPTY, False
            return EMPTY, self._outside_analysed_code(dotted)
        if kind == "returns":
            classes: set = set()
            known = False
            for fn in self.resolver.resolve(term[1]):
                fn_classes, fn_known = self.receiver_types(fn.returns_terms)
                classes |= fn_classes
                known = known or fn_known
            return frozenset(classes), known
        if kind == "method" or kind == "attr":
            receiver, name = term[1], term[2]
            classes, known = self.receiver_types(receiver)
            if classes:
                found: set = set()
                found_known = False
                for cls_key in sorted(classes):
                    if kind == "attr":
                        sub = self.field_receiver_types(self.resolver.family(cls_key), name)
                        found |= sub[0]
                        found_known = found_known or sub[1]
                        continue
                    for fn in self.resolver.lookup_method(cls_key, name, include_overrides=False):
                        sub = self.receiver_types(fn.returns_terms)
                        found |= sub[0]
                        found_known = found_known or sub[1]
                return frozenset(found), found_known
            if known:
                # what a library object hands out is a library object, except
                # what was put into a container and comes back out
                return EMPTY, kind == "attr" or name not in CONTAINER_ACCESSORS
            return EMPTY, False
        if kind == "field":
            return self.field_receiver_types(self.resolver.family(term[1]), term[2])
        if kind == "built":
            classes = frozenset(self.resolver.built_classes(term[1]))
            return classes, bool(classes)
        return EMPTY, False

    def _as_analysed(self, dotted: str) -> str:
        """A dotted name as the analysed modules spell it: a tree checked
        without its outermost ``__init__.py`` (a package's subfolders only)
        names its modules from the first folder that is a package
        (``distributed.optim`` for ``torch.distributed.optim``)."""
        parts = dotted.split(".")
        if parts[0] in self.project_packages:
            return dotted
        for start in range(1, len(parts) - 1):
            if parts[start] in self.project_packages:
                return ".".join(parts[start:])
        return dotted

    def _outside_analysed_code(self, dotted: str, depth: int = 0) -> bool:
        """Whether a dotted name that names no analysed class or function is
        known to reach no collective: it lies outside the tree (a
        third-party library), or it names a class (``CamelCase``, by Python's
        naming convention) of a module of the tree that the prefilter found
        to hold no collective and no call to a wrapper.  A module file of
        the run that was not analysed is known by name (the run's discovery
        list, ``Resolver.unanalysed_modules``), so a class of one is outside
        even below an analysed package ``__init__.py``, and a name an
        analysed module imports is asked again as what it imports."""
        parts = dotted.split(".")
        if parts[0] not in self.project_packages:
            return True
        resolver = self.resolver
        for split in range(len(parts) - 1, 0, -1):
            module = ".".join(parts[:split])
            if module in resolver.modules:
                # a re-export of the analysed module is what it imports; else its variable
                imported = resolver.modules[module].imports.get(parts[split])
                if imported is None or depth > 3:
                    return False
                target = ".".join([imported] + parts[split + 1:])
                return target != dotted and self._outside_analysed_code(target, depth + 1)
            if module in resolver.unanalysed_modules:
                # a module file of the run that holds no collective: a class it defines is outside the
                # analysed code, whatever analysed ``__init__.py`` above it re-exports; one named like
                # an analysed class may be that class imported, so it stays unknown
                name = parts[split]
                return name[:1].isupper() and not resolver.has_class_named(name)
        return parts[-1][:1].isupper()

    # -- values --------------------------------------------------------------------

    def classes_of(self, atom) -> tuple:
        """The classes of the tree an object (a field, a constructor call,
        an attribute) may be an instance of, in key order; empty when
        unknown."""
        memo = self._classes_memo
        found = memo.get(atom)
        if found is not None:
            return found
        # (no guard: an atom never holds itself, and what the field types
        # answer does not depend on what was asked before)
        out: set = set()
        tag = atom.tag
        resolver = self.resolver
        if tag == "F":
            attr = atom.attr
            if BY_METHOD in attr or REBUILT_APART in attr:  # what a method wrote to it; all but its rebuilds
                attr = field_name(attr)
            out = set(self.field_receiver_types(resolver.family(atom.class_key), attr)[0])
        elif tag == "R":
            built = resolver.built_classes(atom.ref)
            if built:
                out = set(built)
            else:
                # a function or method of the tree that builds an object of one
                # of its classes on every path and hands it back
                # (``return Context(keys=keys)``), or declares that it does
                for fn in resolver.resolve(atom.ref):
                    terms = fn.returns_terms
                    if terms and all(term[0] in BUILT_TERMS for term in terms):
                        out |= self.receiver_types(terms)[0]
        elif tag == "A":
            for inner in atom.inner:
                holders = self.classes_of(inner)
                if not holders:
                    out = set()
                    break
                for holder in holders:
                    types = self.field_receiver_types(resolver.family(holder), atom.attr)[0]
                    if not types:
                        out = set()
                        break
                    out |= types
                else:
                    continue
                break
        found = tuple(sorted(out))
        memo[atom] = found
        return found

    def field_families(self, atom, attr: str) -> tuple:
        """The class families whose field ``attr`` the attribute ``attr`` of an
        object with ``atom`` reads: those of :meth:`classes_of`, when every one
        of them assigns that field; else none (an attribute of unknown provenance)."""
        families = tuple(sorted({self.resolver.family(cls) for cls in self.classes_of(atom)}))
        if families and all((family, attr) in self.assigned_fields for family in families):
            return families
        return ()


#: The type terms of a value that is an object of a named class: built by
#: calling the class, or declared so (not what another call hands back).
BUILT_TERMS = frozenset({"class", "named"})


def _term_of_assigned_call(ref: tuple) -> Optional[tuple]:
    """The type term of a field assigned the result of calling ``ref``."""
    tag = ref.tag
    if tag == "class":
        return ("class", ref.key)
    if tag == "qual":
        return ("named", ref.dotted)
    if tag == "typed":
        return ("method", ref.terms, ref.name)
    if tag == "fieldmethod":
        return ("method", (("field", ref.class_key, ref.attr),), ref.name)
    if tag in ("func", "method", "super"):
        return ("returns", ref)
    if tag == "paramcall" or tag == "chosen":
        return ("built", ref)
    return None


def _add_term(table: dict, key: tuple, term: tuple) -> None:
    terms = table.setdefault(key, [])
    if term not in terms:
        terms.append(term)
