"""Fields whose entries are records of one shape, read back by position.

A table of in-flight work often keeps one tuple per key and unpacks it
whole when the work completes::

    self.pending[ticket] = (job, pages, time.time())      # when it starts
    ...
    job, pages, started = self.pending.pop(ticket)        # when it is done
    if job.finished():                                    # reads the job alone
        self.sync(job)

Read as one value, the entry holds the wall clock of its third position, so
every name unpacked from it, the job included, would differ between ranks.
Where every store into the field in the file writes out a tuple of one
length, and nothing else fills it, each position is a field of its own
(``atoms.entry_field``): the store writes position ``i`` with that element
(beside the whole field, as before: :func:`entry_writes`), and an unpacking
of one entry (``a, b, c = self.pending.pop(k)``, ``.get(k)``,
``self.pending[k]``) reads position ``i`` into the ``i``-th name
(:func:`entry_parts`).  The whole-tree pass reads a position
only where every class of the field's family that writes the field writes
its positions too (``reads.entry_fields``); elsewhere a position reads the
whole field.

A list field filled by ``append`` alone (``self.plans.append(f(g, rank))``,
every other store into it in the file a new empty list or table) whose
appended values are results of a function writing out dict displays with
constant keys keeps one position per key in the same way
(:func:`appended_entry_writes`); ``plan = self.plans[i]`` then reads
``plan["wraps"]`` from that position (:func:`keyed_entry_read`).  Results
of a function writing out dict displays with computed keys keep their own
structure and their values' own structure apart there (:data:`DICT_OWN`,
:data:`VALUES_OWN`), read through a name a loop over the field binds to one
element at a time (:func:`element_own`): ``for maps in self.ranges: for k,
buckets in maps.items(): for b in buckets:`` runs as each dict's
comprehension says, whatever each bucket holds.
"""

from __future__ import annotations

import ast
from typing import Optional

from .astwalk import CHILDREN, walked
from .atoms import EMPTY, STORED_OWN, entry_field, field_read, own_field, whole, with_ref
from .callrefs import OWN_PART, element, own_results, part_ref
from .localdicts import key_read_local_own
from .ownstructure import constant_key_read, constant_keyed
from .records import FieldWrite
from .shapes import loop_values_name

#: the calls on a table that hand back one of its entries as it was stored
_ENTRY_READERS = frozenset({"pop", "get", "__getitem__"})
#: the calls on a table that remove entries or read it, and store nothing
_NON_STORING = _ENTRY_READERS | frozenset({"clear", "keys", "values", "items", "copy", "__contains__", "popitem"})
#: the calls on a table, or on one of its entries, that change nothing in it
_READING = frozenset({"get", "__getitem__", "keys", "values", "items", "copy", "__contains__"})
#: calls that make an empty table
_EMPTY_MAKERS = frozenset({"dict", "OrderedDict"})


def empty_table(value) -> bool:
    """``{}``, ``dict()``, ``OrderedDict()``: a table with no entry yet."""
    t = type(value)
    if t is ast.Dict:
        return not value.keys
    if t is ast.Call and not value.args and not value.keywords:
        func = value.func
        name = func.id if type(func) is ast.Name else func.attr if type(func) is ast.Attribute else None
        return name in _EMPTY_MAKERS
    return False


def _record_length(value) -> Optional[int]:
    """The length of a tuple written out with no starred element, else None."""
    if type(value) is not ast.Tuple or any(type(e) is ast.Starred for e in value.elts):
        return None
    return len(value.elts)


def positional_fields(nodes) -> dict:
    """attr -> length: the attributes every store into which in the file (on
    any object) is an entry written out as a tuple of that length
    (``obj.attr[k] = (a, b, c)``) or a new empty table (``obj.attr = {}``),
    with at least one entry store, and which no other call than a lookup,
    a removal or a read (:data:`_NON_STORING`) is made on; ``APPENDED`` for
    those every store into which is ``obj.attr.append(v)`` or a new empty
    list or table (:func:`appended_entry_writes`); ``KEYED`` for the other
    tables every store into which is one entry (``obj.attr[k] = v``) or a
    new empty table, on whose entries nothing is changed in place
    (:func:`entry_store_writes`).  ``nodes``: every node of the file
    (``walked(tree)``), or at least, each once, every call, every store
    into and one-target assignment to an attribute or an element of one,
    and every deletion of an element (:func:`scanned_entry_nodes`; a
    deleted attribute is never read here)."""
    lengths: dict = {}
    spoilt: set = set()
    called: set = set()  # spoilt by a call that stores (``.update``, ``.setdefault``)
    empties: dict = {}
    keyed: dict = {}
    stores: dict = {}
    accepted: dict = {}
    appended: dict = {}
    empty_lists: dict = {}
    changed_entries: set = set()  # ``obj.attr[i][k] = v``, ``obj.attr[i].pop(k)``: an entry changed in place
    for node in nodes:
        t = type(node)
        if t is ast.Attribute:
            if type(node.ctx) is ast.Store:
                stores[node.attr] = stores.get(node.attr, 0) + 1
            continue
        if t is ast.Subscript:
            if type(node.ctx) is ast.Store and type(node.value) is ast.Attribute:
                stores[node.value.attr] = stores.get(node.value.attr, 0) + 1
            elif type(node.ctx) is not ast.Load and (entry := _entry_of(node.value)) is not None:
                changed_entries.add(entry)
            continue
        if t is ast.Call:
            func = node.func
            if type(func) is ast.Attribute and type(func.value) is ast.Attribute and func.attr == "append" \
                    and len(node.args) == 1 and not node.keywords and type(node.args[0]) is not ast.Starred:
                appended[func.value.attr] = appended.get(func.value.attr, 0) + 1
            elif type(func) is ast.Attribute and type(func.value) is ast.Attribute and func.attr not in _NON_STORING:
                spoilt.add(func.value.attr)  # ``obj.attr.update(...)``, ``.setdefault``: filled another way
                called.add(func.value.attr)
            elif type(func) is ast.Attribute and func.attr not in _READING \
                    and (entry := _entry_of(func.value)) is not None:
                changed_entries.add(entry)
            continue
        if t is not ast.Assign or len(node.targets) != 1:
            continue
        target = node.targets[0]
        if type(target) is ast.Attribute and empty_table(node.value):
            accepted[target.attr] = accepted.get(target.attr, 0) + 1
            empties[target.attr] = empties.get(target.attr, 0) + 1
        elif type(target) is ast.Attribute and type(node.value) is ast.List and not node.value.elts:
            empty_lists[target.attr] = empty_lists.get(target.attr, 0) + 1
        elif type(target) is ast.Subscript and type(target.value) is ast.Attribute \
                and type(target.slice) is not ast.Slice:
            attr = target.value.attr
            keyed[attr] = keyed.get(attr, 0) + 1
            length = _record_length(node.value)
            if length is None or lengths.setdefault(attr, length) != length:
                spoilt.add(attr)
            else:
                accepted[attr] = accepted.get(attr, 0) + 1
    found = {attr: length for attr, length in lengths.items()
             if attr not in spoilt and attr not in appended and accepted.get(attr) == stores.get(attr)}
    found.update((attr, APPENDED) for attr in appended if attr not in spoilt and attr not in lengths
                 and attr not in changed_entries
                 and accepted.get(attr, 0) + empty_lists.get(attr, 0) == stores.get(attr, 0))
    found.update((attr, KEYED) for attr, count in keyed.items() if attr not in found and attr not in called
                 and attr not in appended and attr not in changed_entries
                 and count + empties.get(attr, 0) == stores.get(attr, 0))
    return found


def scanned_entry_nodes(module_body, functions: dict) -> list:
    """What :func:`positional_fields` reads of a file, each node once, from
    the call scans of its functions (``FunctionScan.scan_calls``: their
    stores and assignments into attributes and elements, ``entry_nodes``,
    and their calls) in place of a walk of the whole module:
    ``module_body`` is the module's own
    :class:`~cslint.analysis.function.FunctionInfo`, ``functions`` the
    scanned function of each definition (by the definition's ``id``).  What
    no scan walks is walked here: the signatures of the functions
    (defaults, annotations), the bodies of classes but their methods'
    (bases, decorators, class attributes), lambdas, and a definition no
    function was made for.  A function made for no definition of the tree
    (a dataclass's ``__init__``, written from its fields) is never
    reached."""
    scanned, unscanned = [], []
    _scanned_parts(module_body, functions, scanned, unscanned)
    table = CHILDREN
    for node in unscanned:  # (grows behind the loop, as in astwalk.walked)
        t = type(node)
        if t is ast.FunctionDef or t is ast.AsyncFunctionDef:
            inner = functions.get(id(node))
            if inner is not None:  # a method: its body scanned, its signature and decorators not
                unscanned += node.decorator_list
                unscanned.append(node.args)
                if node.returns is not None:
                    unscanned.append(node.returns)
                _scanned_parts(inner, functions, scanned, unscanned)
                continue
        read = table[t]
        if read is not None:
            unscanned += read(node)
    return scanned + unscanned


def _scanned_parts(function, functions: dict, scanned: list, unscanned: list) -> None:
    """Add to ``scanned`` what the call scan of ``function`` and of the
    functions defined in its body found, and to ``unscanned`` what those
    scans leave out (:func:`scanned_entry_nodes`)."""
    infos = [function]
    for info in infos:  # (grows behind the loop)
        scanned += info.entry_nodes
        for calls in info.calls_by_statement.values():
            scanned += calls
        scanned += info.bare_calls
        for lambdas in info.lambdas_by_statement.values():
            unscanned += lambdas
        for definition in info.nested_definitions:  # (their decorators scanned with the body holding them)
            if type(definition) is ast.ClassDef:
                unscanned += definition.bases
                unscanned += definition.keywords
                unscanned += definition.body
                continue
            unscanned.append(definition.args)
            if definition.returns is not None:
                unscanned.append(definition.returns)
            inner = functions.get(id(definition))
            if inner is not None:
                infos.append(inner)
            else:
                unscanned += definition.body


def _entry_of(value) -> Optional[str]:
    """``attr`` where ``value`` is an entry of ``obj.attr`` (``obj.attr[i]``,
    ``obj.attr[i][j]``), else None."""
    if type(value) is not ast.Subscript:
        return None
    while type(value) is ast.Subscript:
        value = value.value
    return value.attr if type(value) is ast.Attribute else None


#: :func:`positional_fields` of a field filled by ``append`` alone
APPENDED = -1
#: :func:`positional_fields` of a table filled by entry stores alone (``obj.attr[k] = v``)
KEYED = -2
#: the position of such a field that every ``append`` writes with what is not
#: a dict a function returns (the implicit flow, another value, a result of
#: any other call): a key's position is read together with it
_ANY_KEY = "*"
#: the positions of such a field that hold, of the appended results of a
#: function writing out dict displays with computed keys, the whole dicts
#: (read with a key's position), and apart the dicts' own structure
#: (``callrefs.own_results``; of constant-keyed ones too) and their values' own
#: structure (:data:`ANY_VALUE_OWN`), read through a name a loop over the
#: field binds to its elements (:func:`element_own`)
_KEYED_WHOLE, DICT_OWN, VALUES_OWN = "dicts", "dicts#own", "values#own"


def _key_position(attr: str, key: str) -> str:
    return entry_field(attr, repr(key))  # quoted: never the catch-all position


def appended_entry_writes(info, attr: str, call: ast.Call, atoms: frozenset, line: int) -> list:
    """``self.plans.append(v)`` into a field filled by ``append`` alone: the
    result of a call in ``v`` of a function that writes out dict displays
    with constant keys (``ModuleContext.returns_dicts``) writes each key a
    position of the field's entries, holding what the function returns
    under it (``callrefs.element``); the rest of ``atoms`` (the implicit flow,
    another value ``v`` may be, any other call) goes to the position read
    with every key (``_ANY_KEY``)."""
    if call.func.attr != "append" or info.ctx.positional_fields.get(attr) != APPENDED:
        return []
    ctx = info.ctx
    returns_dicts = ctx.returns_dicts
    keys: set = set()
    keyed, computed = [], []
    for atom in atoms:
        if atom.tag == "R" and atom.ref.tag != "class" and atom.ref.tag != "part":
            found = returns_dicts(atom.ref)
            if found:
                keys.update(found)
                keyed.append(atom)
            elif ctx.returns_keyed_values(atom.ref):
                computed.append(atom)
    keyed, computed = frozenset(keyed), frozenset(computed)
    class_key = info.class_key
    writes = [FieldWrite(class_key, entry_field(attr, _ANY_KEY), atoms.difference(keyed, computed), line, True)]
    writes.extend(FieldWrite(class_key, _key_position(attr, key), element(key, keyed, returns_dicts), line, True)
                  for key in sorted(keys))
    if computed:
        writes.append(FieldWrite(class_key, entry_field(attr, _KEYED_WHOLE), computed, line, True))
        writes.append(FieldWrite(class_key, entry_field(attr, VALUES_OWN), _parts(computed, ANY_VALUE_OWN), line, True))
    if keyed or computed:
        writes.append(FieldWrite(class_key, entry_field(attr, DICT_OWN), own_results(
            keyed | computed, ctx.returns_own_structure) or keyed | computed, line, True))
    return writes


def _parts(results: frozenset, index) -> frozenset:
    """Each call result of ``results`` read as its part ``index`` (``callrefs.part_ref``)."""
    return frozenset(with_ref(a, part_ref(index, a.ref)) for a in results)


def keyed_entry_read(info, value, atoms: frozenset, key: str) -> Optional[frozenset]:
    """What ``plan[key]`` of ``plan = self.plans[i]`` reads, where the field
    is filled by ``append`` alone (:func:`appended_entry_writes`): the key's
    position and what every append writes beside it, with what else the read
    depends on (the index, the implicit flow, all in ``atoms``).  None where
    ``value`` is no such read."""
    table = entry_read(value)
    attr = info.self_attr(table) if table is not None else None
    if attr is None or info.ctx.positional_fields.get(attr) != APPENDED:
        return None
    class_key = info.class_key
    whole = [atom for atom in atoms if atom.tag == "F" and atom.attr == attr and atom.class_key == class_key]
    if not whole:
        return None
    return atoms.difference(whole) | {field_read(class_key, _key_position(attr, key)),
                                      field_read(class_key, entry_field(attr, _ANY_KEY)),
                                      field_read(class_key, entry_field(attr, _KEYED_WHOLE))}


def element_own(info, base, atoms: frozenset, position: str) -> Optional[frozenset]:
    """What ``maps`` holds at ``position`` (:data:`DICT_OWN`, :data:`VALUES_OWN`)
    where ``maps``, the name ``base``, is bound only by a loop over a field
    filled by ``append`` alone (``for maps in self.ranges:``, ``for i, maps in
    enumerate(self.ranges):``, :func:`loop_element_field`): each of its values
    is one element the field was appended, so its own structure, or its
    values', is that position of the entries, beside what every append writes
    (:data:`_ANY_KEY`) and what else ``atoms`` holds (the implicit flow).
    None where ``base`` is no such name, or holds no read of that field."""
    if type(base) is not ast.Name:
        return None
    class_key = info.class_key
    fields = [a for a in atoms if a.tag == "F" and a.class_key == class_key]
    if not fields:  # (the file's positional fields are worked out only for a read of a field)
        return None
    appended = info.ctx.positional_fields
    if not any(appended.get(a.attr) == APPENDED for a in fields):
        return None
    attr = loop_element_field(info, base.id)
    whole = [a for a in atoms if a.tag == "F" and a.class_key == class_key and a.attr == attr]
    if not whole:
        return None
    return atoms.difference(whole) | {field_read(class_key, entry_field(attr, position)),
                                      field_read(class_key, entry_field(attr, _ANY_KEY))}


def loop_element_field(info, name: str) -> Optional[str]:
    """``attr`` where the one binding of ``name`` in the function (nested
    definitions included) is the target of ``for name in self.attr`` or
    ``for i, name in enumerate(self.attr)``: the name holds one element of
    the field at a time, never the field itself; else None."""
    found = info.__dict__.setdefault("_loop_elements", {})
    if name in found:
        return found[name]
    attr, bindings = None, 0
    for node in walked(info.func):
        t = type(node)
        if t is ast.Name and type(node.ctx) is not ast.Load and node.id == name:
            bindings += 1
        elif (t is ast.Global or t is ast.Nonlocal) and name in node.names:
            bindings += 2
        elif t is ast.For or t is ast.AsyncFor:
            attr = _element_loop(info, node, name) or attr
    found[name] = attr = attr if bindings == 1 else None
    return attr


def _element_loop(info, loop, name: str) -> Optional[str]:
    """``attr`` where ``loop`` binds ``name`` to an element of ``self.attr``
    (straight, or the second name of ``enumerate(self.attr)``)."""
    target, it = loop.target, loop.iter
    if type(it) is ast.Call and type(it.func) is ast.Name and it.func.id == "enumerate" and len(it.args) == 1 \
            and not it.keywords and type(target) is ast.Tuple and len(target.elts) == 2:
        target, it = target.elts[1], it.args[0]
    if type(target) is not ast.Name or target.id != name or type(it) is not ast.Attribute:
        return None
    return info.self_attr(it)


def entry_read(value) -> Optional[ast.Attribute]:
    """The table ``value`` reads one entry of as it was stored
    (``tbl.pop(k)``, ``tbl.get(k)``, ``tbl[k]``), else None."""
    t = type(value)
    if t is ast.Subscript and type(value.slice) is not ast.Slice and type(value.value) is ast.Attribute:
        return value.value
    if t is ast.Call and type(value.func) is ast.Attribute and value.func.attr in _ENTRY_READERS \
            and type(value.func.value) is ast.Attribute and value.args:
        return value.func.value
    return None


def entry_writes(info, evaluate, attr: str, value, key: frozenset, env, implicit: frozenset, line: int) -> list:
    """The position writes of ``self.attr[k] = (a, b, c)`` into a table
    whose entries are all such tuples: each position with its own element
    (and the key and the implicit flow); ``self.attr = {}`` writes each
    position with the implicit flow alone, and so says that this class keeps
    the table's positions (``reads.entry_fields``); none for another table."""
    length = info.ctx.positional_fields.get(attr)
    if length is None:
        return []
    record = type(value) is ast.Tuple
    if length == KEYED:  # (its entry stores: entry_store_writes)
        return [] if record else [FieldWrite(info.class_key, entry_field(attr, STORED_OWN), implicit, line, True)]
    return [FieldWrite(info.class_key, entry_field(attr, index),
                       (evaluate(value.elts[index], env) | key if record else EMPTY) | implicit, line, True)
            for index in range(length)]


def entry_store_writes(evaluator, attr: str, value, env, assigned: bool, keyed: frozenset, line: int) -> list:
    """What ``self.attr[k] = v`` writes beside the whole field: the table's
    own structure changes by the key and the implicit flow alone
    (``keyed``); into a table filled by entry stores alone (``KEYED``,
    ``assigned``: a plain ``=``), the position of the stored values' own
    structure gets what ``v``'s own structure depends on (kept apart where
    the dataflow keeps it: a list a function fills by ``append``, a
    parameter's own part; else its whole value) with the same.  A lookup
    reads it (:func:`keyed_lookup_own`)."""
    info = evaluator.info
    writes = [FieldWrite(info.class_key, own_field(attr), keyed, line)]
    if assigned and info.ctx.positional_fields.get(attr) == KEYED:
        own = evaluator.kept_apart(value, env)
        writes.append(FieldWrite(info.class_key, entry_field(attr, STORED_OWN),
                                 (evaluator.eval(value, env) if own is None else own) | keyed, line, True))
    return writes


def keyed_lookup_own(info, atoms: frozenset) -> Optional[frozenset]:
    """The own structure (None-ness, length, kind) of what ``atoms`` holds,
    where it holds a lookup ``self.attr.get(k)`` or ``self.attr.pop(k)`` of
    a table of this class filled by entry stores alone (``KEYED``): None
    where the key is missing, else a value stored there, so whether the key
    is there (the table's own structure) and the own structure of the
    values stored into it (:func:`entry_store_writes`), beside what else the
    lookup depends on (the key and a default, whole: which entry it finds
    follows what the key holds) -- never what the stored values hold.  None
    where ``atoms`` holds no such lookup."""
    class_key = info.class_key
    found = None
    for atom in atoms:
        if atom.tag == "R" and atom.ref.tag == "fieldmethod" and atom.ref.name in KEYED_LOOKUPS \
                and atom.ref.class_key == class_key:
            if found is None:
                found = []
            found.append(atom)
    if found is None:
        return None
    positions = info.ctx.positional_fields  # (worked out for a file only once a lookup of a field is met)
    found = [atom for atom in found if positions.get(atom.ref.attr) == KEYED]
    if not found:
        return None
    out = set(atoms.difference(found))
    for atom in found:
        attr = atom.ref.attr
        # the key (and a default): which value it finds, so whether it finds one, follows what the key holds
        out.update(whole(frozenset(a for a in atom.fallback
                                   if not (a.tag == "F" and a.class_key == class_key and a.attr == attr))))
        out.add(field_read(class_key, own_field(attr)))
        out.add(field_read(class_key, entry_field(attr, STORED_OWN)))
    return frozenset(out)


#: the lookups of a keyed table that hand back one of its stored values or None (``get`` with no default of
#: its own is None where the key is missing; a default given is among the call's other arguments)
KEYED_LOOKUPS = frozenset({"get", "pop"})


def entry_parts(info, target: ast.Tuple, value, atoms: frozenset) -> Optional[list]:
    """What each name of ``a, b, c = self.pending.pop(k)`` reads, where the
    table's entries are tuples of that length: its own position of the entry,
    beside what else the read depends on (the key, a default, the implicit
    flow, all in ``atoms``).  None where the value is not such an entry."""
    table = entry_read(value)
    attr = info.self_attr(table) if table is not None else None
    if attr is None or info.ctx.positional_fields.get(attr) != len(target.elts) \
            or any(type(e) is ast.Starred for e in target.elts):
        return None
    class_key = info.class_key
    rest = set()
    for atom in atoms:
        if atom.tag == "R" and atom.ref.tag == "fieldmethod" and atom.ref.attr == attr \
                and atom.ref.class_key == class_key:
            # the table's own lookup (only tuples are ever stored into it): what the
            # call depends on apart from the method, the table read by position below
            rest.update(atom.fallback)
        else:
            rest.add(atom)
    whole = [atom for atom in rest if atom.tag == "F" and atom.attr == attr and atom.class_key == class_key]
    if not whole:
        return None
    rest = frozenset(rest.difference(whole))
    return [rest | {field_read(class_key, entry_field(attr, index))} for index in range(len(target.elts))]


def key_own(key: str) -> tuple:
    """The part index standing for the own structure of the value a dict
    display a function returns holds under ``key`` (its None-ness, length,
    kind), beside ``key`` itself, its whole value (``Variant.return_keys``)."""
    return (OWN_PART, key)


def returned_by_key(transfer, value: ast.Dict, env, implicit: frozenset) -> Optional[tuple]:
    """``return {"sizes": n, "offsets": o}`` with constant string keys alone:
    ``Transfer.returned`` with the value of each key kept apart, in the
    order of the sorted keys it returns last (``Variant.return_keys``), each
    chosen as a return of its value is, and then the own structure of each
    key's value (:func:`key_own`), what ``Transfer.returned`` would give it
    were it returned alone (``return {"k": [f(b) for b in bs]}``: the
    comprehension's generators); the tests are the whole's and its own
    structure's (never None, as long as its keys); None for another display."""
    if not constant_keyed(value):
        return _returned_by_any_key(transfer, value, env, implicit)
    literal = {k.value: v for k, v in zip(value.keys, value.values)}
    order = tuple(sorted(literal))
    evaluate = transfer.evaluator.eval
    parts, owns = [], []
    for key in order:
        atoms = evaluate(literal[key], env)
        choice = transfer.choice_reaching(atoms, implicit)
        parts.append(atoms | choice)
        owns.append(_value_own(transfer, literal[key], env, implicit, atoms | choice, choice))
    whole = evaluate(value, env)
    return whole | transfer.choice_reaching(whole, implicit), tuple(parts + owns), implicit, \
        order + tuple(key_own(key) for key in order)


#: the part index standing for the own structure of any value a dict display
#: with computed keys holds (``{(p_dtype, g_dtype): [...]}``): the union of
#: its values' own structures, read by a loop over its ``.values()``
ANY_VALUE_OWN = (OWN_PART, None)


def _returned_by_any_key(transfer, value: ast.Dict, env, implicit: frozenset) -> Optional[tuple]:
    """``return {(a, b): [f(x) for x in xs]}``: a display with computed keys
    (no ``**other``): its whole value, and the own structure of any value it
    holds (:data:`ANY_VALUE_OWN`) with the tests choosing the return; None
    for another display."""
    if not value.keys or any(k is None for k in value.keys):
        return None
    evaluate = transfer.evaluator.eval
    held = evaluate(value, env)
    choice = transfer.choice_reaching(held, implicit)
    own = EMPTY.union(*[_value_own(transfer, v, env, implicit, held | choice, choice) for v in value.values])
    # one entry per key written, fewer where keys are equal: the keys decide its length
    length = implicit if len(value.keys) == 1 else implicit.union(*[whole(evaluate(k, env)) for k in value.keys])
    return held | choice, (own | choice,), length, (ANY_VALUE_OWN,)


def values_own(evaluator, loop, env, stored: frozenset) -> tuple:
    """``for k, v in d.items()`` / ``for v in d.values()``, ``d`` a call or a
    name never stored into (not in ``stored``), of a function every
    ``return`` of which writes out a display with computed keys: the name
    ``v`` and its own structure, the own part each such call result keeps
    for any value (:data:`ANY_VALUE_OWN`), all else ``d`` holds whole (its
    keys, the implicit flow are the caller's); ``(None, None)`` otherwise."""
    name = loop_values_name(loop) if stored else None
    base = loop.iter.func.value if name in stored else None  # (only an element store keeps its own apart)
    if base is None or type(base) is ast.Name and base.id in stored:
        return None, None
    atoms = evaluator.eval(base, env)
    keyed = [a for a in atoms if a.tag == "R" and a.ref.tag != "class" and a.ref.tag != "part"
             and evaluator.ctx.returns_keyed_values(a.ref)]
    if not keyed:
        own = element_own(evaluator.info, base, atoms, VALUES_OWN)  # ``for maps in self.ranges:``
        return (None, None) if own is None else (name, own)
    return name, atoms.difference(keyed).union([with_ref(a, part_ref(ANY_VALUE_OWN, a.ref)) for a in keyed])


#: the views of a dict as many as its entries
_DICT_VIEWS = frozenset({"items", "keys", "values"})


def dict_view_own(reads, view: ast.Call, env) -> Optional[frozenset]:
    """The own structure (length, truth) of ``d.items()``, ``d.keys()`` or
    ``d.values()``, ``d`` a call or a name never stored into, that holds the
    result of a function every ``return`` of which writes out a dict display
    (``ModuleContext.returns_dicts``, ``returns_keyed_values``): as many
    entries as that dict, so its own part (``callrefs.own_results``); anything
    else ``d`` holds stays whole.  None for another call."""
    func = view.func
    if type(func) is not ast.Attribute or func.attr not in _DICT_VIEWS or view.args or view.keywords:
        return None
    base = func.value
    if type(base) is not ast.Call and (type(base) is not ast.Name or base.id in reads.info.element_stores):
        return None
    ctx = reads.ctx
    atoms = reads.eval(base, env)
    if not any(a.tag == "R" and a.ref.tag != "class" and a.ref.tag != "part"
               and (ctx.returns_dicts(a.ref) or ctx.returns_keyed_values(a.ref)) for a in atoms):
        return element_own(reads.info, base, atoms, DICT_OWN)  # ``for maps in self.ranges: maps.items()``
    return own_results(atoms, ctx.returns_own_structure)


def _value_own(transfer, value, env, implicit: frozenset, chosen: frozenset, choice: frozenset) -> frozenset:
    """The own structure of ``value`` under a key of a returned display: the
    tests alone for a list or tuple written out or a display with constant
    keys, a comprehension's generators, a container's own part kept apart;
    else its whole value (``chosen``)."""
    t = type(value)
    if (t is ast.Tuple or t is ast.List) and not any(type(e) is ast.Starred for e in value.elts) \
            or constant_keyed(value):
        return implicit
    if t is ast.ListComp:
        own = transfer.evaluator.comprehension_length(value, env)
    else:
        own = transfer.evaluator.kept_apart(value, env)
    return chosen if own is None else own | choice


def key_read_own(evaluator, value: ast.Subscript, env, stored: frozenset) -> Optional[frozenset]:
    """The own structure of ``base["k"]`` (a constant string key): where
    ``base`` is a call, or a name never stored into (not in ``stored``), of a
    function every ``return`` of which writes out a dict display with that
    key, the value it hands back under the key is read as that value's own
    structure alone (``part_ref(key_own("k"), ref)``: ``maps = f(); xs =
    maps["k"]; for x in xs:`` reads the length of ``f``'s list under "k",
    not what its elements hold); anything else the read holds stays whole.
    None where no such value is read."""
    key, base = constant_key_read(value), value.value
    if key is None or type(base) is ast.Name and base.id in stored:
        return None
    local = key_read_local_own(evaluator, base, key, env)  # a dict display of this function's own
    if local is not None:
        return local
    whole = evaluator.eval(base, env)
    read = evaluator.eval(value, env)
    keyed = [a for a in element(key, whole, evaluator.ctx.returns_dicts).difference(whole)
             if a in read and a.ref.index == key]
    if not keyed:
        return None
    return read.difference(keyed).union([with_ref(a, part_ref(key_own(key), a.ref.ref)) for a in keyed])


def parted_by(ctx, index):
    """Which callees a constant ``index`` reads one part of what they return
    (``callrefs.element``): those returning tuples by an int position, dict
    displays by a string key; None for any other index."""
    if type(index) is not ast.Constant:
        return None
    t = type(index.value)
    if t is int and index.value >= 0:
        return ctx.returns_tuples
    return ctx.returns_dicts if t is str else None
