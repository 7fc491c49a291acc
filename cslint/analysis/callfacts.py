"""Fix facts of a call site: what a rewrite of the call needs to know.

Read off the call's syntax with the collective's spec (from the presets):
the communicator it is called on, its group and reduction-op arguments, and
the argument carrying what the rank contributes, with what evaluating that
argument may do.  Recorded on the site so the findings can carry them
(:class:`cslint.model.FixFacts`) and the codemods never re-derive them.

Positions are ``ast``'s (UTF-8 byte columns); the finding builder converts
them to characters and slices the argument's text from the file.
"""

from __future__ import annotations

import ast
from typing import NamedTuple, Optional

from ..model import Span
from ..presets import PURE_BUILTINS, is_communicating_name, neutral_table
from .astwalk import walk as fast_walk

#: keywords that pass a process group (as the group inference reads them)
GROUP_KEYWORDS = ("group", "process_group", "comm", "pg")


class CallFacts(NamedTuple):
    receiver: str  # dotted text the collective is called on ("" for a plain function or a wrapper)
    group_expr: str  # text of the group argument ("" when none is passed)
    op: str  # text of the reduction op argument ("" when none is passed)
    payload: Optional[Span]  # the argument carrying the contribution
    payload_keyword: str  # "" when positional
    payload_effects: str  # pure | calls | communicates
    payload_numeric: bool  # visibly a number (a literal, len(), int(), arithmetic of those)
    join: str  # the spec's join (see CollectiveSpec.join); "" for wrappers
    agreement: str  # the spec's agreement template; "" for wrappers
    #: the texts that name module-level things (an import, a global), valid
    #: in any function of the module: subset of ("receiver", "group_expr")
    module_level: tuple = ()


def collective_facts(call: ast.Call, raw: str, spec, api: str, is_global=lambda name: False) -> CallFacts:
    """Facts of a call that is a collective (``spec`` None: a configured
    pattern); ``is_global(name)`` says whether a name is bound at module level."""
    receiver = raw.rsplit(".", 1)[0] if "." in raw else ""
    group_expr = ""
    keywords = (spec.group_kw,) + GROUP_KEYWORDS if spec is not None else GROUP_KEYWORDS
    for keyword in call.keywords:
        if keyword.arg in keywords:
            if not (isinstance(keyword.value, ast.Constant) and keyword.value.value is None):
                group_expr = ast.unparse(keyword.value)
            break
    else:
        if spec is not None and spec.group_arg is not None and len(call.args) > spec.group_arg:
            group_expr = ast.unparse(call.args[spec.group_arg])
    if group_expr and spec is not None:  # a group told by its name: the group object the name is read from
        group_expr = spec.group_object(group_expr)
    position = spec.payload if spec is not None else 0
    names = spec.payload_kw if spec is not None else ()
    payload, keyword = argument(call, position, names)
    table = neutral_table(spec.join) if spec is not None else None
    op = ""
    if table is not None:
        op_node, _ = argument(call, table.op_arg, (table.op,))
        op = ast.unparse(op_node) if op_node is not None else ""
    join = spec.join if spec is not None else ""
    agreement = spec.agreement if spec is not None else ""
    if spec is not None and api != spec.api:
        agreement = API_AGREEMENTS.get(api, "")  # an API the receiver revealed (a TensorRT-LLM `self.dist`)
    module_level = tuple(name for name, text in (("receiver", receiver), ("group_expr", group_expr))
                         if _dotted(text) and is_global(text.split(".", 1)[0]))
    return CallFacts(receiver, group_expr, op, Span.of(payload) if payload is not None else None, keyword,
                     effects(payload) if payload is not None else "pure",
                     payload is not None and numeric(payload), join, agreement, module_level)


#: the agreement template of an API when a call's receiver, not its spec, named the API
API_AGREEMENTS = {"trtllm": "trtllm"}


def wrapper_facts(call: ast.Call) -> Optional[CallFacts]:
    """Facts of a call that may reach a collective: its only positional
    argument is taken for what it passes on (None without one)."""
    positional = call.args
    if len(positional) != 1 or isinstance(positional[0], ast.Starred):
        return None
    payload = positional[0]
    return CallFacts("", "", "", Span.of(payload), "", effects(payload), numeric(payload), "", "")


def payload_argument(call: ast.Call, spec) -> Optional[ast.AST]:
    """The argument carrying what this rank contributes to a collective."""
    return argument(call, spec.payload if spec is not None else 0, spec.payload_kw if spec is not None else ())[0]


def argument(call: ast.Call, position: Optional[int], keywords: tuple) -> tuple:
    """``(node, keyword)`` of the argument a call passes by one of
    ``keywords`` (``keyword`` its name) or at ``position`` (``keyword``
    ""; none past a starred argument); ``(None, "")`` without one."""
    for keyword in call.keywords:
        if keyword.arg is not None and keyword.arg in keywords:
            return keyword.value, keyword.arg
    if position is not None and len(call.args) > position and not any(
            isinstance(a, ast.Starred) for a in call.args[:position + 1]):
        return call.args[position], ""
    return None, ""


def effects(node: ast.AST) -> str:
    """``pure``, ``calls`` (a call other than a pure builtin, or a yield,
    await or assignment expression) or ``communicates``."""
    found = "pure"
    for sub in fast_walk(node):
        if isinstance(sub, ast.Call):
            func = sub.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            if name and is_communicating_name(name):
                return "communicates"
            if not (isinstance(func, ast.Name) and func.id in PURE_BUILTINS):
                found = "calls"
        elif isinstance(sub, (ast.Yield, ast.YieldFrom, ast.Await, ast.NamedExpr)):
            found = "calls"
    return found


_NUMERIC_CALLS = frozenset({"int", "float", "len", "sum", "abs", "round", "min", "max"})


def numeric(node: ast.AST) -> bool:
    """Whether an expression is visibly a number (its own text shows it)."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, (int, float)) and not isinstance(node.value, bool)
    if isinstance(node, ast.UnaryOp):
        return numeric(node.operand)
    if isinstance(node, ast.BinOp):
        return numeric(node.left) or numeric(node.right)
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _NUMERIC_CALLS


def translate(facts: CallFacts, ref: tuple, same_module: bool) -> CallFacts:
    """The collective's facts as seen from a caller that reaches it through a
    call resolved as ``ref``.

    ``self.x`` stays ``self.x`` through a call on ``self`` and becomes
    ``self.f.x`` through ``self.f.method()``; texts naming module-level
    things stay valid within the same module.  What cannot be named from the
    caller (a parameter or local of the callee) becomes "".  The op and the
    payload are the callee's own business: a caller passes neither.
    """

    def seen(name: str, text: str) -> str:
        if not text:
            return ""
        if text == "self" or text.startswith("self."):
            if ref[0] in ("method", "super"):
                return text
            if ref[0] == "fieldmethod":
                return f"self.{ref[2]}{text[4:]}"
            return ""
        return text if same_module and name in facts.module_level else ""

    return facts._replace(receiver=seen("receiver", facts.receiver),
                          group_expr=seen("group_expr", facts.group_expr), op="", payload=None,
                          payload_keyword="", payload_effects="pure", payload_numeric=False)


def _dotted(text: str) -> bool:
    return bool(text) and all(part.isidentifier() for part in text.split("."))
