"""What a method may write to a field of its object through the methods it
calls on ``self`` (the whole-tree side of :mod:`cslint.analysis.setfields`).

A function that set a field and then calls ``self.check()`` reads, after the
call, what it set or what ``check`` may write.  What ``check`` may write is
read from tables of their own, kept beside the field's whole table:

* ``by_method(table, name)``: what the methods of that name in the class
  family write to the field (or its own structure) themselves, without the
  conditions their callers call them under (:meth:`MethodWrites.method_of`
  names the methods whose writes go there: those some method calls on
  ``self``);
* ``calls_table(callee, caller)``: the conditions under which the methods
  named ``caller`` call ``callee`` on ``self`` in their own bodies
  (:func:`note_self_call`).

The reader's atom names the method it calls and its own name
(:data:`CALLED_IN`).  A read of it (:meth:`MethodWrites.tables`) takes the
first table of every method ``check`` may run on the object (it, and those
they call on ``self`` in turn: :meth:`MethodWrites.closure`), and the second
of only those calls whose callee may run a method writing the field, the
reader's own call of ``check`` included: a call made under a rank-local test
of a method that writes other fields adds nothing to this one.  A generator's
writes are read at the call that makes it (its caller iterates it).  Where a
method of the closure may change the object's fields otherwise (it hands
``self`` on, awaits or nests a function), where no method of the tree has a
name called (a library base class's method, a callable stored in a field),
or where a summarised method (whose calls carry no conditions) calls a
method writing the field, the field's whole table is read instead.

A call made whenever its statement runs (``self.reset_and_check()``) of a
method every definition of which sets the field before anything else
(``FuncFacts.sets_first``) replaces what the field held: the reader keeps
what it held as tables read only where that is not so (:data:`KEPT`).
"""

from __future__ import annotations

from .atoms import BY_METHOD, field_name
from .divergence import merge
from .records import written_variants

#: the head of a table of the conditions under which the methods of a name
#: call a method on ``self`` (never a field's name)
SELF_CALLS = "#calls:"
#: the references of a call on ``self`` (``self.k()``, ``super().k()``)
SELF_REFS = frozenset({"method", "super"})
#: spelt between a by-method table's method (none: the field's whole table)
#: and the name of a method called after it: what that table holds, kept only
#: where the later method may not set the field first (:meth:`MethodWrites.tables`)
KEPT = "#unless:"
#: spelt between a by-method table's method and the name of the method that
#: calls it: the conditions of that call count where the method may write the field
CALLED_IN = "#in:"
#: spelt as a by-method table's method before the name of a method: what the
#: field holds on entry to that method, which its callers set before calling it
#: (:func:`handed_table`)
HANDED = "#handed:"


def by_method(attr: str, method: str) -> str:
    """The table of what the methods named ``method`` write to ``attr`` (a
    field's table: the field, or its own structure, ``atoms.own_field``)."""
    return attr + BY_METHOD + method


def handed_read(attr: str, method: str) -> str:
    """What the field ``attr`` holds on entry to the methods named ``method``:
    what their callers hand them there where every call of the tree does
    (:meth:`MethodWrites.hands_every_call`), else the field's table."""
    return by_method(attr, HANDED + method)


def handed_table(attr: str, method: str) -> str:
    """The table of what the callers of the methods named ``method`` hold in
    the field ``attr`` at their calls (:func:`note_handed`)."""
    return attr + HANDED + method


def split_by_method(attr: str):
    """``(table, method)`` of a :func:`by_method` table, else None."""
    table, marker, method = attr.partition(BY_METHOD)
    return (table, method) if marker else None


def calls_table(callee: str, caller: str) -> str:
    """The table of the conditions under which the methods named ``caller``
    call ``callee`` on ``self``."""
    return by_method(SELF_CALLS + callee, caller)


class MethodWrites:
    """The by-method tables of one tree: which methods write them, and which
    tables a read of one stands for."""

    def __init__(self, funcs: dict, family_of, resolver=None):
        by_name: dict = {}  # (family, method name) -> the tree's methods of that name
        by_family: dict = {}  # family -> its methods
        called = set()  # names of methods some method calls on self
        for fn in funcs.values():
            if fn.class_key is None:
                continue
            family = family_of(fn.class_key)
            by_name.setdefault((family, method_name(fn)), []).append(fn)
            by_family.setdefault(family, []).append(fn)
            called.update(fn.self_calls)
        self._by_name = by_name
        self._by_family = by_family
        self._handed_objects: dict = {}  # (family, field) -> whether it holds only what constructors are handed
        self._called = frozenset(called)
        self._closures: dict = {}
        self._written: dict = {}  # (family, method name) -> the fields its methods write themselves
        self._tables: dict = {}  # (family, table, method) -> the tables a read of the by-method table reads
        self._resolver = resolver
        self._handed: dict = {}  # (family, method name, field) -> whether every call hands the field

    def method_of(self, fn) -> "str | None":
        """``fn``'s name where its field writes also go to by-method tables
        (some method calls that name on ``self``), else None."""
        if fn.class_key is None:
            return None
        name = method_name(fn)
        return name if name in self._called else None

    def closure(self, family, method: str) -> tuple:
        """``(names, opaque)``: the methods a call of ``method`` on an object of
        ``family`` may run on it (that one and those they call on ``self``), and
        whether one of them may change its fields otherwise."""
        key = (family, method)
        found = self._closures.get(key)
        if found is None:
            names, opaque = {method}, False
            stack = [method]
            while stack:
                name = stack.pop()
                defined = self._by_name.get((family, name))
                # a library base's method, or a callable field: unknown, but for a field holding
                # another object (as a call of another object's method, taken not to write this one)
                opaque = opaque or defined is None and not self.holds_handed_object(family, name)
                for fn in defined or ():
                    opaque = opaque or fn.hands_self
                    for callee in fn.self_calls:
                        if callee not in names:
                            names.add(callee)
                            stack.append(callee)
            found = self._closures[key] = (frozenset(names), opaque)
        return found

    def holds_handed_object(self, family, field: str) -> bool:
        """Whether every write of ``field`` in ``family`` is a constructor's
        store of what it was handed (a parameter, as it is): an object its
        caller made before this one existed, never one of this object's own
        bound methods."""
        key = (family, field)
        found = self._handed_objects.get(key)
        if found is None:
            writes = [(fn, write) for fn in self._by_family.get(family, ()) for v in written_variants(fn)
                      for write in v.fields if write.attr == field]
            found = self._handed_objects[key] = bool(writes) and all(
                method_name(fn) == "__init__" and not write.element and write.atoms
                and all(atom.tag == "P" for atom in write.atoms) for fn, write in writes)
        return found

    def _writes_itself(self, family, method: str) -> frozenset:
        """The fields the methods named ``method`` write themselves."""
        key = (family, method)
        found = self._written.get(key)
        if found is None:
            found = self._written[key] = frozenset(
                field_name(write.attr) for fn in self._by_name.get(key, ())
                for v in written_variants(fn) for write in v.fields)
        return found

    def may_write(self, family, method: str, field: str) -> bool:
        """Whether a call of ``method`` on ``self`` may run a method that
        writes ``field`` (or may change the fields anyhow)."""
        names, opaque = self.closure(family, method)
        return opaque or any(field in self._writes_itself(family, name) for name in names)

    def tables(self, family, table: str, method: str) -> tuple:
        """The tables a read of what ``method`` may write to ``table`` (a field's
        table) reads (:meth:`_tables_of`), worked out once."""
        key = (family, table, method)
        found = self._tables.get(key)
        if found is None:
            found = self._tables[key] = self._tables_of(family, table, method)
        return found

    def _tables_of(self, family, table: str, method: str) -> tuple:
        """The tables a read of what ``method`` may write to ``table`` (a field's
        table) reads: what the methods of its closure write themselves, the
        conditions of their calls on ``self`` of methods that may write the
        field, and ``table`` itself where that cannot be told apart."""
        field = field_name(table)
        if KEPT in method:  # nothing where every method of the later name sets the field first
            earlier, _, later = method.rpartition(KEPT)
            defined = self._by_name.get((family, later))
            if defined and all(field in fn.sets_first for fn in defined):
                return ()
            return self.tables(family, table, earlier) if earlier else (table,)
        if method.startswith(HANDED):
            method = method[len(HANDED):]
            handed = table == field and self.hands_every_call(family, method, field)
            return (handed_table(field, method),) if handed else (table,)
        method, _, reader = method.partition(CALLED_IN)
        names, opaque = self.closure(family, method)
        out = [by_method(table, name) for name in sorted(names)]
        if reader and self.may_write(family, method, field):  # only the ranks that call it write
            out.append(calls_table(method, reader))
        for caller in sorted(names):
            for fn in self._by_name.get((family, caller), ()):
                for callee in fn.self_calls:
                    if self.may_write(family, callee, field):
                        opaque = opaque or not fn.deep  # a summary's calls carry no conditions
                        out.append(calls_table(callee, caller))
        return tuple(dict.fromkeys(out)) + ((table,) if opaque else ())


    def hands_every_call(self, family, method: str, field: str) -> bool:
        """Whether every call of the tree of a method named ``method`` in
        ``family`` hands it ``field`` (``Site.handed``: a call on ``self`` of a
        function that tracks the field); False where one of them has no call
        in the tree (it is called from outside, with anything in the field)."""
        key = (family, method, field)
        found = self._handed.get(key)
        if found is None:
            found = self._handed[key] = self._hands_every_call(family, method, field)
        return found

    def _hands_every_call(self, family, method: str, field: str) -> bool:
        defined = self._by_name.get((family, method))
        if not defined or self._resolver is None:
            return False
        callers = self._resolver.callers()
        for fn in defined:
            calls = callers.get(fn.key)
            if not calls:
                return False
            for caller, ref in calls:
                sites = [site for v in written_variants(caller) for site in v.sites if site.ref == ref]
                if not sites or any(all(attr != field for attr, _ in site.handed) for site in sites):
                    return False
        return True


def method_name(fn) -> str:
    return fn.qualname.rsplit(".", 1)[-1]


def note_self_call(program, fn, site, conditions: dict, mode) -> bool:
    """Add the conditions of ``fn``'s call ``site`` on ``self`` in its own body
    (``conditions``: not those of its callers) to the table of that callee
    and ``fn``'s name (:func:`calls_table`); whether the table changed."""
    callee = site.ref.name
    if fn.class_key is None or callee not in fn.self_calls:
        return False
    method = method_name(fn)
    family = program.resolver.family(fn.class_key)
    written = calls_table(callee, method)
    table = program.fields.setdefault((family, written, mode), {})
    link = (fn.path, site.span.line, f"`{site.callee}()` runs only on some ranks in `{fn.qualname}`")
    program.link_functions[link] = ("reach", (), site.callee)
    changed = False
    for k, (dims, via) in conditions.items():
        if merge(table, k, dims, via, link):
            changed = True
            program.changed_keys.add(("field", family, written))
    return changed


def note_handed(program, fn, site, mode) -> bool:
    """Add what ``fn`` holds in the fields its call ``site`` on ``self`` hands
    the callee (``Site.handed``) to the tables of that callee's name
    (:func:`handed_table`); whether a table changed."""
    family = program.resolver.family(fn.class_key)
    callee = site.ref.name
    changed = False
    for attr, atoms in site.handed:
        value = program.concrete(program.eval(atoms, mode), fn, mode) if atoms else {}
        if not value:
            continue
        written = handed_table(attr, callee)
        table = program.fields.setdefault((family, written, mode), {})
        link = (fn.path, site.span.line, f"`self.{attr}` holds it where `{fn.qualname}` calls `{site.callee}()`")
        program.link_functions[link] = ("field", (fn.key,), f"self.{attr}")
        for k, (dims, via) in value.items():
            if merge(table, k, dims, via, link):
                changed = True
                program.changed_keys.add(("field", family, written))
    return changed


def self_calls_written(program, fn) -> tuple:
    """The condition tables ``fn``'s calls on ``self`` write, and the tables of
    what they hand their callees (for the demand)."""
    method = method_name(fn)
    written = [calls_table(callee, method) for callee in fn.self_calls]
    written.extend(handed_table(attr, site.ref.name) for v in written_variants(fn) for site in v.sites
                   for attr, _ in site.handed)
    return tuple(dict.fromkeys(written))
