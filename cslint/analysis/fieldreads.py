"""What a field of an object reads in the whole-tree pass, mixed into the program's reads (:class:`FieldReads`): the
field tables a write goes to (the field, its own structure, the by-method, not-None and built-apart tables beside it),
the table a read of ``self.attr`` reads, joined with what the properties of that name return, ``obj.attr`` over the
classes ``obj`` may hold, and the fields a signal handler sets, which differ between ranks."""

from __future__ import annotations

from ..presets import ALL_DIMS
from .atoms import (
    ATTRIBUTE_KEEPS, BY_METHOD, DEVICE_KIND, ENTRY_FIELD, OWN_FIELD, REBUILT_APART, SHAPE, STORED_OWN, attribute,
    base_field, field_name, own_field, source,
)
from .constructions import built_apart, constructed_by, field_of
from .divergence import merge
from .presentfields import PRESENT_FIELD, present_field, present_read
from .rebuilds import rebuilt_apart
from .records import written_variants
from .selfcalls import by_method, split_by_method


class FieldReads:
    """Mixed into :class:`~cslint.analysis.reads.ProgramReads`: reads the program's field tables (``fields``,
    ``own_fields``, ``entry_fields``, ``absent_fields``, ``rebuilt_fields``, ``built_fields``, ``signal_fields``, ``method_writes``,
    ``properties``) through its ``resolver`` and ``eval``."""

    def _seed_signal_handler_fields(self) -> None:
        """Fields a signal handler assigns differ between ranks: the signal
        reaches one process (a SIGTERM from a node's scheduler, a Ctrl-C)."""
        for fn in self.funcs.values():
            for ref in fn.signal_handlers:
                for handler in self.resolver.resolve(ref):
                    for v in written_variants(handler):
                        for write in v.fields:
                            named = field_name(write.attr)
                            origin = source("set by a signal handler", f"self.{named}", handler.path,
                                            write.line, (("*", ALL_DIMS),))
                            merge(self.signal_fields.setdefault(named, {}), origin, ALL_DIMS, ())
                            family = self.resolver.family(write.class_key)
                            for attr in self._written_tables(family, write.attr, write.element):
                                for mode in self.modes:
                                    merge(self.fields.setdefault((family, attr, mode), {}), origin, ALL_DIMS, ())

    def _field_value(self, atom, mode: frozenset) -> dict:
        """``self.attr``: the field's table (of its own structure: the table
        :meth:`_field_table` names), joined with what the properties of that
        name return."""
        family = self.resolver.family(atom.class_key)
        attr = named = atom.attr
        if BY_METHOD in attr:  # what a method may write to the field (selfcalls.py)
            return written_by_methods(self, family, attr, mode)
        if attr.endswith(OWN_FIELD):
            attr = self._field_table(family, attr)
            named = field_name(attr)
        elif ENTRY_FIELD in attr:
            named = field_name(attr)
            if (family, attr if attr.endswith(STORED_OWN) else named) not in self.entry_fields:
                attr = named  # another store may put anything in: the whole field
        elif attr.endswith(PRESENT_FIELD):  # where it is not None (presentfields.py)
            named = attr[:-len(PRESENT_FIELD)]
        elif REBUILT_APART in attr:  # but its rebuilds (rebuilds.py)
            named = field_name(attr)
            if (family, named) not in self.rebuilt_fields:
                attr = named  # (a rebuild in a file read only for its summaries: every write)
        value = self.fields.get((family, attr, mode), {})
        readers = self.properties.get((family, named))
        return self._with_properties(value, readers, named, mode) if readers else value

    def _written_tables(self, family, attr: str, element: bool, fn=None, absent: bool = False,
                        rebuilt: bool = False) -> tuple:
        """The field tables a write of ``attr`` (by ``fn``) goes to: the field, and its
        own structure where an element is stored into it (see
        :func:`~cslint.analysis.atoms.own_field`); an element store's own
        part goes to that table alone, its element to the field alone; and
        the by-method tables of ``fn``'s name (:mod:`cslint.analysis.selfcalls`); and
        the table of what is not a constructor's store from its parameters, for a
        field some constructor stores (:mod:`cslint.analysis.constructions`); and,
        for a field some method sets to None, unless this write (``absent``) is
        one of those, the table of what it holds where it is not None
        (:mod:`cslint.analysis.presentfields`); and, for a field some method
        rebuilds from its own settings, unless this write (``rebuilt``) is one
        of those, the table of its other writes (:mod:`cslint.analysis.rebuilds`)."""
        if element or not self.own_fields or (family, attr) not in self.own_fields or attr.endswith(OWN_FIELD):
            tables = (attr,)
        else:
            tables = (attr, own_field(attr))
        method = None if fn is None else self.method_writes.method_of(fn)
        if method is not None:
            tables += tuple(by_method(table, method) for table in tables)
        if not absent and (family, attr) in self.absent_fields:
            tables += (present_field(attr),)
        if not rebuilt and (family, attr) in self.rebuilt_fields:
            tables += (rebuilt_apart(attr),)
        return tables + (built_apart(attr),) if (family, attr) in self.built_fields else tables

    def _field_table(self, family, attr: str) -> str:
        """The table a read of the field ``attr`` reads: the field's own
        structure is the field itself where no element is stored into it."""
        base = base_field(attr)
        return base if base is not None and (family, base) not in self.own_fields else attr

    def _attribute_value(self, atom, mode: frozenset) -> dict:
        """``obj.attr``: the field ``attr`` of the classes ``obj`` may hold, plus
        what makes ``obj`` a different object on some ranks (its structure;
        of a field some method sets to None, where it is not None:
        presentfields.py; of a field rebuilt with objects lacking ``attr``,
        where it holds another: lackednames.py); of an object of unknown class, what
        :func:`~cslint.analysis.atoms.attribute` keeps."""
        out: dict = {}
        keep = ATTRIBUTE_KEEPS.get(atom.attr, SHAPE)
        family_of = self.resolver.family
        device_kind = atom.attr == DEVICE_KIND
        for inner in self._in_order(atom.inner):
            if device_kind and self.resolver.receivers.field_families(inner, "device"):
                # ``obj.device.type`` of an object of the tree: its ``device`` field's kind
                for k, (dims, via) in self.eval(attribute(attribute(frozenset({inner}), "device"), "type"),
                                                mode).items():
                    merge(out, k, dims, via)
                continue
            families = self.resolver.receivers.field_families(inner, atom.attr)
            built = constructed_by(self.resolver, inner) if families else ()  # the object a call built
            for family in families:
                for k, (dims, via) in field_of(self, inner, built, family, atom.attr, mode).items():
                    merge(out, k, dims, via)
            if not families:
                # an object of unknown class: a flag of that name that a signal
                # handler sets may be the one read (a connector handed in as a
                # parameter); the signal reaches one process, so it differs
                for k, (dims, via) in self.signal_fields.get(atom.attr, {}).items():
                    merge(out, k, dims, via)
            held = self.lacked_names.held_read(inner, atom.attr) if self.rebuilt_fields else None
            if held is None:  # (a rebuilt object lacking the attribute: lackednames.py)
                held = present_read(inner, self.absent_fields, family_of) if self.absent_fields else inner
            for k, (dims, via) in self.seen_through(self.eval(frozenset({held}), mode),
                                                      SHAPE if families else keep).items():
                merge(out, k, dims, via)
        return out


def by_method_tables(reads: FieldReads, family, attr: str) -> tuple:
    """The tables a read of what a method may write to a field reads (``attr``:
    :func:`~cslint.analysis.selfcalls.by_method` of a field's table), that
    table taken as ``_field_value`` takes it (an own structure kept apart or
    the field itself, an entry position or the whole field)."""
    table, method = split_by_method(attr)
    if table.endswith(OWN_FIELD):
        table = reads._field_table(family, table)
    elif ENTRY_FIELD in table and (family, field_name(table)) not in reads.entry_fields:
        table = field_name(table)
    return reads.method_writes.tables(family, table, method)


def written_by_methods(reads: FieldReads, family, attr: str, mode: frozenset) -> dict:
    """What the methods a by-method table ``attr`` stands for may write to the
    field, and the conditions of the calls that run them (:func:`by_method_tables`),
    joined with what the properties of the field's name return."""
    out: dict = {}
    for table in by_method_tables(reads, family, attr):
        for k, (dims, via) in reads.fields.get((family, table, mode), {}).items():
            merge(out, k, dims, via)
    named = field_name(attr)
    readers = reads.properties.get((family, named))
    return reads._with_properties(out, readers, named, mode) if readers else out
