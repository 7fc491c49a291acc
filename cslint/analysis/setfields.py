"""Fields a method sets and then reads itself.

``self.overflow = False`` followed by ``if not self.overflow:`` reads the
value just written, not every value any method of the class ever wrote
(a checkpoint's flag loaded on another path).  The CFG dataflow keeps, for
each field a function assigns as ``self.attr = value``, what the field holds
at each node under the key :func:`field_key`: on entry, and wherever the
field may have changed behind the function's back, that is the field read
from the whole-tree tables (:func:`~cslint.analysis.atoms.field_read`, what
every write of the class family makes it); after the assignment, the value
assigned (with the implicit flow of the tests around it).

An object's fields change through its own methods: a call of one,
``self.check()`` or ``super().check()``, adds what that method may write to
the field, with the tests that decide whether this rank calls it
(:func:`~cslint.analysis.selfcalls.by_method`: what the methods of that name
in the class family write, and those they call on ``self`` in turn, under
the conditions they call them; :class:`~cslint.analysis.selfcalls.MethodWrites`),
so ``self.overflow = False; self.check_overflow()`` holds False or what the
check wrote, agreed where it all-reduced it.  A node that calls one reads
that from its start (even a read before its call: ``if self.check() and
self.flag:``).  Where ``self`` itself is handed to other code (an argument:
``helper(self)``, ``setattr(self, ...)``), or the function waits (``await``,
``yield``: other code runs meanwhile) or makes a ``lambda``, or an attribute
of that name is stored into otherwise than by the plain assignment
(``other.attr = v``, which may be ``self``; ``self.attr[k] = v`` or
``self.attr += v``, which change what it holds in place), anything may have
been written: the table's field comes back from the start of that node.
A private method that the methods of its class reaching a collective call
as ``self._m()``, all of them assigning a field it reads, starts from what
they hold at their calls (:func:`handed_fields`, ``Site.handed``) where every
call of the tree hands it; a summarised one too, where none of its
statements may change the field but its calls on ``self``
(:func:`summary_entry`).  A
call of another object's method or of a library is taken not to reach back
into this object (a back reference through which another object writes
this one's fields, ``self.helper.update()`` writing ``owner.flag``, is not
followed), nor a property read to write a field.  A container written to
the field (a display, a comprehension, ``list()``) puts the table's field
back too: the whole-tree pass keeps its own structure apart from its
elements (``atoms.own_field``) and this key would not.  Another thread
writing the field between two statements is not modelled, as in the rest
of the value model.
"""

from __future__ import annotations

import ast
from typing import Optional

from .astwalk import holds_kind, own_nodes, walk as fast_walk, walked
from .atoms import field_name, field_read, own_field
from .bindings import TARGET_STATEMENTS, statement_targets
from .callrefs import first_positional_param
from .selfcalls import CALLED_IN, KEPT, by_method, handed_read, split_by_method
from .vocabulary import CONTAINER_FACTORIES

_MAY_RUN_CODE = (ast.Call, ast.Await, ast.Yield, ast.YieldFrom, ast.NamedExpr, ast.Subscript, ast.BinOp)
_CONTAINERS = (ast.List, ast.Dict, ast.Set, ast.Tuple, ast.ListComp, ast.DictComp, ast.SetComp)


def field_key(attr: str) -> tuple:
    """The dataflow's key for what ``self.attr`` holds here (no variable
    name: ``self.`` is in it, so no name-keyed refinement reaches it)."""
    return ("field", "self." + attr)


def assigned_field(s: ast.stmt, self_name: Optional[str]) -> Optional[str]:
    """``attr`` when ``s`` is ``self.attr = value`` (one target, or an
    annotated assignment with a value)."""
    if type(s) is ast.Assign and len(s.targets) == 1:
        target = s.targets[0]
    elif type(s) is ast.AnnAssign and s.value is not None:
        target = s.target
    else:
        return None
    if type(target) is ast.Attribute and type(target.value) is ast.Name and target.value.id == self_name:
        return target.attr
    return None


def entry_fields(class_key: Optional[str], attrs: frozenset) -> dict:
    """What each of ``attrs`` holds on entry: the whole-tree table's field."""
    return {field_key(attr): frozenset({field_read(class_key, attr)}) for attr in attrs}


#: what a node does to the fields: nothing, or anything (the table's fields back)
UNCHANGED, ANYTHING = (), None
_UNKNOWN = object()


def node_effect(s: ast.AST, exprs: list, calls: list, attrs: frozenset, self_name: str):
    """What the node of statement ``s`` evaluating ``exprs`` (with ``calls``,
    the function's :class:`~cslint.analysis.function.CallInfo` of them) may do
    to the fields of ``attrs`` besides a plain assignment: :data:`ANYTHING`,
    or the names of the methods of ``self`` it calls (:data:`UNCHANGED`: none;
    see the module's docstring)."""
    for expr in exprs:
        for node in walked(expr):  # (as a list: no generator resumed per node)
            t = type(node)
            if t is ast.Await or t is ast.Yield or t is ast.YieldFrom or t is ast.Lambda:
                return ANYTHING
    if type(s) in TARGET_STATEMENTS:
        plain = assigned_field(s, self_name)
        for target in statement_targets(s):
            for node in fast_walk(target):
                if type(node) is ast.Attribute and node.attr in attrs and not (node is target and plain is not None):
                    return ANYTHING
    methods = []
    for info in calls:
        call = info.call
        if _hands_self(call, self_name):
            return ANYTHING
        method = self_method(call.func, self_name)
        if method is not None:
            methods.append(method)
    return tuple(methods)


def handed_fields(ctx, class_key: Optional[str]) -> dict:
    """method name -> the fields its callers hand it, of the private methods
    of ``class_key`` (a class of the module's own body; ``_name``, not
    decorated) that the class names only in calls ``self._name(...)`` made in
    its own methods: the fields it reads as ``self.attr`` that every one of
    those callers assigns as ``self.attr = value`` somewhere in its body.
    What such a field holds on entry is what its callers hold at their calls
    (``Site.handed``), where every call of the tree hands it
    (:meth:`~cslint.analysis.selfcalls.MethodWrites.hands_every_call`); a
    private method handed out as a callable from outside its class is not
    looked for.  Computed once per class."""
    if not class_key:
        return {}
    memo = ctx.__dict__.setdefault("_handed_fields", {})
    found = memo.get(class_key)
    if found is None:
        name = class_key.split(":", 1)[-1]
        # only a function reaching a collective hands anything (deep.py): a class with none of
        # those among its methods has no method every call of which is handed its fields
        prefix = name + "."
        deep = {qual[len(prefix):] for qual in ctx.issuing_functions
                if qual.startswith(prefix) and "." not in qual[len(prefix):]}
        cls = next((n for n in ctx.tree.body if type(n) is ast.ClassDef and n.name == name), None) if deep else None
        found = memo[class_key] = _handed_fields(cls, deep) if cls is not None else {}
    return found


def private_method(name: str) -> bool:
    """``_name``: a method its class means to call itself (not a dunder)."""
    return name[:1] == "_" and name[-2:] != "__"


def _handed_fields(cls: ast.ClassDef, deep: set) -> dict:
    """:func:`handed_fields` of ``cls``, read from its methods that reach a
    collective (``deep``: the only callers that hand anything) and the private
    methods they call on ``self``."""
    methods = {m.name: m for m in cls.body
               if type(m) in (ast.FunctionDef, ast.AsyncFunctionDef) and first_positional_param(m) is not None}
    callers: dict = {}  # method name -> the methods of the class calling it on self
    named: set = set()  # the methods the walked ones name otherwise than in such a call
    assigned: dict = {}  # method name -> the fields it assigns
    reads: dict = {}  # method name -> the fields it reads
    walked_methods = [name for name in methods if name in deep]
    for method_name in walked_methods:
        method = methods[method_name]
        owner = first_positional_param(method)
        mine, read, called = set(), set(), set()
        for sub in walked(method):  # (every node: one list, no generator resumed per node)
            t = type(sub)
            if t is ast.Call and type(sub.func) is ast.Attribute and type(sub.func.value) is ast.Name \
                    and sub.func.value.id == owner:
                if method_name in deep and sub.func.attr in methods and sub.func.attr not in reads \
                        and sub.func.attr not in walked_methods and private_method(sub.func.attr):
                    walked_methods.append(sub.func.attr)  # a callee: what it reads, what it names
                callers.setdefault(sub.func.attr, set()).add(method_name)
                called.add(id(sub.func))
            elif t is ast.Attribute:
                if type(sub.value) is ast.Name and sub.value.id == owner and type(sub.ctx) is ast.Load:
                    read.add(sub.attr)
                if sub.attr in methods and id(sub) not in called:
                    named.add(sub.attr)
            elif t is ast.Assign or t is ast.AnnAssign:
                attr = assigned_field(sub, owner)
                if attr is not None:
                    mine.add(attr)
        assigned[method_name] = mine
        reads[method_name] = read
    out = {}
    for method_name in walked_methods:
        method = methods[method_name]
        if not private_method(method_name) or method.decorator_list or method_name in named:
            continue
        its_callers = callers.get(method_name, ())
        if not its_callers or not its_callers <= deep:
            continue  # a summarised caller hands nothing: the field's table
        handed = set(reads[method_name])
        for caller in its_callers:
            handed &= assigned[caller]
        if handed:
            out[method_name] = frozenset(handed)
    return out


def summary_entry(evaluator) -> dict:
    """What the fields a summarised method is handed (:func:`handed_fields`)
    hold, for the summary walk, which keeps no field apart: of those no
    statement of it may change but through its calls on ``self`` (none
    stored into in any way, no method called on it, ``self`` not handed on,
    no ``await``, ``yield`` or ``lambda``), what the callers hand it or what
    one of those calls may write, wherever the method reads it.  The
    evaluator reads them from the walk's keys (``Evaluator.set_fields``)."""
    info = evaluator.info
    if not info.class_key or not info.self_name:
        return {}
    method = info.qualname.rsplit(".", 1)[-1]
    kept = set(handed_fields(info.ctx, info.class_key).get(method, ())) if private_method(method) else None
    if not kept:
        return {}
    self_name = info.self_name
    callees = set()
    parents = {}
    for node in own_nodes(info.func):
        t = type(node)
        if t is ast.Await or t is ast.Yield or t is ast.YieldFrom or t is ast.Lambda:
            return {}
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node
        if t is ast.Call:
            if _hands_self(node, self_name):
                return {}
            called = self_method(node.func, self_name)
            if called is not None:
                callees.add(called)
    for node in own_nodes(info.func):
        if type(node) is ast.Attribute and node.attr in kept and type(node.value) is ast.Name \
                and node.value.id == self_name:
            parent = parents.get(id(node))
            if type(node.ctx) is not ast.Load or type(parent) is ast.Attribute or type(parent) is ast.Subscript:
                kept.discard(node.attr)  # stored, or something read or changed through it
    if not kept:
        return {}
    evaluator.set_fields = frozenset(kept)
    class_key, reader = info.class_key, CALLED_IN + method
    return {field_key(attr): frozenset({field_read(class_key, handed_read(attr, method))} | {
        field_read(class_key, by_method(attr, callee + reader)) for callee in callees}) for attr in kept}


def fields_set_first(info) -> tuple:
    """The fields a method assigns as ``self.attr = value`` in the statements
    that start its body, before anything that may call, fail or leave (a
    value that calls nothing; its docstring aside): every call of it sets
    them (:data:`~cslint.analysis.selfcalls.KEPT`)."""
    if not info.class_key or not info.self_name or not isinstance(info.func.body, list):
        return ()
    return _set_first(info.func.body, info.self_name)


def _set_first(body: list, self_name: str) -> tuple:
    out = []
    for s in body:
        if type(s) is ast.Expr and type(s.value) is ast.Constant:
            continue
        attr = assigned_field(s, self_name)
        if attr is None or holds_kind(s.value, _MAY_RUN_CODE):
            break
        out.append(attr)
    return tuple(out)


def called_first(s: ast.AST, self_name: str) -> Optional[str]:
    """``k`` where statement ``s`` is a call of ``self.k`` (or ``super().k``)
    made whenever it runs: the whole statement, or the value it assigns."""
    value = s.value if type(s) is ast.Expr or type(s) is ast.Assign else None
    return self_method(value.func, self_name) if type(value) is ast.Call else None


def _unless(atom, class_key: Optional[str], attr: str, method: str, set_first: dict):
    """``atom`` held in ``self.attr`` before a call of ``method`` that is made
    whenever the node runs: a read of the field's table or of what a method
    wrote to it is kept only where ``method`` may not set the field first
    (:data:`~cslint.analysis.selfcalls.KEPT`); what the function assigned
    itself, as it is.  One such call is named, the latest, unless the one
    named already sets the field first in its own definition here
    (``set_first``: :func:`methods_set_first`) and the latest does not:
    ``self._reset(); self._log(t)`` keeps naming ``_reset`` (naming fewer
    keeps more: a superset of what the field held, bounded where calls
    repeat in a loop)."""
    if atom.tag != "F" or atom.class_key != class_key or field_name(atom.attr) != attr:
        return atom
    written = split_by_method(atom.attr)
    earlier, _, named = (written[1] if written is not None else "").partition(KEPT)
    if named and attr in set_first.get(named, ()) and attr not in set_first.get(method, ()):
        return atom
    return field_read(class_key, by_method(attr, earlier + KEPT + method))


def methods_set_first(ctx, class_key: Optional[str]) -> dict:
    """method name -> the fields the method of that name of ``class_key`` (a
    class of the module's own body) sets first (as :func:`fields_set_first`
    reads a function); computed once per class."""
    if not class_key:
        return {}
    memo = ctx.__dict__.setdefault("_methods_set_first", {})
    found = memo.get(class_key)
    if found is None:
        found = memo[class_key] = {}
        name = class_key.split(":", 1)[-1]
        cls = next((n for n in ctx.tree.body if type(n) is ast.ClassDef and n.name == name), None)
        for method in cls.body if cls is not None else ():
            owner = first_positional_param(method) if type(method) in (ast.FunctionDef, ast.AsyncFunctionDef) else None
            if owner is not None:
                found[method.name] = _set_first(method.body, owner)
    return found


def self_method(func, self_name: str) -> Optional[str]:
    """``k`` where a call's ``func`` is ``self.k`` or ``super().k``."""
    if type(func) is not ast.Attribute:
        return None
    receiver = func.value
    if type(receiver) is ast.Name and receiver.id == self_name:
        return func.attr
    if type(receiver) is ast.Call and type(receiver.func) is ast.Name and receiver.func.id == "super":
        return func.attr
    return None


def _hands_self(call: ast.Call, self_name: str) -> bool:
    """Whether ``call`` is handed ``self`` itself (``helper(self)``, ``setattr(self, ...)``)."""
    for arg in call.args:
        value = arg.value if type(arg) is ast.Starred else arg
        if type(value) is ast.Name and value.id == self_name:
            return True
    return any(type(kw.value) is ast.Name and kw.value.id == self_name for kw in call.keywords)


def own_of_set_field(value: frozenset, class_key: Optional[str], attr: str) -> frozenset:
    """The own structure of what ``self.attr`` holds where the function set it
    (``value``, under :func:`field_key`): the table's own structure for the
    table's field and for what a method wrote to it, and what the function
    assigned itself as it is (never a container: that puts the table's field back)."""
    out = set()
    for atom in value:
        if atom.tag == "F" and atom.class_key == class_key and field_name(atom.attr) == attr:
            written = split_by_method(atom.attr)
            own = own_field(attr)
            atom = field_read(class_key, own if written is None else by_method(own, written[1]))
        out.add(atom)
    return frozenset(out)


def builds_container(value) -> bool:
    """Whether ``value`` makes a container (its own structure is kept apart
    by the whole-tree pass, not by :func:`field_key`)."""
    if isinstance(value, _CONTAINERS):
        return True
    if type(value) is ast.Call:
        func = value.func
        name = func.id if type(func) is ast.Name else func.attr if type(func) is ast.Attribute else None
        return name in CONTAINER_FACTORIES
    return False


class SetFields:
    """One function's fields it assigns as ``self.attr = value`` and what its CFG
    nodes may do to them otherwise (:func:`node_effect`), for the dataflow:
    what each holds on entry, at a node that may change it, and after its
    plain assignment."""

    __slots__ = ("info", "handed", "attrs", "_effects", "_kept")

    def __init__(self, info, graph, evaluator):
        self.info = info
        found = set()
        self_name = info.self_name if info.class_key else None
        if self_name:
            for node in graph.nodes:  # (the CFG's statements: not those of a nested definition)
                s = node.stmt
                if type(s) is ast.Assign or type(s) is ast.AnnAssign:
                    attr = assigned_field(s, self_name)
                    if attr is not None:
                        found.add(attr)
        #: the fields its callers hand it (handed_fields): on entry, what they held at their calls
        method = info.qualname.rsplit(".", 1)[-1]
        self.handed = handed_fields(info.ctx, info.class_key).get(method, frozenset()) \
            if self_name and private_method(method) else frozenset()
        #: the fields it assigns as ``self.attr = value`` or is handed, which its evaluator reads from the dataflow's keys
        self.attrs = evaluator.set_fields = frozenset(found) | self.handed
        self._effects: dict = {}  # node -> what it may do to the fields (_effect)
        self._kept: dict = {}  # (what a field held, its name, the method called) -> what it holds after (_unless)

    def entry(self) -> dict:
        """What each field holds on entry: the table's field, or what the
        callers hand it (:func:`handed_fields`)."""
        fields = entry_fields(self.info.class_key, self.attrs)
        if self.handed:
            method = self.info.qualname.rsplit(".", 1)[-1]
            for attr in self.handed:
                fields[field_key(attr)] = frozenset({field_read(self.info.class_key, handed_read(attr, method))})
        return fields

    def handed_at(self, method: str, env: dict) -> tuple:
        """``Site.handed`` of a call of ``self.method()`` with ``env``: what
        each field that method is handed holds here, where this function
        keeps it apart (else nothing: the callee reads the field's table)."""
        wanted = handed_fields(self.info.ctx, self.info.class_key).get(method) \
            if self.info.self_name and private_method(method) else None
        if not wanted:
            return ()
        return tuple((attr, env[field_key(attr)]) for attr in sorted(wanted)
                     if attr in self.attrs and field_key(attr) in env)

    def _effect(self, node):
        """What ``node`` may do to the fields: :data:`UNCHANGED`, :data:`ANYTHING`,
        or ``(first, added)``: the method it calls whenever it runs (None: none),
        and for each field, its key and what the methods it calls may write
        (read with the conditions of this call, by the whole-tree pass)."""
        info = self.info
        if node.stmt is None:
            return UNCHANGED
        node_info = info.node_info(node)
        methods = node_effect(node.stmt, node_info.exprs, node_info.calls, self.attrs, info.self_name)
        if methods is ANYTHING or methods == UNCHANGED:
            return methods
        reader = CALLED_IN + info.qualname.rsplit(".", 1)[-1]  # its call's conditions: selfcalls.py
        class_key = info.class_key
        added = tuple((attr, field_key(attr), frozenset(
            field_read(class_key, by_method(attr, method + reader)) for method in methods)) for attr in self.attrs)
        return called_first(node.stmt, info.self_name), added

    def at_node(self, n: int, node, env: dict, fork) -> dict:
        """``env`` on entry to node ``n``: with the table's fields back where the
        node may change them anyhow, and what the methods of ``self`` it calls
        may write added (with the conditions of this call, which the
        whole-tree pass reads where a method may write the field: only the
        ranks that call one write).  A call made whenever the node runs keeps
        what the field held only where that method may not set it first."""
        effect = self._effects.get(n, _UNKNOWN)
        if effect is _UNKNOWN:
            effect = self._effects[n] = self._effect(node)
        if effect == UNCHANGED:
            return env
        if effect is ANYTHING:
            table = entry_fields(self.info.class_key, self.attrs)
        else:
            first, added = effect
            table = {}
            for attr, key, atoms in added:
                held = env.get(key, frozenset())
                if first is not None:
                    memo = (held, attr, first)
                    kept = self._kept.get(memo)
                    if kept is None:
                        class_key = self.info.class_key
                        set_first = methods_set_first(self.info.ctx, class_key)
                        kept = self._kept[memo] = frozenset(_unless(atom, class_key, attr, first, set_first)
                                                            for atom in held)
                    held = kept
                table[key] = held | atoms
        if all(env.get(key) == atoms for key, atoms in table.items()):
            return env
        out = fork(env)
        out.update(table)
        return out

    def bind(self, s: ast.stmt, flow, evaluate) -> None:
        """``self.attr = value``: the field holds the value (and the implicit flow) from here."""
        attr = assigned_field(s, self.info.self_name)
        if attr is None or attr not in self.attrs:
            return
        key = field_key(attr)
        if builds_container(s.value):
            flow.write(key, frozenset({field_read(self.info.class_key, attr)}))
        elif flow.single_rank:
            flow.write(key, frozenset())
        else:
            flow.write(key, evaluate(s.value, flow.env) | flow.implicit)
