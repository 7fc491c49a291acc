"""Code that one rank of a group runs alone (issue 14, complementary-role-arms).

A server often hands the outside world to one rank: that rank alone makes
the queue a background thread fills, and its event loop, entered only where
the queue exists, announces each message it takes to the other ranks, whose
own loop waits on the announcement::

    def start(self):
        if self.rank != 0:
            return
        self._ready = queue.Queue()          # rank 0 alone makes the queue

    def serve(self):
        if self._ready is not None:
            self._root_loop()                # so rank 0 alone runs this
            return
        self._receiver_loop()                # every other rank runs this

    def _root_loop(self):
        while True:
            kind, job = self._ready.get()
            if kind == "work":
                self._announce(("work",))    # each arm opens with the same
                self._share(job)             # broadcast, whose payload tells
            else:                            # the receivers which arm follows
                self._announce(("idle",))

Which arm runs depends on what that rank alone received, but no other rank
of the group runs these arms: they take their part of each collective in
the receivers' loop.  This module reads, per function, the two facts the
whole-tree pass joins (:func:`~cslint.analysis.processes.runs_only_on_root`):

- :func:`rooted_writes`: the non-None values a method stores into a field of
  ``self`` and the tests ``<name> == K`` (an int constant) under which each
  store runs: in the arm where the test holds, or past an ``if`` whose arm
  where it fails always leaves the function (``if self.rank != 0:
  return``).  Whether ``<name>`` is this rank's id is the whole-tree pass's
  question;
- :func:`present_calls`: the methods a function calls, as a statement of
  their own, only where a field of ``self`` is present (``if self._ready is
  not None:``, or a local name bound once to such a test), and nowhere else
  in its body.

A field every non-None store of which runs only where this rank is ``K``
is there on that rank alone, so a method called only where it is there
runs on that rank alone (:attr:`Program.root_only`).
"""

from __future__ import annotations

import ast
from typing import Optional

from .astwalk import BLOCKS_OF, plain_bindings
from .bindings import flatten_targets, pairwise
from .callrefs import first_positional_param
from .exits import leaves_function
from .function import FunctionInfo
from .grouptests import int_equality
from .presence import is_none_literal, presence_test
from .sidebindings import called_only_there, handed_methods
from .syntax import plain_dotted


def rooted_writes(info: FunctionInfo) -> tuple:
    """``((attr, line, tests), ...)`` for each ``self.attr = value`` of a
    method whose value is not None itself and that runs only where tests
    ``text == K`` hold, ``tests`` their ``(text, K)``, sorted (a store
    missing here runs under no such test); () for a function that is no
    method."""
    self_name = info.self_name
    if not self_name or not info.class_key or info.self_assignments == []:
        return ()  # (the call scan met no assignment to a field of ``self``)
    out: list = []
    _scan_writes(self_name, info.body, (), out)
    return tuple(sorted(out))


def derived_stores(info: FunctionInfo) -> tuple:
    """The fields of ``self`` a method stores a value into that is neither a
    plain dotted name nor a call of one handed plain names and constants
    alone (``self.rank = rank // tp``, ``self.rank = a if b else c``),
    sorted: a rank's id worked on (a per-node index, a block's number)
    keeps its table's sources but is no rank's id of the group."""
    self_name = info.self_name
    if not self_name or not info.class_key:
        return ()
    out = set()
    for stmt in info.self_assignments:  # (noted by the call scan, which every extracted function has had)
        t = type(stmt)
        if (t is ast.Assign or t is ast.AnnAssign) and stmt.value is not None:
            for target in (stmt.targets if t is ast.Assign else [stmt.target]):
                _note_derived(self_name, target, stmt.value, out)
    return tuple(sorted(out))


def _note_derived(self_name: str, target: ast.expr, value: ast.expr, out: set) -> None:
    """Add to ``out`` the fields of ``self`` that ``target = value`` stores a
    worked-on value into.  A tuple target is read element by element where
    the value is a display of as many elements (``self.rank, self.spare =
    rank // 2, 0``); an element unpacked from any other value
    (``self.rank, _ = divmod(rank, 2)``) is worked on."""
    t = type(target)
    if t is ast.Attribute:
        if type(target.value) is ast.Name and target.value.id == self_name and not _plain_read(value):
            out.add(target.attr)
        return
    if t is not ast.Tuple and t is not ast.List:
        return
    pairs = pairwise([target], value)
    if pairs is not None:
        for element, element_value in pairs:
            _note_derived(self_name, element, element_value, out)
        return
    out.update(leaf.attr for leaf in flatten_targets(target)
               if type(leaf) is ast.Attribute and type(leaf.value) is ast.Name and leaf.value.id == self_name)


def _plain_read(value: ast.expr) -> bool:
    """A plain dotted name, a constant, or a call of a plain dotted name
    handed those alone (``dist.get_rank(group)``)."""
    if type(value) is ast.Call:
        return plain_dotted(value.func) is not None \
            and all(_plain_read(arg) and type(arg) is not ast.Call for arg in value.args) \
            and all(_plain_read(kw.value) and type(kw.value) is not ast.Call for kw in value.keywords)
    return type(value) is ast.Constant or plain_dotted(value) is not None


def _rank_test(test: ast.expr) -> Optional[tuple]:
    """``(text, K, holds_when_true)`` of ``text == K`` / ``text != K``, ``K``
    an int constant and ``text`` a plain dotted name; None for any other test."""
    found = int_equality(test)
    if found is None:
        return None
    text = plain_dotted(found[0])
    return None if text is None else (text, found[1], found[2])


def _scan_writes(self_name: str, stmts: list, held: tuple, out: list) -> None:
    for stmt in stmts:
        t = type(stmt)
        if t in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
            continue
        if t is ast.Assign or t is ast.AnnAssign:
            targets = stmt.targets if t is ast.Assign else [stmt.target]
            if held and stmt.value is not None and not is_none_literal(stmt.value):
                for target in targets:
                    if type(target) is ast.Attribute and type(target.value) is ast.Name \
                            and target.value.id == self_name:
                        out.append((target.attr, stmt.lineno, tuple(sorted(set(held)))))
            continue
        if t is ast.If:
            found = _rank_test(stmt.test)
            if found is not None:
                text, constant, when_true = found
                holding, failing = (stmt.body, stmt.orelse) if when_true else (stmt.orelse, stmt.body)
                _scan_writes(self_name, holding, held + ((text, constant),), out)
                _scan_writes(self_name, failing, held, out)
                if leaves_function(failing):
                    held = held + ((text, constant),)  # past ``if rank != K: return`` only rank K goes on
                continue
        for name in BLOCKS_OF[t]:
            inner = getattr(stmt, name)
            if inner:
                _scan_writes(self_name, inner, held, out)


def present_calls(info: FunctionInfo) -> tuple:
    """``((method, attr), ...)``: the methods of ``self`` the function calls,
    as a statement of their own (or returned), only where
    ``self.attr`` is there (the side of a presence test of it,
    :func:`~cslint.analysis.presence.presence_test`, or of a local name bound
    once to one) and that it names nowhere else, nor its module as a value."""
    self_name = info.self_name
    if not self_name or not info.class_key or not info.self_calls:
        return ()  # (the call scan met no call of a method of ``self``)
    calls: list = []
    _scan_calls(self_name, _Aliases(info.func), info.body, "", calls)
    if calls:
        rooted = _rooted_attrs(info.ctx)  # only those can be there on one rank alone
        calls = [call for call in calls if call[1] in rooted]
    if not calls:
        return ()
    handed = handed_methods(info)  # a method the module hands on as a value may run wherever the value goes
    return tuple(call for call in called_only_there(info, calls) if call[0] not in handed)


def _rooted_attrs(ctx) -> frozenset:
    """The fields of ``self`` some method of a class of the module (at its
    top level) stores a value into
    only where a test ``text == K`` holds (:func:`rooted_writes`'s walk),
    worked out once per module, and only for a module with a call on the
    side of a presence test of a field: a field a module of another class
    of the family stores so is not followed."""
    found = ctx.__dict__.get("_rooted_attrs")
    if found is None:
        out: list = []
        for top in ctx.tree.body:
            if type(top) is ast.ClassDef:
                for node in top.body:
                    owner = first_positional_param(node) if type(node) in (ast.FunctionDef, ast.AsyncFunctionDef) else None
                    if owner is not None:
                        _scan_writes(owner, node.body, (), out)
        found = ctx.__dict__["_rooted_attrs"] = frozenset(attr for attr, _line, _tests in out)
    return found


class _Aliases:
    """The local names bound once to a presence test of a field: the scan
    notes each ``name = <presence test>`` statement it passes (``seen``), and
    only a test reading such a name asks for a walk of the whole function
    (that nothing else binds it)."""

    def __init__(self, func: ast.AST):
        self.func = func
        self.seen: set = set()
        self._found: Optional[dict] = None

    def note(self, stmt: ast.Assign) -> None:
        if len(stmt.targets) == 1 and type(stmt.targets[0]) is ast.Name and _presence_of_field(stmt.value):
            self.seen.add(stmt.targets[0].id)

    def get(self, name: str) -> Optional[ast.expr]:
        if name not in self.seen:
            return None
        if self._found is None:
            self._found = {alias: statements[0].value
                           for alias, statements in plain_bindings(self.func, _presence_of_field).items()
                           if len(statements) == 1}
        return self._found.get(name)


def _presence_of_field(value: ast.expr) -> bool:
    """Whether ``value`` compares an attribute of a name with None
    (``self._ready is not None``): what a local bound to it says."""
    if type(value) is not ast.Compare or type(value.left) is not ast.Attribute:
        return False
    found = presence_test(value)
    return found is not None and found[0].count(".") == 1


def _present_field(self_name: str, aliases: _Aliases, test: ast.expr) -> Optional[tuple]:
    """``(attr, holds_when_present)`` when ``test`` asks whether
    ``self.attr`` is there, itself or through a local name bound to such a
    test (``serving = self._ready is not None``, then ``if serving:``)."""
    negated = False
    while type(test) is ast.UnaryOp and type(test.op) is ast.Not:
        negated, test = not negated, test.operand
    kind = type(test)
    if kind is ast.Name:
        test = aliases.get(test.id)
        if test is None:
            return None
    elif kind is ast.Compare:
        if type(test.left) is not ast.Attribute and type(test.left) is not ast.Call:
            return None
    elif kind is not ast.Attribute:
        return None
    found = presence_test(test)
    if found is None:
        return None
    text, holds = found
    owner, _, attr = text.partition(".")
    if owner != self_name or not attr or "." in attr:
        return None
    return attr, holds != negated


def _scan_calls(self_name: str, aliases: _Aliases, stmts: list, present: str, calls: list) -> None:
    """Append ``(method, attr)`` for each ``self.method(...)`` made as a
    statement of its own (or returned) where ``self.attr`` is there
    (``present``, "" for nowhere known)."""
    for position, stmt in enumerate(stmts):
        t = type(stmt)
        if t in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
            continue
        if t is ast.Assign:
            if type(stmt.value) is ast.Compare:
                aliases.note(stmt)
            continue
        if t is ast.Expr or t is ast.Return:
            value = stmt.value
            if present and type(value) is ast.Call and type(value.func) is ast.Attribute \
                    and type(value.func.value) is ast.Name and value.func.value.id == self_name:
                calls.append((value.func.attr, present))
            continue
        if t is ast.If:
            found = _present_field(self_name, aliases, stmt.test)
            attr, holds = found if found is not None else ("", True)
            holding, failing = (stmt.body, stmt.orelse) if holds else (stmt.orelse, stmt.body)
            _scan_calls(self_name, aliases, holding, present or attr, calls)
            _scan_calls(self_name, aliases, failing, present, calls)
            if attr and not present and leaves_function(failing):
                # past ``if self.attr is None: return`` the field is there
                _scan_calls(self_name, aliases, stmts[position + 1:], attr, calls)
                return
            continue
        for name in BLOCKS_OF[t]:
            inner = getattr(stmt, name)
            if inner:
                _scan_calls(self_name, aliases, inner, present, calls)
