"""The group an object's own process group is where a test of the object's
name says which group it is (:func:`name_tested_group`).

A framework's group coordinator is made under a group's name and keeps it
with its process groups: vLLM's ``GroupCoordinator(group_name="tp")`` is
called ``"tp:0"`` (``_get_unique_name``), and the device communicator it
builds gets that name beside the coordinator's own ``cpu_group`` and
``device_group`` (``Preset.group_names``: the name, the separator ending the
group's name in it, the fields it names).  Where such an object builds
something over its own group only on a path that the name's part before the
separator is a group's name (``if unique_name.split(":")[0] != "tp":
use_custom = False`` ... ``if use_custom: Impl(group=self.cpu_group)``), the
group it passes is that group -- the TP group, on whose members a pipeline
stage is the same.

A path holds the name's part where every ``if`` around the call says so: a
test of the part itself (``name.split(sep)[0] == "tp"``, ``!=`` in the
``else``, ``name.partition(sep)[0]``, ``name.startswith("tp" + sep)``), a
conjunct of an ``and`` taken, or a local flag tested true every binding of
which is a falsy constant or lies where the part holds (a plain
``flag = value``: no loop target, no other kind of binding, no parameter).
A name the function rebinds, another test, an early exit, a group's name
its text does not name exactly (``"inner_dp_world"``) say nothing."""

from __future__ import annotations

import ast
from typing import Optional

from ..presets import group_from_text
from .astwalk import own_nodes, plain_bindings
from .syntax import dotted

#: the flags of a function whose every binding is a plain assignment (``plain_bindings``), worked out once
_FLAGS = "_name_test_flags"


def name_tested_group(info, call: ast.Call, text: str) -> Optional[str]:
    """The group ``text`` -- an own process group of the object (``self.cpu_group``) or the
    constructor parameter that hands it (``cpu_group``) -- is at ``call``, where every path to the
    call passes a test that the object's name is that group's; else None."""
    for identity, separator, fields in info.ctx.knowledge.group_names:
        head, dot, field = text.partition(".")
        if (field if dot else text) not in fields or dot and (head != info.self_name or "." in field):
            continue
        # the object's own name (``self.unique_name``); in a constructor handed both, the parameter
        # beside the field's (``cpu_group, ..., unique_name``: what the coordinator passes together)
        names = ((identity,) if identity in info.params and (field if dot else text) in info.params else ()) \
            + ((f"{info.self_name}.{identity}",) if dot else ())
        statement = _statement_of(info, call) if names else None
        if statement is None:
            continue
        held = _names_held(info, statement, names, separator, 0)
        if len(held) != 1:
            continue
        group = next(iter(held))
        if group_from_text(group) == group and not _rebinds(info, names, field if dot else None):
            return group
    return None


def _rebinds(info, names: tuple, field: Optional[str]) -> bool:
    """Whether the function rebinds one of the texts the object's name is read by, or sets
    ``self.<field>`` otherwise than from its parameter of that name (which the caller hands
    beside the name: ``self.cpu_group = cpu_group``)."""
    own = f"{info.self_name}.{field}" if field else None
    stores = plain = 0
    for node in own_nodes(info.func):
        kind = type(node)
        if (kind is ast.Name or kind is ast.Attribute) and type(node.ctx) is not ast.Load:
            text = dotted(node)
            if text in names:
                return True
            stores += text == own
        elif kind is ast.Assign and own is not None and type(node.value) is ast.Name and node.value.id == field \
                and field in info.params:
            plain += sum(dotted(target) == own for target in node.targets)
    return stores != plain


def _statement_of(info, call: ast.Call):
    """The innermost statement holding ``call`` (``FunctionInfo.calls_by_statement``): its id."""
    for key, calls in info.calls_by_statement.items():
        for found in calls:
            if found is call:
                return key
    return None


def _names_held(info, statement_id: int, names: tuple, separator: str, depth: int) -> frozenset:
    """The group names every path to the statement holds the object's name to be
    (from each ``if`` around it: the arm it lies in)."""
    held: set = set()
    parents, blocks = info.parents, info.blocks
    key = statement_id
    while True:
        parent = parents.get(key)
        if parent is None:
            return frozenset(held)
        if type(parent) is ast.If:
            block = blocks.get(key)
            taken = block is parent.body
            if taken or block is parent.orelse:
                held |= _implied(info, parent.test, taken, names, separator, depth)
        key = id(parent)


def _implied(info, test: ast.AST, taken: bool, names: tuple, separator: str, depth: int) -> frozenset:
    """The group names ``test`` evaluating to ``taken`` says the object's name has."""
    kind = type(test)
    if kind is ast.UnaryOp and type(test.op) is ast.Not:
        return _implied(info, test.operand, not taken, names, separator, depth)
    if kind is ast.BoolOp and (type(test.op) is ast.And) == taken:  # every operand took ``taken``
        found: set = set()
        for operand in test.values:
            found |= _implied(info, operand, taken, names, separator, depth)
        return frozenset(found)
    if kind is ast.Compare and len(test.ops) == 1 and type(test.ops[0]) in (ast.Eq, ast.NotEq):
        constant = test.comparators[0]
        equal = (type(test.ops[0]) is ast.Eq) == taken
        if equal and type(constant) is ast.Constant and type(constant.value) is str \
                and _is_name_part(test.left, names, separator):
            return frozenset({constant.value})
        return frozenset()
    if kind is ast.Call and taken and type(test.func) is ast.Attribute and test.func.attr == "startswith" \
            and dotted(test.func.value) in names and len(test.args) == 1 and not test.keywords:
        prefix = test.args[0]
        if type(prefix) is ast.Constant and type(prefix.value) is str and prefix.value.endswith(separator) \
                and prefix.value.count(separator) == 1:
            return frozenset({prefix.value[:-len(separator)]})
        return frozenset()
    if kind is ast.Name and taken and depth == 0:
        return _flag_implies(info, test.id, names, separator)
    return frozenset()


def _is_name_part(node: ast.AST, names: tuple, separator: str) -> bool:
    """Whether ``node`` is the name's part before the separator: ``name.split(sep)[0]``,
    ``name.split(sep, 1)[0]``, ``name.partition(sep)[0]``."""
    if type(node) is not ast.Subscript or type(node.slice) is not ast.Constant or node.slice.value != 0:
        return False
    call = node.value
    if type(call) is not ast.Call or type(call.func) is not ast.Attribute or call.keywords \
            or call.func.attr not in ("split", "partition") or dotted(call.func.value) not in names:
        return False
    args = call.args
    return bool(args) and type(args[0]) is ast.Constant and args[0].value == separator \
        and (len(args) == 1 or call.func.attr == "split" and len(args) == 2)


def _flag_implies(info, name: str, names: tuple, separator: str) -> frozenset:
    """The group names a local flag tested true says the object's name has: where every binding of
    it that may be true lies on a path that says one name."""
    flags = info.__dict__.get(_FLAGS)
    if flags is None:
        flags = info.__dict__[_FLAGS] = plain_bindings(info.func, lambda value: True)
    statements = flags.get(name)
    if not statements:
        return frozenset()
    found = None
    for statement in statements:
        value = statement.value
        if type(value) is ast.Constant and not value.value:
            continue  # (``flag = False``: not the binding a true test read)
        held = _names_held(info, id(statement), names, separator, 1)
        if len(held) != 1 or found is not None and held != found:
            return frozenset()
        found = held
    return found or frozenset()
