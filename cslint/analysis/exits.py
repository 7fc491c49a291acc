"""What ends a block, a handler, the process or the job, read from the
syntax alone: a handler that catches everything (:func:`catches_everything`)
or that lets the process die or the job end (:func:`handler_swallows`: it
re-raises on every path, :func:`always_raises`; it signals the parent
process to end, :func:`ends_job`; it ends with an exit of a failure status
written out, :func:`exits_failing`); a block that leaves the function at its
end (:func:`leaves_function`: a ``return``, a ``raise`` or a process exit,
:func:`is_process_exit`); and ``raise SystemExit`` or a subclass of it a
module derives (:func:`raises_exit`, :func:`exit_exceptions`), a clean exit
rather than a crash.  The CFG builder (:mod:`~cslint.analysis.cfg`) reads
them to decide which handlers get exception edges; the walkers and the
failure models read them as well."""

from __future__ import annotations

import ast

from .astwalk import walked


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


def handler_swallows(handler: ast.ExceptHandler, parents=frozenset) -> bool:
    """False when every path through the handler re-raises, or when it
    ends the whole job (:func:`ends_job`; ``parents``: what gives the
    function's names bound to its parent process)."""
    return not always_raises(handler.body, frozenset()) and not ends_job(handler.body, parents) \
        and not (handler.body and exits_failing(handler.body[-1]))


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
