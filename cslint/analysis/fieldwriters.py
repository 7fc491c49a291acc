"""Which functions of a tree may write a field of a class family, and the
whole-tree questions about a field answered from their writes.

A summary left pending (:class:`~cslint.analysis.records.PendingFuncFacts`)
has no field writes yet: its summary walk records them.  What it holds
instead is the set of fields a statement of its own may write
(:func:`~cslint.analysis.facts.written_fields`: ``self.x = ...``,
``self.x[k] = ...``, ``self.x.m(...)``), a superset of the fields
(:func:`table_field`) of the writes and field types its walk records.  A
question about one field of one family (is an element stored into it, are
its entry positions apart, does a constructor store it, what does it hold)
first works out the pending summaries that may write that field, then reads
the writes of every function that writes it, in the order of the tree: the
answer is the one the same question gets where every summary is worked out
at once, and a pending summary that may write only fields nobody asks about
is never worked out.
"""

from __future__ import annotations

from .records import PendingFuncFacts, fill_pending


def table_field(table: str) -> str:
    """The field a table is of: its name before any marker (a field's own
    structure, an entry position, a method's writes, what constructors do
    not store: markers start with ``#``, never part of a Python name)."""
    return table.partition("#")[0]


def may_write_fields(fn) -> frozenset:
    """The fields a pending summary's statements may write; of a function
    worked out, none (its writes are in its variants)."""
    return fn.__dict__.get("written_fields", frozenset()) if type(fn) is PendingFuncFacts else frozenset()


class FieldWriters:
    """(family, field) -> the functions that may write the field: those
    worked out by the fields of their writes and field types, the pending
    ones by the fields their statements may write (``written_fields``) or
    type (``typed_fields``); in the tree's order."""

    def __init__(self, funcs, family_of):
        self._family_of = family_of
        self._by_field: dict = {}  # (family, field) -> the functions that may write it
        self._by_type: dict = {}  # (family, field) -> the functions that may give it a field type
        self._own: dict = {}  # id(function) -> ((family, field) -> its writes, (family, field) -> its field types)
        self._writes: dict = {}  # (family, field, among) -> [(function, variant, write)]
        self._types: dict = {}  # (family, field) -> [(function, field type)]
        for fn in funcs:
            if type(fn) is PendingFuncFacts:
                names = fn.__dict__.get("written_fields")
                if names:
                    family = family_of(fn.class_key)
                    for name in names:
                        self._by_field.setdefault((family, name), []).append(fn)
                    for name in fn.__dict__.get("typed_fields", ()):
                        self._by_type.setdefault((family, name), []).append(fn)
                continue
            writes, types = self._grouped(fn)
            for key in writes:
                self._by_field.setdefault(key, []).append(fn)
            for key in types:
                self._by_type.setdefault(key, []).append(fn)

    def _grouped(self, fn) -> tuple:
        """``fn``'s writes and field types by (family, field), once (worked out first)."""
        found = self._own.get(id(fn))
        if found is None:
            family_of = self._family_of
            writes: dict = {}
            types: dict = {}
            for variant in fn.variants.values():
                for write in variant.fields:
                    attr = write.attr
                    name = attr.partition("#")[0] if "#" in attr else attr  # (table_field)
                    writes.setdefault((family_of(write.class_key), name), []).append((fn, variant, write))
                for field_type in variant.field_types:
                    types.setdefault((family_of(field_type.class_key), field_type.attr), []).append((fn, field_type))
            found = self._own[id(fn)] = (writes, types)
        return found

    def writes(self, family, name: str, among=None) -> list:
        """``(function, variant, write)`` of every write of the field ``name``
        (any of its tables) in the family, in the tree's order; of the
        functions ``among(fn)`` holds for alone, where given (the pending
        others stay pending)."""
        key = (family, name, among)
        found = self._writes.get(key)
        if found is None:
            writers = self._by_field.get(key[:2], ())
            if among is not None:
                writers = [fn for fn in writers if among(fn)]
            fill_pending(writers)  # (the pending ones among them)
            found = self._writes[key] = [write for fn in writers for write in self._grouped(fn)[0].get(key[:2], ())]
        return found

    def field_types(self, family, name: str) -> list:
        """``(function, field type)`` of every field type of ``name`` in the
        family, in the tree's order."""
        key = (family, name)
        found = self._types.get(key)
        if found is None:
            writers = self._by_type.get(key, ())
            fill_pending(writers)
            found = self._types[key] = [typed for fn in writers for typed in self._grouped(fn)[1].get(key, ())]
        return found


class FieldQuestion:
    """One whole-tree question about the fields of class families, asked as
    ``question(family, table)`` and answered once per pair by
    ``answer(family, table, writes)`` from the writes of the table's field
    (``writes_of(family, field)``, :meth:`FieldWriters.writes`)."""

    def __init__(self, writes_of, answer):
        self._writes_of = writes_of
        self._answer = answer
        self._memo: dict = {}

    def __call__(self, family, table: str):
        key = (family, table)
        found = self._memo.get(key)
        if found is None:
            found = self._memo[key] = self._answer(family, table, self._writes_of(family, table_field(table)))
        return found


def assigned(_family, attr: str, writes: list) -> bool:
    """Whether some write assigns the field ``attr`` (a :class:`FieldQuestion`'s answer)."""
    return any(write.attr == attr for _fn, _variant, write in writes)


def assigned_a_parameter(_family, attr: str, writes: list) -> bool:
    """Whether some write assigns the field ``attr`` a parameter as it is."""
    return any(write.attr == attr and write.atoms and all(atom.tag == "P" for atom in write.atoms)
               for _fn, _variant, write in writes)
