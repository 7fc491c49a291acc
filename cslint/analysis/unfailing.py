"""Calls that cannot raise where they stand.

An exception sends one rank into a handler, past the collectives its peers
enter, only where something can raise it.  Some calls cannot, whatever the
rank holds:

* a method of a builtin container that does not fail on its arguments
  (``xs.append(item)``, ``table.get(key)``, ``table.pop(key, None)``,
  ``seen.add(key)``, ``pending.put(op)`` on a queue made without a bound):
  the element's value is never looked at, and a key's hash is decided by
  its type, which the code fixes alike on every rank.  The receiver must be
  known to be such a container: a local name every binding of which in the
  function makes one (a display, a comprehension, ``list()``, ``deque()``,
  ``Queue()`` with no ``maxsize``), the function's own ``**kwargs``, or a
  field every ``self.attr = ...`` of the file sets to one (another object
  of the same name may be anything);
* waking the waiters of a condition inside its own ``with``
  (``with cond: cond.notify_all()``, ``async with`` alike): ``notify``
  raises only when the caller does not hold the condition's lock, and the
  ``with`` holds it there;
* asking the job's setup for this rank's id or a group's size
  (``dist.get_rank(group)``, ``get_tp_rank()``, ``get_world_size(g)``: a
  preset's rank source, a rank or size getter by its name): it fails only
  where the group was never set up, which the job does alike on every
  rank, so no rank goes into a handler its peers skip
  (``try: if dist.get_rank(g) == 0: ...`` decides no exit by a failure);
* seeding the process's generator from entropy
  (``random.seed(int.from_bytes(os.urandom(16), "big"))``): ``random.seed``
  and ``int.from_bytes`` fail only on an operand of another kind (no
  number, string or bytes; an unknown byte order), never by the value a
  rank holds, and every rank passes the same kinds (it runs the same code);
  ``os.urandom`` of a constant size fails only where the platform has no
  entropy source, which is the job's platform, alike on every rank
  (:data:`FAILING_BY_KIND`).

``Evaluator.raised_atoms`` leaves such a call out of what decides that its
statement raises, so a chain never cites it as a rank-local failure.
"""

from __future__ import annotations

import ast

from ..presets import KIND_DEVICE_ID, KIND_RANK_ID
from ..presets.rank_names import size_name_is_uniform
from .astwalk import param_names
from .funcaliases import probed_text
from .bindings import target_names
from .receivers import binding_statements, other_bindings
from .scope import canonical_text
from .syntax import dotted

#: the methods of each builtin container kind that cannot fail, by the
#: number of positional arguments they take there (no keyword, no ``*args``);
#: ``pop`` of a dict only with a default, ``extend``/``update`` never (they
#: iterate their argument, which may run any code)
SAFE_METHODS = {
    "list": {"append": 1, "insert": 2, "copy": 0, "clear": 0, "reverse": 0},
    "dict": {"get": (1, 2), "setdefault": (1, 2), "pop": 2, "copy": 0, "clear": 0,
             "keys": 0, "values": 0, "items": 0},
    "set": {"add": 1, "discard": 1, "copy": 0, "clear": 0},
    "deque": {"append": 1, "appendleft": 1, "copy": 0, "clear": 0},
    "queue": {"put": 1, "put_nowait": 1, "qsize": 0, "empty": 0},
}

#: keywords a queue's ``put`` may take without a bound making it wait or fail
_PUT_KEYWORDS = frozenset({"block", "timeout"})

#: the calls that make a builtin container, by their name through the imports
CONTAINER_CALLS = {
    "list": "list", "sorted": "list", "dict": "dict", "set": "set",
    "collections.deque": "deque", "collections.defaultdict": "dict",
    "collections.OrderedDict": "dict", "collections.Counter": "dict",
    "queue.Queue": "queue", "queue.SimpleQueue": "queue",
}

_DISPLAYS = {ast.List: "list", ast.ListComp: "list", ast.Dict: "dict", ast.DictComp: "dict",
             ast.Set: "set", ast.SetComp: "set"}

#: the methods that wake a condition's waiters
CONDITION_NOTIFIES = frozenset({"notify", "notify_all", "notifyAll"})

#: library calls (canonical names) that fail only on operands of another kind,
#: or where the platform lacks what they ask for, never by the values a rank
#: holds; True: only with constant operands (``os.urandom(-1)`` fails by its value)
FAILING_BY_KIND = {"random.seed": False, "int.from_bytes": False, "os.urandom": True}


def cannot_raise(call: ast.Call, stmt, info) -> bool:
    """Whether the call made by ``stmt`` cannot raise itself on some ranks
    only: a question to the job's setup (:func:`asks_the_setup`), a method
    of a builtin container that does not fail on its arguments, or a
    condition's notify inside its own ``with``."""
    func = call.func
    if asks_the_setup(call, info) or _fails_by_kind(call, info):
        return True
    if type(func) is not ast.Attribute:
        return False
    if func.attr in CONDITION_NOTIFIES:
        return not call.args and not call.keywords and _inside_own_with(info, stmt, func.value)
    kind = container_kind(func.value, info)
    if kind is None:
        return False
    arity = SAFE_METHODS[kind].get(func.attr)
    if arity is None or any(type(arg) is ast.Starred for arg in call.args):
        return False
    keywords = {keyword.arg for keyword in call.keywords}
    if keywords and not (kind == "queue" and func.attr == "put" and keywords <= _PUT_KEYWORDS):
        return False
    count = len(call.args)
    return count in arity if type(arity) is tuple else count == arity


def _fails_by_kind(call: ast.Call, info) -> bool:
    """Whether the call is one of :data:`FAILING_BY_KIND` (the constant
    operands it needs written out), not a name the module binds itself."""
    raw = dotted(call.func)
    if not raw or "()" in raw or raw.split(".", 1)[0] in info.local_names:
        return False
    constants_only = FAILING_BY_KIND.get(canonical_text(raw, info.ctx.imports))
    if constants_only is None:
        return False
    if not constants_only:
        return True
    operands = list(call.args) + [keyword.value for keyword in call.keywords]
    return all(type(operand) is ast.Constant for operand in operands)


def asks_the_setup(call: ast.Call, info) -> bool:
    """Whether the call asks for this rank's id, its device or a group's
    size, by its text (``ModuleContext.call_text_verdicts``: a preset source
    of kind rank id or device id, a rank getter by its name; a size getter by
    its name, ``get_world_size``), read through a local holding a module's
    function (``funcaliases.probed_text``).  A query about the hardware
    (``get_device_properties(index)``) is not one: it fails where its
    operand names no device, which may be this rank's own."""
    raw = probed_text(info, call.func) or dotted(call.func)
    if not raw or "()" in raw:
        return False
    _configured, source, by_name = info.ctx.call_text_verdicts(
        raw, canonical_text(raw, info.ctx.imports), info.normalise_self(raw))
    if source is not None:
        return source[0] in (KIND_RANK_ID, KIND_DEVICE_ID)
    if by_name == "uniform":
        last = raw.rsplit(".", 1)[-1]
        return last.startswith("get_") and size_name_is_uniform(last[4:])
    return by_name is not None


def _inside_own_with(info, stmt, receiver: ast.expr) -> bool:
    """Whether ``stmt`` lies in the body of a ``with``/``async with`` of the
    function one of whose items is ``receiver`` itself (its text)."""
    text = dotted(receiver)
    if not text or "()" in text:
        return False
    parent = info.parents.get(id(stmt))
    while parent is not None and parent is not info.func:
        if type(parent) in (ast.With, ast.AsyncWith) \
                and any(dotted(item.context_expr) == text for item in parent.items):
            return True
        parent = info.parents.get(id(parent))
    return False


def container_kind(receiver: ast.expr, info):
    """The builtin container kind (a key of :data:`SAFE_METHODS`) a receiver
    is known to hold, else None."""
    if type(receiver) is ast.Name:
        return local_containers(info).get(receiver.id)
    if type(receiver) is ast.Attribute and type(receiver.value) is ast.Name and receiver.value.id == "self" \
            and info.self_name == "self":
        return field_containers(info.ctx).get(receiver.attr)
    return None


def made_container(value, ctx, shadowed=frozenset()):
    """The container kind an expression makes, else None: a display or
    comprehension, or a call of a builtin or standard-library container
    class (a queue only without a bound)."""
    kind = _DISPLAYS.get(type(value))
    if kind is not None or type(value) is not ast.Call:
        return kind
    raw = dotted(value.func)
    if not raw or raw.partition(".")[0] in shadowed:
        return None
    kind = CONTAINER_CALLS.get(canonical_text(raw, ctx.imports))
    if kind == "queue" and not _unbounded(value):
        return None
    return kind


def _unbounded(call: ast.Call) -> bool:
    """Whether a queue is made without a bound (no ``maxsize``, or 0)."""
    sizes = list(call.args[:1]) + [kw.value for kw in call.keywords if kw.arg == "maxsize"]
    if any(kw.arg is None for kw in call.keywords):
        return False
    return all(type(size) is ast.Constant and size.value == 0 for size in sizes)


def _module_names(ctx) -> frozenset:
    """The names the module binds itself, which may shadow a builtin."""
    return frozenset(ctx.module_functions) | frozenset(ctx.module_classes) | frozenset(ctx.module_globals)


def _walrus_targets(info) -> set:
    """The names a ``name := value`` of the body binds (the function is
    scanned: ``local_names`` has been asked)."""
    return {node.target.id for nodes in info.walrus_by_statement.values() for node in nodes}


def local_containers(info) -> dict:
    """name -> kind for the local names every binding of which in the
    function is a plain assignment of a container it makes
    (:func:`made_container`), and the ``**kwargs`` parameter when the body
    never binds it, nor a ``:=``; none where a ``case`` pattern may bind
    names.  Read from the statements alone, once per function."""
    found = info.__dict__.get("_local_containers")
    if found is not None:
        return found
    ctx = info.ctx
    shadowed = frozenset(info.local_names) | _module_names(ctx)  # (scans the function: binds_in_expressions)
    statements = binding_statements(info)
    if statements is None:  # a ``case`` pattern may bind any name, ``**kwargs``'s too
        info._local_containers = {}
        return info._local_containers
    kinds: dict = {}  # name -> kind, or None once a binding makes something else
    for stmt in statements:
        if type(stmt) is ast.Assign:
            made = made_container(stmt.value, ctx, shadowed) if len(stmt.targets) == 1 \
                and type(stmt.targets[0]) is ast.Name else None
            for target in stmt.targets:
                for name in target_names(target):
                    kinds[name] = made if kinds.get(name, made) == made else None
        else:
            for name in (target_names(stmt.target) if type(stmt) is ast.AnnAssign else other_bindings(stmt)):
                kinds[name] = None
    if info.binds_in_expressions():
        kinds.clear()
    args = getattr(info.func, "args", None)
    kwarg = args.kwarg.arg if args is not None and args.kwarg is not None else None
    params = param_names(info.func) - {kwarg}  # `**kwargs` is a dict the function may rebind like a local
    table = {name: kind for name, kind in kinds.items() if kind is not None and name not in params}
    if kwarg and kwarg not in kinds and kwarg not in _walrus_targets(info):
        table[kwarg] = "dict"
    info._local_containers = table
    return table


def field_containers(ctx) -> dict:
    """attr -> kind for the fields every ``self.attr = ...`` of the file
    sets to a container of one kind (:func:`made_container`).  Worked out
    on first use."""
    found = ctx.__dict__.get("_field_containers")
    if found is not None:
        return found
    kinds: dict = {}
    for attr, value in ctx.field_writes:
        made = made_container(value, ctx, _module_names(ctx)) if value is not None else None
        kinds[attr] = made if kinds.get(attr, made) == made else None
    found = ctx.__dict__["_field_containers"] = {attr: kind for attr, kind in kinds.items() if kind is not None}
    return found
