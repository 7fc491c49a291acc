"""What ends a block, a handler, the process or the job, read from the
syntax alone: a handler that catches everything (:func:`catches_everything`)
or that lets the process die or the job end (:func:`handler_swallows`: it
re-raises on every path, :func:`always_raises`; it signals the parent
process to end, :func:`ends_job`; it ends with an exit of a failure status
written out, :func:`exits_failing`); a block that leaves the function at its
end (:func:`leaves_function`: a ``return``, a ``raise`` or a process exit,
:func:`is_process_exit`); and ``raise SystemExit`` or a subclass of it a
module derives (:func:`raises_exit`, :func:`exit_exceptions`), a clean exit
rather than a crash; and which functions of a module a caller in it catches
the raises of (:class:`CallerCatches`): a handler that only raises
(:data:`RAISES_ONLY`, :func:`handler_outcome`) ends the job only where nothing catches what it
raises on the way out.  The CFG builder (:mod:`~cslint.analysis.cfg`) reads
them to decide which handlers get exception edges; the walkers and the
failure models read them as well."""

from __future__ import annotations

import ast
import builtins
from typing import Optional

from .astwalk import CHILDREN, DEFINITIONS, iter_children, own_nodes, walked


CATCH_ALL = ("Exception", "BaseException")


def catches_everything(handler: ast.ExceptHandler) -> bool:
    """A bare ``except:``, or one naming a catch-all class (``Exception``, ``builtins.BaseException``),
    alone or in a tuple (``except (KeyboardInterrupt, Exception):``)."""
    kind = handler.type
    if kind is None:
        return True
    for part in kind.elts if type(kind) is ast.Tuple else (kind,):
        t = type(part)
        if (t is ast.Name and part.id in CATCH_ALL) or (t is ast.Attribute and part.attr in CATCH_ALL):
            return True
    return False


#: what a handler does with what it caught (:func:`handler_outcome`)
SWALLOWS, RAISES_ONLY, ENDS = "swallows", "raises only", "ends"


def handler_outcome(handler: ast.ExceptHandler, parents=frozenset) -> str:
    """:data:`ENDS` where the handler ends the whole job (:func:`ends_job`;
    ``parents``: what gives the function's names bound to its parent
    process) or exits failing; else :data:`RAISES_ONLY` where it raises on
    every path (:func:`always_raises`): where something catches what it
    raises -- a ``try`` around it in its function, a caller
    (:class:`CallerCatches`) -- the raising rank goes on there; else
    :data:`SWALLOWS`."""
    body = handler.body
    if ends_job(body, parents) or (body and exits_failing(body[-1])):
        return ENDS
    return RAISES_ONLY if always_raises(body, frozenset()) else SWALLOWS


def ends_without_raising(handler: ast.ExceptHandler, parents=frozenset) -> bool:
    """Whether the handler ends the process or the job with nothing any code
    may catch: it signals the parent (:func:`ends_job`), or its last statement
    is ``os._exit(status)`` with a failure status or ``os.abort()``.  A
    failing ``sys.exit(1)`` is no such end: it raises ``SystemExit``, which a
    caller in another module (one :class:`CallerCatches` does not see) may
    catch and go on after."""
    body = handler.body
    if ends_job(body, parents):
        return True
    if not body or not exits_failing(body[-1]):
        return False
    func = body[-1].value.func
    return (func.attr if type(func) is ast.Attribute else func.id) in ("_exit", "abort")


def handler_swallows(handler: ast.ExceptHandler, parents=frozenset) -> bool:
    """False when every path through the handler re-raises, or when it
    ends the whole job (:func:`handler_outcome`)."""
    return handler_outcome(handler, parents) == SWALLOWS


#: Signals whose default action ends the process they are sent to.
ENDING_SIGNALS = frozenset({"SIGQUIT", "SIGTERM", "SIGKILL", "SIGINT", "SIGABRT", "SIGHUP"})


def parent_process_names(func: ast.AST) -> frozenset:
    """The local names a function binds to its parent process
    (``parent = psutil.Process().parent()``): a call of a method ``parent``
    with no arguments."""
    names = set()
    for node in walked(func):
        if type(node) is ast.Assign and len(node.targets) == 1 and type(node.targets[0]) is ast.Name \
                and _is_parent_call(node.value):
            names.add(node.targets[0].id)
    return frozenset(names)


def _is_parent_call(expr: ast.expr) -> bool:
    return type(expr) is ast.Call and type(expr.func) is ast.Attribute and expr.func.attr == "parent" \
        and not expr.args and not expr.keywords


def _ending_signal(expr: ast.expr) -> bool:
    name = expr.attr if type(expr) is ast.Attribute else expr.id if type(expr) is ast.Name else None
    return name in ENDING_SIGNALS


def ends_job(body: list, parents) -> bool:
    """Whether a handler's own statements (not nested in a test) signal the
    process that started this one to end (``os.kill(os.getppid(),
    signal.SIGTERM)``, ``parent.send_signal(signal.SIGQUIT)`` with
    ``parent`` bound to ``psutil.Process().parent()``, ``parent.kill()``):
    the parent -- a launcher, a server's main process -- then tears the job
    down, so a rank that took the handler leaves no peer waiting in a
    collective it skipped.  (An exit of this process alone, ``sys.exit``,
    leaves like ``return``: a launcher waits for the other workers of one
    that exited cleanly.)  ``parents()``: the function's names bound to its
    parent process (:func:`parent_process_names`), asked only here."""
    for stmt in body:
        if type(stmt) is not ast.Expr or type(stmt.value) is not ast.Call:
            continue
        call = stmt.value
        func = call.func
        if type(func) is not ast.Attribute:
            continue
        receiver = func.value
        if func.attr == "kill" and type(receiver) is ast.Name and receiver.id == "os" and len(call.args) == 2:
            pid = call.args[0]
            if type(pid) is ast.Call and type(pid.func) is ast.Attribute and pid.func.attr == "getppid" \
                    and _ending_signal(call.args[1]):
                return True
            continue
        ending = (func.attr in ("kill", "terminate") and not call.args) or (
            func.attr == "send_signal" and len(call.args) == 1 and _ending_signal(call.args[0]))
        if ending and (_is_parent_call(receiver) or (type(receiver) is ast.Name and receiver.id in parents())):
            return True
    return False


#: Calls that end the process: a statement calling one leaves the function
#: like ``return`` does (``sys.exit`` raises SystemExit, which ``except
#: Exception`` does not catch; ``os._exit`` does not even unwind).
PROCESS_EXITS = frozenset({"sys.exit", "exit", "quit", "os._exit", "os.abort", "_exit"})


def leaves_function(stmts) -> bool:
    """Whether a block always leaves the function at its end: its last
    statement returns, raises or ends the process."""
    return bool(stmts) and (type(stmts[-1]) in (ast.Return, ast.Raise) or is_process_exit(stmts[-1]))


def is_process_exit(stmt: ast.AST) -> bool:
    """``sys.exit(...)`` and friends as a statement of their own."""
    if type(stmt) is not ast.Expr or type(stmt.value) is not ast.Call:
        return False
    func = stmt.value.func
    if type(func) is ast.Name:
        return func.id in PROCESS_EXITS
    if type(func) is ast.Attribute and type(func.value) is ast.Name:
        return f"{func.value.id}.{func.attr}" in PROCESS_EXITS
    return False


def exits_failing(stmt: ast.AST) -> bool:
    """A process exit with a failure status written out: ``os._exit(1)``,
    ``sys.exit(2)``, ``sys.exit("message")`` (printed, status 1),
    ``os.abort()``.  The launcher sees it as it sees a crash -- a worker
    that ended with a failure -- and tears the job down; an exit with status
    0, none or one a variable holds may be the clean way out, which a
    launcher waits for the others after."""
    if not is_process_exit(stmt):
        return False
    call = stmt.value
    func = call.func
    name = func.attr if type(func) is ast.Attribute else func.id
    if name == "abort":
        return True
    if len(call.args) != 1 or call.keywords or type(call.args[0]) is not ast.Constant:
        return False
    status = call.args[0].value
    return (type(status) is int and status != 0) or (type(status) is str and name != "_exit")


#: Exceptions that end the process the way ``sys.exit`` does: ``SystemExit``
#: (a file adds its own subclasses, :func:`exit_exceptions`).  Raising one is
#: a clean exit, not a crash: ``except Exception`` does not catch it, and a
#: launcher that tears a job down when a worker fails waits for the other
#: workers of one that exited with status 0.
EXIT_EXCEPTIONS = frozenset({"SystemExit"})


def raises_exit(stmt: ast.AST, exits: frozenset) -> bool:
    """``raise SystemExit(...)``, or a subclass of it among ``exits``."""
    if type(stmt) is not ast.Raise or stmt.exc is None:
        return False
    exc = stmt.exc.func if type(stmt.exc) is ast.Call else stmt.exc
    name = exc.id if type(exc) is ast.Name else exc.attr if type(exc) is ast.Attribute else None
    return name in exits


def exit_exceptions(tree: ast.Module) -> frozenset:
    """``SystemExit`` and the classes a module derives from it (directly or
    through one another), by name."""
    found = set(EXIT_EXCEPTIONS)
    classes = [node for node in tree.body if isinstance(node, ast.ClassDef)]
    changed = True
    while changed:
        changed = False
        for node in classes:
            if node.name in found:
                continue
            for base in node.bases:
                name = base.id if type(base) is ast.Name else base.attr if type(base) is ast.Attribute else None
                if name in found:
                    found.add(node.name)
                    changed = True
                    break
    return frozenset(found)


def always_raises(body: list, exits: frozenset) -> bool:
    """Whether every path through ``body`` raises an error (an exit
    exception, :data:`EXIT_EXCEPTIONS`, ends the process instead)."""
    if not body:
        return False
    last = body[-1]
    if isinstance(last, ast.Raise):
        return not raises_exit(last, exits)
    if isinstance(last, ast.If):
        return always_raises(last.body, exits) and always_raises(last.orelse, exits)
    return False


#: the builtin exception classes by name: a raise of one is caught by a handler naming a class of its MRO; what
#: they raise is never of a class the tree defines (raises.py)
BUILTIN_EXCEPTIONS = {name: value for name, value in vars(builtins).items()
                       if isinstance(value, type) and issubclass(value, BaseException)}


def class_name(node) -> Optional[str]:
    """The last part of a dotted class name (``errors.WrapError``: ``WrapError``), None for anything else."""
    while type(node) is ast.Call:
        node = node.func
    if type(node) is ast.Name:
        return node.id
    return node.attr if type(node) is ast.Attribute else None


def reached_through_import(func: ast.expr, imported) -> bool:
    """Whether a callee is a chain of attributes from one of the names
    ``imported`` (``torch.distributed.barrier`` with ``torch`` imported):
    what an import of another package binds reaches that package's
    functions, not one the module defines under the same name (a chain
    through a call, ``registry.get(key).process``, may hand back an object
    of the module's own)."""
    if type(func) is not ast.Attribute:
        return False
    head = func.value
    while type(head) is ast.Attribute:
        head = head.value
    return type(head) is ast.Name and head.id in imported


#: What catches the raises of a function the module hands to a thread
#: (:meth:`CallerCatches._handed_on`): its raise ends that thread alone
#: (``threading.excepthook`` reports it; ``join()`` does not raise it again),
#: so such a function counts as caught, as if by a bare ``except: pass``: a
#: raise of it may leave the rank's work while the rank goes on (more paths,
#: never fewer); so does a task handed to an executor in a statement that
#: drops its future (``pool.submit(f, x)`` alone: the future keeps the raise,
#: nothing reads it).  A function handed on otherwise runs where the alias is
#: called (:meth:`CallerCatches._run_through`): a task whose future a local
#: holds raises again where ``result()`` is read, and so does a ``partial``,
#: a lambda's call, ``getattr(obj, "name")`` where the local is called, so the
#: ``try`` around that read or call is the one that catches.  (Counting every
#: function handed on as an argument as caught brought 6 findings on the real
#: trees, argument checks that end the job; counting executor tasks alone, 1:
#: Megatron's dataset builder, whose future is read and raised again.)
_HANDED_ON = ast.ExceptHandler(type=None, name=None, body=[ast.Pass()])


class CallerCatches:
    """Which of a module's functions have a caller in the module that
    catches what they raise and goes on (``unhandled-exceptions =
    "crash"``): a handler that raises on every path (:func:`always_raises`),
    or an ``if`` arm that does, ends the job only where nothing catches that
    exception on its way out; where a caller's ``try`` around a call naming
    the function (directly or through callers that let it pass) has a
    handler that swallows it (:func:`handler_swallows`) and names its class,
    a base of it, a class of unknown ancestry, ``Exception`` or nothing, the
    raising rank leaves the function like ``return`` does, and the CFG gives
    the handler its exception edges, the arm its path (:meth:`raise_caught`).
    Functions are known by name (a call ``f(...)`` or ``x.f(...)`` names
    every function ``f`` of the module, but for ``x`` an import of another
    package: ``torch.distributed.barrier()`` is no call of the module's own
    ``barrier``), which may find more catching callers, never fewer; callers
    in other modules are not seen.  Worked out on first asking, once per
    module."""

    def __init__(self, tree: ast.Module, foreign=frozenset(), suppressors=frozenset()):
        self.tree = tree
        #: the names the module's imports of other packages bind: a call through one reaches another package
        self.foreign = foreign
        #: the texts that name ``contextlib.suppress`` in the module (``suppress``, ``contextlib.suppress``)
        self.suppressors = suppressors
        self._catchers: Optional[dict] = None  # function name -> the swallowing handlers it may reach
        self._bases: Optional[dict] = None  # a class the module defines -> the names of its bases

    def raise_caught(self, func: ast.AST, raising: list) -> bool:
        """Whether a caller in the module catches one of the exceptions the
        statements ``raising`` of ``func`` raise (asked of a handler that
        :data:`RAISES_ONLY`, of an ``if`` arm that :func:`always_raises`)."""
        if type(func) not in (ast.FunctionDef, ast.AsyncFunctionDef):
            return False
        catchers = self._catching(func.name)
        if not catchers:
            return False
        for node in own_nodes(ast.Module(body=raising, type_ignores=[])):  # (own_nodes walks a body)
            if type(node) is ast.Raise:
                raised = None if node.exc is None else class_name(node.exc)  # a bare raise: any subclass of the caught
                if any(self.catches(catcher, raised) for catcher in catchers):
                    return True
        return False

    def _handed_on(self, node: ast.Call, defined: set) -> list:
        """The functions of the module a call hands to a thread to run
        (``threading.Thread(target=self.process)``): a raise there ends that
        thread alone, the process goes on (:data:`_HANDED_ON`); or to an
        executor in a statement that drops the future (``pool.submit(f,
        x)``): the future holds the raise and nothing reads it again."""
        found = []
        if type(node.func) is ast.Attribute and node.func.attr == "submit":
            name = self._named(node.args[0], defined) if node.args else None
            return [] if name is None else [name]
        for kw in node.keywords:
            arg = kw.value
            kind = type(arg)
            if kw.arg == "target" and (kind is ast.Name and arg.id in defined or kind is ast.Attribute
                                       and arg.attr in defined and not reached_through_import(arg, self.foreign)):
                found.append(arg.id if kind is ast.Name else arg.attr)
        return found

    def _named(self, expr: ast.expr, defined: set) -> Optional[str]:
        """The function of the module ``expr`` names (``f``, ``obj.f``), None for anything else."""
        kind = type(expr)
        if kind is ast.Name:
            return expr.id if expr.id in defined else None
        if kind is ast.Attribute and expr.attr in defined and not reached_through_import(expr, self.foreign):
            return expr.attr
        return None

    def _aliased(self, value: ast.expr, defined: set, submitted: bool) -> list:
        """The functions of the module a local bound to ``value`` runs when
        it is called (``submitted`` False: ``functools.partial(f, ...)``, a
        lambda calling ``f``, ``getattr(obj, "f")``) or when its
        ``result()`` is read (``submitted`` True: ``pool.submit(f, ...)``,
        whose future raises again what ``f`` raised)."""
        if type(value) is ast.Lambda:
            if submitted:
                return []
            return [name for node in walked(value.body) if type(node) is ast.Call
                    for name in (self._named(node.func, defined),) if name is not None]
        if type(value) is not ast.Call or not value.args:
            return []
        func, first = value.func, value.args[0]
        head = func.id if type(func) is ast.Name else func.attr if type(func) is ast.Attribute else None
        if submitted:
            if head != "submit" or type(func) is not ast.Attribute:
                return []
        elif head == "getattr" and type(func) is ast.Name and len(value.args) >= 2:
            attr = value.args[1]
            if type(attr) is ast.Constant and attr.value in defined:
                return [attr.value]
            return []
        elif head != "partial":
            return []
        name = self._named(first, defined)
        return [] if name is None else [name]

    def _run_through(self, call: ast.Call, scope: int, bound: dict, defined: set) -> list:
        """The functions of the module ``call`` runs through a local of its
        function: ``job()`` with ``job = partial(f, ...)``, ``lambda: f()``
        or ``getattr(obj, "f")``; ``future.result()`` with ``future =
        pool.submit(f, ...)``, or ``pool.submit(f, ...).result()`` -- the
        task's raise surfaces there, so a ``try`` around that read catches
        it.  Every binding of the local is read (one path may bind another
        value: more catching callers, never fewer)."""
        func = call.func
        if type(func) is ast.Name:
            local, submitted = func.id, False
        else:  # a ``result()`` read
            if type(func.value) is ast.Call:
                return self._aliased(func.value, defined, True)
            if type(func.value) is not ast.Name:
                return []
            local, submitted = func.value.id, True
        found = []
        for value in bound.get((scope, local), ()):
            found += self._aliased(value, defined, submitted)
        return found

    def suppressing(self, expr: ast.expr) -> Optional[ast.ExceptHandler]:
        """The handler ``with contextlib.suppress(E, F):`` amounts to around
        its body (``except (E, F): pass``: the rank goes on past the
        ``with``), None for any other context."""
        if type(expr) is not ast.Call or not expr.args or expr.keywords:
            return None
        func = expr.func
        text = func.id if type(func) is ast.Name else \
            f"{func.value.id}.{func.attr}" if type(func) is ast.Attribute and type(func.value) is ast.Name else None
        if text not in self.suppressors or any(type(arg) is ast.Starred for arg in expr.args):
            return None
        return ast.ExceptHandler(type=ast.Tuple(elts=list(expr.args), ctx=ast.Load()), name=None, body=[ast.Pass()])

    def _catching(self, name: str) -> list:
        if self._catchers is None:
            self._catchers = self._index()
        return self._catchers.get(name, ())

    def catches(self, handler: ast.ExceptHandler, raised: Optional[str]) -> bool:
        """Whether ``handler`` may catch an exception of the class named ``raised`` (None: unknown)."""
        if handler.type is None:
            return True
        ancestry = self._ancestry(raised) if raised is not None else None
        parts = handler.type.elts if type(handler.type) is ast.Tuple else (handler.type,)
        for part in parts:
            caught = class_name(part)
            if caught is None or ancestry is None or caught in ancestry:
                return True
        return False

    def _ancestry(self, name: str, seen=()) -> Optional[frozenset]:
        """The names of the classes an exception of class ``name`` is an
        instance of, None where they are not all known (a class imported,
        or deriving from one)."""
        builtin = BUILTIN_EXCEPTIONS.get(name)
        if self._bases is None:
            self._bases = {node.name: [class_name(base) for base in node.bases]
                           for node in self.tree.body if type(node) is ast.ClassDef}
        bases = self._bases.get(name)
        if bases is None:
            return None if builtin is None else frozenset(cls.__name__ for cls in builtin.__mro__)
        if name in seen:
            return None
        found = {name}
        for base in bases:
            above = self._ancestry(base, seen + (name,)) if base is not None else None
            if above is None:
                return None
            found |= above
        return frozenset(found)

    def _index(self) -> dict:
        """Function name -> the swallowing handlers around calls naming it, closed over the callers
        that let the exception pass (a call outside any ``try`` that swallows everything).  The
        module's own statements catch too (``try: main() except Exception: ...``) but pass nothing on.

        One walk of the module: each scope (the module, then every function, wherever defined) is walked
        down to the definitions in it, with the handlers around each node; what a scope's walk does not enter
        (a class, a lambda, a function's decorators, defaults and annotations, the targets of a suppressing
        ``with``) is looked at only for what makes the module catch (a ``try`` whose handler does not only
        raise, a ``with`` where ``contextlib.suppress`` is imported), for ``Thread`` calls and for the
        functions it defines, whose bodies are scopes in turn.  Only if something catches or hands a function
        to a thread are the calls the scopes made read against the names the module defines."""
        suppressors = self.suppressors
        foreign = self.foreign
        functions: list = []  # every function the module defines, in the order met
        handing: list = []  # the ``Thread(...)`` calls
        calls: list = []  # (name called, handlers around the call, its caller or None, whether it passes on)
        catching = False
        outside: list = []  # nodes no scope's walk enters, looked at by _note_outside
        through: list = []  # (call, handlers, caller, passing, scope) of calls that may run a function through a local
        bound: dict = {}  # (scope, local name) -> the values bound to it
        children = CHILDREN  # (read inline: children_into is a call per node)
        scopes = [self.tree]
        at = 0
        while at < len(scopes):
            func = scopes[at]
            at += 1
            caller = func.name if func is not self.tree else None
            parents = ParentNames(func)
            frames = [(list(func.body), (), True)]  # nodes of one level, the swallowing handlers around them
            while frames:
                nodes, handlers, passing = frames.pop()
                inner: list = []
                for node in nodes:
                    kind = type(node)
                    if kind in DEFINITIONS:
                        if kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
                            functions.append(node)
                            scopes.append(node)
                            body = {id(stmt) for stmt in node.body}
                            outside.extend(child for child in iter_children(node) if id(child) not in body)
                        else:
                            outside.append(node)
                        continue
                    if kind is ast.Call:
                        func_node = node.func
                        called = class_name(func_node)
                        if called is not None and not reached_through_import(func_node, foreign):
                            calls.append((called, handlers, caller, passing))
                        if type(func_node) is ast.Name or called == "result":
                            through.append((node, handlers, caller, passing, at))
                        if type(func_node) is ast.Attribute and func_node.attr == "Thread" \
                                or type(func_node) is ast.Name and func_node.id == "Thread":
                            handing.append(node)
                    elif kind is ast.Assign:
                        if len(node.targets) == 1 and type(node.targets[0]) is ast.Name:
                            bound.setdefault((at, node.targets[0].id), []).append(node.value)
                    elif kind is ast.Expr:
                        value = node.value
                        if type(value) is ast.Call and type(value.func) is ast.Attribute and value.func.attr == "submit":
                            handing.append(value)  # a task whose future is dropped: nothing raises its exception again
                    elif kind is ast.Try or kind.__name__ == "TryStar":
                        catching = catching or any(not always_raises(h.body, frozenset()) for h in node.handlers)
                        swallowing = tuple(h for h in node.handlers if handler_swallows(h, parents))
                        frames.append((list(node.body), handlers + swallowing,
                                       passing and not any(catches_everything(h) for h in swallowing)))
                        frames.append(([*node.handlers, *node.orelse, *node.finalbody], handlers, passing))
                        continue
                    elif (kind is ast.With or kind is ast.AsyncWith) and suppressors:
                        catching = True
                        suppressing = tuple(self.suppressing(item.context_expr) for item in node.items)
                        if any(suppressing):
                            around = tuple(h for h in suppressing if h)
                            frames.append((list(node.body), handlers + around,
                                           passing and not any(catches_everything(h) for h in around)))
                            frames.append(([item.context_expr for item in node.items], handlers, passing))
                            outside.extend(item.optional_vars for item in node.items if item.optional_vars)
                            continue
                    read = children[kind]
                    if read is not None:
                        inner += read(node)
                if inner:
                    frames.append((inner, handlers, passing))
            if at == len(scopes) and outside:
                catching = self._note_outside(outside, functions, scopes, handing) or catching
                outside = []
        if not catching and not handing:
            return {}  # nothing in the module catches and goes on, nor hands a function to a thread
        defined = {func.name for func in functions}
        direct: dict = {}  # name -> handlers around calls naming it
        passes: dict = {}  # name -> names of the functions its exception may leave through
        for call in handing:
            for name in self._handed_on(call, defined):
                direct.setdefault(name, []).append(_HANDED_ON)
        for called, handlers, caller, passing in calls:
            if called in defined:
                direct.setdefault(called, []).extend(handlers)
                if caller is not None and passing:
                    passes.setdefault(called, set()).add(caller)
        for call, handlers, caller, passing, scope in through:
            for called in self._run_through(call, scope, bound, defined):
                direct.setdefault(called, []).extend(handlers)
                if caller is not None and passing:
                    passes.setdefault(called, set()).add(caller)
        closed: dict = {}
        for name in sorted(defined):
            found, seen, todo = [], {name}, [name]
            while todo:
                current = todo.pop()
                found.extend(direct.get(current, ()))
                for caller in sorted(passes.get(current, ())):
                    if caller not in seen:
                        seen.add(caller)
                        todo.append(caller)
            if found:
                closed[name] = found
        return closed

    def _note_outside(self, nodes: list, functions: list, scopes: list, handing: list) -> bool:
        """What the nodes no scope's walk enters hold (:meth:`_index`): whether they catch (a ``try`` whose
        handler does not only raise, a ``with`` where ``contextlib.suppress`` is imported); the ``Thread``
        calls are added to ``handing``, the functions defined to ``functions`` and ``scopes`` (their bodies
        walked there, not here)."""
        catching = False
        suppressors = self.suppressors
        stack = list(nodes)
        while stack:
            node = stack.pop()
            kind = type(node)
            if kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
                functions.append(node)
                scopes.append(node)
                body = {id(stmt) for stmt in node.body}
                stack.extend(child for child in iter_children(node) if id(child) not in body)
                continue
            if kind is ast.Call:
                func = node.func
                if type(func) is ast.Attribute and func.attr == "Thread" or type(func) is ast.Name and func.id == "Thread":
                    handing.append(node)
            elif kind is ast.Try or kind.__name__ == "TryStar":
                catching = catching or any(not always_raises(h.body, frozenset()) for h in node.handlers)
            elif (kind is ast.With or kind is ast.AsyncWith) and suppressors:
                catching = True
            read = CHILDREN[kind]
            if read is not None:
                stack += read(node)
        return catching


class ParentNames:
    """:func:`parent_process_names` of one function, worked out on first asking (a handler that signals one):
    the ``parents`` :func:`handler_outcome` asks."""

    def __init__(self, func: ast.AST):
        self.func, self.names = func, None

    def __call__(self) -> frozenset:
        if self.names is None:
            self.names = parent_process_names(self.func)
        return self.names
