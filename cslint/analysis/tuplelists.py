"""Local lists of tuples written out: what sits at each position kept apart.

A function often queues what it will finish later as tuples, then reads
them back by unpacking each one::

    pending = []
    for key, size in metadata:
        tensor = torch.empty(size)
        use_all_gather = tensor.numel() % group.world_size == 0
        if use_all_gather:
            tensor = tensor.reshape(group.world_size, -1)[group.rank_in_group]
        pending.append((key, tensor, use_all_gather))
    ...
    for key, tensor, use_all_gather in pending:
        if use_all_gather:
            tensor = group.all_gather(tensor, dim=0)

The list holds every element's whole value, so each name a loop unpacks an
element into took all of it: the flag took on the rank that picked this
rank's row beside it.  Here each position of the tuples also keeps what was
appended at it, :func:`position_entry` (``(POSITION, name, i)`` in the
dataflow): an append writes position ``i`` with the tuple's ``i``-th element
and the implicit flow (``Transfer.simple_statement``), and a loop or a
comprehension unpacking an element into as many targets binds the names of
the ``i``-th target to position ``i`` (``iteration._parts``).  The list's own
structure (how many elements, the trip count) is read as before.

Only a name that :func:`tuple_lists` accepts counts: no parameter, no
``global``/``nonlocal``, no mention in a nested function, class or lambda;
every binding a plain ``name = []`` (or ``list()``); every append a
statement ``name.append((a, b, ...))`` of one length, and at least one; every
other mention the iterable of a ``for`` or a comprehension unpacking into
that many targets (at least one), ``len(name)``, or a test of its truth.
Nothing else changes the list (no ``extend``, ``+=``, element store,
``del``, other method, other name or callee it is handed to), so what sits at
a position is what an append put there.

A local tuple saved to be put back is read the same way::

    saved = (self.heads, self.rank, self.size)
    self.heads, self.rank, self.size = heads, rank, size
    try:
        yield
    finally:
        (self.heads, self.rank, self.size) = saved

Each name the unpacking binds (a local or a field) takes what the display
held at its position, :func:`unpacked_positions` (``(LOCAL_POSITION, name,
i)`` in the dataflow, written by each binding with its ``i``-th element and
the implicit flow, :func:`write_bound_positions`), so the size put back is
the size saved, not the rank beside it.  Only a name that :func:`tuple_locals`
accepts counts: no parameter, no ``global``/``nonlocal``, no mention in a
nested function, class, lambda or comprehension; one binding, a plain
``name = (a, b, ...)`` with no ``*`` (:func:`astwalk.plain_bindings`); every
other mention the whole value of an assignment unpacking it into that many
targets (``a, b = name``, no ``*``), inside a statement after the binding in
the binding's own statement list (:func:`_statements_after`); and every
element a constant or a field of the method's own object read whole
(``self.size``, :func:`_kept_whole`): a local, ``box.v`` or ``keep[0]`` may
be a list changed after the save through an alias or a helper, which a
position would not see.  A tuple never
changes and nothing else binds the name, so an unpacking reads what that
binding put there the last time it ran; and it ran past every test, loop
and ``try`` the binding ran under, each time after the binding: no test, no
failure and no earlier pass of a loop decides which binding it reads (where
a name has several, or is read elsewhere, those do, and the dataflow adds
them to the name alone: a gate out of an ``if`` arm, a failure skipping a
binding in a ``try``), so the positions hold all that decides them.
"""

from __future__ import annotations

import ast

from .astwalk import CHILDREN, COMPREHENSIONS, DEFINITIONS, plain_bindings, statement_lists, walk
from .atoms import EMPTY
from .callrefs import first_positional_param

#: the first item of the dataflow key of what a list's tuples hold at a position
POSITION = "tuple-position"
#: the first item of the dataflow key of what a local tuple holds at a position
LOCAL_POSITION = "tuple-local-position"

_LOOPS = (ast.For, ast.AsyncFor, ast.comprehension)


def position_entry(name: str, position: int) -> tuple:
    """The dataflow key of what the tuples of list ``name`` hold at ``position``."""
    return (POSITION, name, position)


def appended_tuple(call: ast.Call):
    """The tuple written out that ``name.append((a, b, ...))`` appends
    (no ``*`` element, no keyword), else None."""
    if len(call.args) != 1 or call.keywords or type(call.func) is not ast.Attribute or call.func.attr != "append":
        return None
    value = call.args[0]
    if type(value) is not ast.Tuple or any(type(e) is ast.Starred for e in value.elts):
        return None
    return value


def write_appended_positions(evaluator, call: ast.Call, name: str, flow) -> None:
    """``name.append((a, b))`` (``call``) to a list that keeps its tuples'
    positions apart: each position also holds its element, with the implicit
    flow (``flow``: the :class:`~cslint.analysis.flows.Flow` of the statement)."""
    if name not in evaluator.info.tuple_appended:
        return
    value = appended_tuple(call)
    if value is None or name not in tuple_lists(evaluator.info):
        return
    implicit = flow.implicit
    for position, element in enumerate(value.elts):
        flow.write(position_entry(name, position), evaluator.eval(element, flow.env) | implicit, strong=False)


def unpacked_length(target):
    """How many targets ``target`` unpacks an element into (no ``*``), else None."""
    if type(target) not in (ast.Tuple, ast.List) or any(type(e) is ast.Starred for e in target.elts):
        return None
    return len(target.elts)


def tuple_lists(info) -> dict:
    """name -> the length of its tuples, for the local lists of the
    function of ``info`` (a :class:`~cslint.analysis.function.FunctionInfo`)
    that keep their positions apart (see the module text).  Computed once,
    and only for a function that appends a tuple written out to a name
    (``FunctionInfo.tuple_appended``, from its one walk)."""
    found = info.__dict__.get("_tuple_lists")
    if found is None:
        candidates = info.tuple_appended
        func = info.func
        if not candidates or isinstance(func, ast.Module):
            found = {}
        else:
            found = _accepted(func, candidates - info.param_names)
        info.__dict__["_tuple_lists"] = found
    return found


def _accepted(func, candidates: frozenset) -> dict:
    lengths: dict = {}  # name -> {length}, appended and unpacked
    appended, unpacked, spoilt = set(), set(), set()
    body = func.body if isinstance(func.body, list) else [func.body]
    stack = [(node, func, False) for node in body]
    while stack:
        node, parent, nested = stack.pop()
        t = type(node)
        if t is ast.Name:
            name = node.id
            if name in candidates and name not in spoilt:
                kind = None if nested else _mention(node, parent)
                if kind is None:
                    spoilt.add(name)
                elif kind != "read":
                    unpacked.add(name)
                    lengths.setdefault(name, set()).add(kind[1])
            continue
        if t is ast.Global or t is ast.Nonlocal:
            spoilt.update(node.names)
            continue
        if t is ast.Expr and type(node.value) is ast.Call and type(node.value.func) is ast.Attribute \
                and type(node.value.func.value) is ast.Name and node.value.func.value.id in candidates:
            value = appended_tuple(node.value)
            if value is not None:  # ``name.append((a, b, ...))``: the receiver is no other mention
                name = node.value.func.value.id
                if nested:
                    spoilt.add(name)
                appended.add(name)
                lengths.setdefault(name, set()).add(len(value.elts))
                stack.extend((child, value, nested) for child in value.elts)
                continue
        inner = nested or t in DEFINITIONS
        read = CHILDREN[t]
        if read is not None:
            stack.extend((child, node, inner) for child in read(node))
    return {name: next(iter(lengths[name])) for name in sorted(appended & unpacked - spoilt)
            if len(lengths[name]) == 1}


def _mention(node: ast.Name, parent):
    """What a mention of a candidate list (other than as the receiver of an
    append statement, which the walk takes apart) does: ``("unpack", n)``,
    ``"read"`` (a binding to an empty list, ``len``, a truth test), or None
    for anything else.  ``parent`` is the node the walk reached it from."""
    t = type(parent)
    if type(node.ctx) is not ast.Load:
        if t is ast.Assign and len(parent.targets) == 1 and parent.targets[0] is node \
                or t is ast.AnnAssign and parent.target is node:
            return "read" if _empty_list(parent.value) else None
        return None
    if t in _LOOPS and parent.iter is node:
        length = unpacked_length(parent.target)
        return None if length is None else ("unpack", length)
    if t is ast.Call and type(parent.func) is ast.Name and parent.func.id == "len" and parent.args == [node]:
        return "read"
    if t in (ast.If, ast.While, ast.IfExp) and parent.test is node \
            or t is ast.UnaryOp and type(parent.op) is ast.Not:
        return "read"
    return None


def _empty_list(value) -> bool:
    if type(value) is ast.List:
        return not value.elts
    return type(value) is ast.Call and type(value.func) is ast.Name and value.func.id == "list" \
        and not value.args and not value.keywords


# -- local tuples saved and unpacked ------------------------------------------------------------


def _display(value):
    """``value`` if it is a tuple written out with no ``*`` element, else None."""
    if type(value) is not ast.Tuple or any(type(e) is ast.Starred for e in value.elts):
        return None
    return value


def write_bound_positions(evaluator, s, flow, implicit: frozenset, unknown: bool = False) -> None:
    """``name = (a, b)`` (``s``) of a local tuple :func:`tuple_locals`
    accepts: each position holds its element with ``implicit`` (nothing where
    ``unknown``: a binding the transfer reads as holding nothing that differs).
    Asked only where the function unpacks some name (``tuple_unpacked``)."""
    if type(s) is not ast.Assign or len(s.targets) != 1 or type(s.targets[0]) is not ast.Name:
        return
    name = s.targets[0].id
    value = _display(s.value)
    if name not in evaluator.info.tuple_unpacked or value is None or name not in tuple_locals(evaluator.info):
        return
    for position, element in enumerate(value.elts):
        atoms = EMPTY if unknown else evaluator.eval(element, flow.env) | implicit
        flow.write((LOCAL_POSITION, name, position), atoms)


def unpacked_positions(info, target, value, env: dict):
    """What each element of ``target`` takes in ``target = value`` where
    ``value`` names a local tuple :func:`tuple_locals` accepts, unpacked into
    as many targets: the atoms its bindings wrote at each position (without
    the unpacking's own implicit flow); else None.  ``value`` is a name."""
    if value.id not in info.tuple_unpacked:
        return None
    length = unpacked_length(target)
    if length is None or tuple_locals(info).get(value.id) != length:
        return None
    return [env.get((LOCAL_POSITION, value.id, position), EMPTY) for position in range(length)]


def tuple_locals(info) -> dict:
    """name -> the length of its tuple, for the local tuples of the
    function of ``info`` that keep their positions apart (see the module
    text).  Computed once,
    and only for a function that unpacks a name in an assignment
    (``FunctionInfo.tuple_unpacked``, from its one walk)."""
    found = info.__dict__.get("_tuple_locals")
    if found is None:
        candidates = info.tuple_unpacked
        func = info.func
        if not candidates or isinstance(func, ast.Module):
            found = {}
        else:
            found = _accepted_locals(func, candidates)  # (plain_bindings leaves every parameter out)
        info.__dict__["_tuple_locals"] = found
    return found


def _accepted_locals(func, candidates: frozenset) -> dict:
    """:func:`tuple_locals` of ``func``: its one binding read by
    :func:`astwalk.plain_bindings` (a plain ``name = (a, b, ...)``), each
    other mention by one walk of the body, and where each unpacking stands
    (:func:`_statements_after`)."""
    receiver = first_positional_param(func)
    bindings = {name: statements[0] for name, statements in plain_bindings(func, _display).items()
                if name in candidates and len(statements) == 1
                and all(_kept_whole(element, receiver) for element in statements[0].value.elts)}
    if not bindings:
        return {}
    unpacks: dict = {}  # name -> the Name nodes an assignment unpacks into that many targets
    spoilt = set()
    stack = [(node, func, False) for node in func.body]
    while stack:
        node, parent, nested = stack.pop()
        t = type(node)
        if t is ast.Name:
            name = node.id
            if name in bindings and type(node.ctx) is ast.Load:
                if nested or _unpacked_by(node, parent) != len(bindings[name].value.elts):
                    spoilt.add(name)
                else:
                    unpacks.setdefault(name, []).append(node)
            continue
        if t is ast.MatchAs or t is ast.MatchStar:
            spoilt.add(node.name)  # (a pattern binds a name with no Name node)
        elif t is ast.MatchMapping:
            spoilt.add(node.rest)
        inner = nested or t in DEFINITIONS or t in COMPREHENSIONS
        read = CHILDREN[t]
        if read is not None:
            stack.extend((child, node, inner) for child in read(node))
    found = {}
    for name in sorted(unpacks.keys() - spoilt):
        binding = bindings[name]
        after = {id(inner) for statement in _statements_after(func, binding) for inner in walk(statement)}
        if all(id(node) in after for node in unpacks[name]):
            found[name] = len(binding.value.elts)
    return found


def _kept_whole(element, receiver) -> bool:
    """Whether a tuple element is a value the tuple keeps as it was at the
    save: a constant, or a field of the method's own object read whole
    (``self.size``), whose later writes (a field store, a mutation through
    the field) the analysis reads on the field itself.  Any other element
    (a local, ``box.v``, ``keep[0]``) may be an object changed after the save
    through an alias or a helper, which the unpacking's position would not
    see: such a tuple keeps its positions together."""
    t = type(element)
    if t is ast.Constant:
        return True
    return (t is ast.Attribute and receiver is not None and type(element.value) is ast.Name
            and element.value.id == receiver)


def _statements_after(func, statement) -> list:
    """The statements after ``statement`` in its own statement list: what
    runs there runs only past it, under the tests and in the ``try`` that it
    ran under, each time after it ran."""
    for statements in statement_lists(func.body):
        for index, other in enumerate(statements):
            if other is statement:
                return statements[index + 1:]
    return []



def _unpacked_by(node: ast.Name, parent):
    """How many targets the assignment ``parent`` unpacks ``node`` into where
    ``node`` is its whole value (``a, b = name``, no ``*``), else None."""
    if type(parent) is not ast.Assign or len(parent.targets) != 1 or parent.value is not node:
        return None
    return unpacked_length(parent.targets[0])
