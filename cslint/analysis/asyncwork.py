"""Collectives asked to run asynchronously, ``dist.all_reduce(t, group=g,
async_op=True)``: the call hands back a work handle and returns before the
collective completes, so the buffer it writes in place holds the group's
value only once the handle is waited on (``work.wait()``); read before that
it may still hold this rank's own value.

:class:`AsyncWork` reads a function's such calls whose handle it follows:
one dropped (``dist.all_reduce(t, async_op=True)`` as a statement: nothing
ever waits on it) agrees nothing; one bound to a local name by the one
binding of that name in the function, every other mention of which (nested
definitions included) is the receiver of a ``.wait()`` call of the
function's own body, agrees its buffers at those calls
(:meth:`~cslint.analysis.transfer.Transfer._waited` writes them there), so a
path that reads the buffer without waiting still holds this rank's value.  One
put into a list the function binds once and reads only to append to it
(``handles = [dist.all_reduce(t, async_op=True)]``, ``handles.append(...)``)
is never waited on either, and agrees nothing.  A
handle handed on in any other way (a list waited on or handed on, returned, stored in a
field, read in a nested function, tested), a name bound more than once, a
call a loop of the function runs again, or one handed a name the function
binds more than once (the wait would agree what the name holds then, another
tensor perhaps) is not followed: its buffers stay agreed at the call, as for a blocking
collective (a known gap).  A function of the module agrees its caller's buffer
through an asynchronous collective only at a wait on the handle in its own
straight-line body (:mod:`~cslint.analysis.agreedparams`)."""

from __future__ import annotations

import ast

from .astwalk import own_nodes, walked


def asks_async(call: ast.Call) -> bool:
    """Whether the call passes ``async_op`` a value other than a constant false one."""
    for kw in call.keywords:
        if kw.arg == "async_op":
            value = kw.value
            return not (type(value) is ast.Constant and not value.value)
    return False


class AsyncWork:
    """A function's asynchronous calls whose handle it follows (see the module)."""

    __slots__ = ("deferred", "waited")

    def __init__(self, func: ast.AST):
        #: id of each followed asynchronous call (dropped, or its handle waited on by name)
        self.deferred: set = set()
        #: local name -> the asynchronous calls bound to it, whose buffers its ``.wait()`` agrees
        self.waited: dict = {}
        bound: dict = {}  # name -> the asynchronous calls bound to it
        receivers: dict = {}  # name -> ids of its Name nodes that receive a ``.wait()`` of the own body
        listed: dict = {}  # name -> the asynchronous calls put into the list it holds (a display, ``.append``)
        appenders: dict = {}  # name -> ids of its Name nodes that receive such an ``.append``
        for node in own_nodes(func):
            kind = type(node)
            if kind is ast.Expr:
                value = node.value
                if type(value) is ast.Call and asks_async(value):
                    self.deferred.add(id(value))  # dropped: nothing waits on it
                elif type(value) is ast.Call and type(value.func) is ast.Attribute and value.func.attr == "append" \
                        and type(value.func.value) is ast.Name and len(value.args) == 1 and not value.keywords \
                        and type(value.args[0]) is ast.Call and asks_async(value.args[0]):
                    listed.setdefault(value.func.value.id, []).append(value.args[0])
                    appenders.setdefault(value.func.value.id, set()).add(id(value.func.value))
            elif kind is ast.Assign or kind is ast.AnnAssign:
                value = node.value
                targets = node.targets if kind is ast.Assign else [node.target]
                if type(value) is ast.Call and len(targets) == 1 and type(targets[0]) is ast.Name \
                        and asks_async(value):
                    bound.setdefault(targets[0].id, []).append(value)
                elif (type(value) is ast.List or type(value) is ast.Tuple) and len(targets) == 1 \
                        and type(targets[0]) is ast.Name:
                    listed.setdefault(targets[0].id, []).extend(
                        elt for elt in value.elts if type(elt) is ast.Call and asks_async(elt))
            elif kind is ast.Call:
                func_ = node.func
                if type(func_) is ast.Attribute and func_.attr == "wait" and type(func_.value) is ast.Name:
                    receivers.setdefault(func_.value.id, set()).add(id(func_.value))
        listed = {name: calls for name, calls in listed.items() if calls}
        if listed:
            self._never_read(func, listed, appenders)
        if not bound:
            return
        followed = {name: receivers.get(name, set()) for name in bound}
        stores = dict.fromkeys(bound, 0)
        buffers = {arg.id for calls in bound.values() for call in calls for arg in _named_arguments(call)}
        buffer_stores = dict.fromkeys(buffers, 0)
        looped: set = set()  # ids of the asynchronous calls inside a loop of the function
        for node in walked(func):
            kind = type(node)
            if kind is ast.Name:
                if node.id in buffer_stores and type(node.ctx) is not ast.Load:
                    buffer_stores[node.id] += 1
                if node.id in followed:
                    if type(node.ctx) is not ast.Load:
                        stores[node.id] += 1
                    elif followed[node.id] is not None and id(node) not in followed[node.id]:
                        followed[node.id] = None  # read otherwise: handed on, not followed
            elif kind is ast.Global or kind is ast.Nonlocal:
                for name in node.names:
                    if name in followed:
                        followed[name] = None
            elif kind is ast.For or kind is ast.AsyncFor or kind is ast.While:
                looped.update(id(sub) for sub in walked(node) if type(sub) is ast.Call)
        for name in sorted(bound):
            if followed[name] is None or stores[name] != 1:
                continue  # handed on, or bound more than once (a wait would not tell which call it waits on)
            calls = bound[name]
            # A buffer name bound again, or a call a loop runs again, may hold another tensor where the wait
            # is: the wait would agree what the name holds then, not what the call was handed.  Such calls
            # stay agreed at the call.
            if any(id(call) in looped or any(buffer_stores[arg.id] > 1 for arg in _named_arguments(call))
                   for call in calls):
                continue
            self.deferred.update(id(call) for call in calls)
            self.waited[name] = calls


    def _never_read(self, func: ast.AST, listed: dict, appenders: dict) -> None:
        """The handles put into a list the function binds once and never reads but to append to it: nothing
        waits on them (``handles = [dist.all_reduce(t, async_op=True)]`` and no ``handle.wait()``), so their
        buffers are never agreed, as a dropped handle's.  A list read in any other way (waited on in a loop,
        handed on, returned) is not followed: its calls stay agreed at the call."""
        stores = dict.fromkeys(listed, 0)
        read = set()
        for node in walked(func):
            kind = type(node)
            if kind is ast.Name and node.id in stores:
                if type(node.ctx) is not ast.Load:
                    stores[node.id] += 1
                elif id(node) not in appenders.get(node.id, ()):
                    read.add(node.id)
            elif kind is ast.Global or kind is ast.Nonlocal:
                read.update(name for name in node.names if name in stores)
        for name in sorted(listed):
            if stores[name] == 1 and name not in read:
                self.deferred.update(id(call) for call in listed[name])


def _named_arguments(call: ast.Call) -> list:
    """The plain names a call is handed, by position or keyword (its buffers among them)."""
    values = list(call.args) + [kw.value for kw in call.keywords]
    return [value for value in values if type(value) is ast.Name]


def async_work(info) -> AsyncWork:
    """:class:`AsyncWork` of a function (a ``FunctionInfo``), worked out on first asking."""
    found = info.__dict__.get("_async_work")
    if found is None:
        found = info.__dict__["_async_work"] = AsyncWork(info.func)
    return found
