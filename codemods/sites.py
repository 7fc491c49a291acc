"""Located findings, edit records and the small helpers both strategies share.

A :class:`Site` is one finding resolved to libcst nodes: the collective call,
its enclosing function, the block shared with the controlling statement.
A strategy turns a group of sites (a *unit*) into one :class:`Edit`: replace
a run of statements of one block by new statements.  Keeping every edit at
statement granularity is what keeps the rest of the file byte-identical.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from cslint.model import Finding
from cslint.presets import PURE_BUILTINS

from .locate import (
    LocateError,
    Path,
    SourceIndex,
    common_block,
    dotted_name,
    enclosing_function,
    parent_map,
    walk,
)


class Refused(Exception):
    """A unit cannot be fixed while keeping behaviour; the message says why."""


@dataclass(eq=False)
class Site:
    finding: Finding
    call_path: Path
    guard_path: Path | None
    function: cst.FunctionDef | None

    @property
    def call(self) -> cst.Call:
        return self.call_path[-1]  # type: ignore[return-value]


@dataclass(eq=False)
class Edit:
    """Replace ``owner.body[start:end]`` with ``new``; ``imports`` are module lines to ensure."""

    owner: cst.CSTNode
    start: int
    end: int
    new: list[cst.BaseStatement]
    replaced: list[cst.CSTNode] = field(default_factory=list)
    imports: list[str] = field(default_factory=list)
    #: edits outside the block, applied to the whole file afterwards
    #: (:class:`codemods.propagate_rewrite.Companion`)
    companions: list = field(default_factory=list)


@dataclass
class Plan:
    """What a strategy decided for one unit."""

    edit: Edit
    strategy: str
    safe: bool
    reason: str
    #: what every rank of the group does at the site after the rewrite, in a sentence
    effect: str = ""


class FunctionScope:
    """Per-function facts the rewrites need: parents, names in use, assignments."""

    def __init__(self, function: cst.CSTNode) -> None:
        self.function = function
        self.parents = parent_map(function)
        self.names: set[str] = set()
        self.assignments: dict[str, cst.CSTNode] = {}
        counts: dict[str, int] = {}
        for node in walk(function, into_functions=True):
            if isinstance(node, cst.Name):
                self.names.add(node.value)
            elif isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
                name = node.targets[0].target.value
                counts[name] = counts.get(name, 0) + 1
                self.assignments[name] = node.value
        # a name assigned more than once has no single visible value
        for name, count in counts.items():
            if count > 1:
                self.assignments.pop(name, None)

    def fresh(self, base: str) -> str:
        """A local name not used anywhere in the function (then reserved)."""
        name, n = base, 2
        while name in self.names:
            name, n = f"{base}_{n}", n + 1
        self.names.add(name)
        return name


def locate(index: SourceIndex, finding: Finding) -> Site:
    """Resolve a finding to nodes; raises Refused with a readable reason."""
    try:
        call_path = index.call_path(finding)
        guard_path = index.guard_path(finding)
    except LocateError as exc:
        raise Refused(f"the finding does not match the source ({exc}); re-run `cslint check`") from exc
    function = enclosing_function(call_path)
    if function is not None:
        if function.asynchronous is not None:
            raise Refused(f"`{function.name.value}` is an async function; suspension points make the rewrite unsafe")
        if is_generator(function):
            raise Refused(f"`{function.name.value}` is a generator; a deferred exit would change what it yields")
    return Site(finding, call_path, guard_path, function)


def is_generator(function: cst.FunctionDef) -> bool:
    return any(isinstance(node, cst.Yield) for node in walk(function.body))


def guard_top(site: Site) -> tuple[cst.CSTNode, int, int, int]:
    """(block owner, guard index, call index, depth of the guard's top statement).

    The top statements are the ancestors of the guard and of the call that sit
    in the deepest block holding both.
    """
    if site.guard_path is None:
        raise Refused("the finding has no controlling statement to rewrite")
    shared = common_block(site.guard_path, site.call_path)
    if shared is None:
        raise Refused("the controlling statement and the collective share no block")
    owner, depth_g, index_g, _depth_c, index_c = shared
    return owner, index_g, index_c, depth_g


def is_pure(node: cst.CSTNode, allowed_calls: tuple = ()) -> bool:
    """No calls other than pure builtins (and the explicitly allowed nodes)."""
    for sub in walk(node, into_functions=False):
        pure_builtin = isinstance(sub, cst.Call) and isinstance(sub.func, cst.Name) and sub.func.value in PURE_BUILTINS
        if isinstance(sub, cst.Call) and not pure_builtin and not any(sub is a for a in allowed_calls):
            return False
        if isinstance(sub, (cst.Yield, cst.Await, cst.NamedExpr)):
            return False
    return True


def payload_arg(site: Site, index: SourceIndex) -> cst.Arg | None:
    """The argument the finding's fix facts name as the payload (located by position)."""
    facts = site.finding.fix_facts
    if facts is None or facts.payload is None:
        return None
    wanted = (facts.payload.span.line - index.line_base, facts.payload.span.column - 1)
    for arg in site.call.args:
        # ast starts a parenthesized tuple at its parenthesis, libcst inside it
        starts = [index.range(arg.value)] + ([index.range(arg)] if arg.keyword is None else [])
        if any(rng is not None and (rng.start.line, rng.start.column) == wanted for rng in starts):
            return arg
    raise Refused(f"the payload `{facts.payload.text}` is not where the finding says; re-run `cslint check`")


def binds(index: SourceIndex, name: str) -> bool:
    """Whether a top-level import binds ``name`` in the module."""
    if index.top_level_names is not None:
        return name in index.top_level_names
    for stmt in index.module.body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if isinstance(small, (cst.Import, cst.ImportFrom)) and not isinstance(small.names, cst.ImportStar):
                for alias in small.names:
                    bound = alias.asname.name.value if alias.asname else dotted_name(alias.name).split(".")[0]
                    if bound == name:
                        return True
    return False


class _Substitute(cst.CSTTransformer):
    def __init__(self, names: dict) -> None:
        super().__init__()
        self.names = names

    def leave_Name(self, original_node, updated_node):  # noqa: N802 - libcst's visitor naming
        return self.names.get(original_node.value, updated_node)


def substitute(node: cst.CSTNode, names: dict):
    """``node`` with every ``Name`` listed in ``names`` replaced by its node
    (the placeholders of the presets' templates)."""
    return node.visit(_Substitute(names))


def needs_parens(expr: cst.BaseExpression) -> bool:
    if expr.lpar:
        return False
    return isinstance(expr, (cst.IfExp, cst.Lambda, cst.NamedExpr, cst.Yield))


def parenthesize(expr: cst.BaseExpression) -> cst.BaseExpression:
    if needs_parens(expr):
        return expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return expr


class ReplaceNodes(cst.CSTTransformer):
    """Replace nodes by identity; a replacement may be a FlattenSentinel or RemovalSentinel."""

    def __init__(self, replacements: dict[int, object]) -> None:
        super().__init__()
        self.replacements = replacements

    def on_leave(self, original_node, updated_node):  # type: ignore[override]
        return self.replacements.get(id(original_node), updated_node)


def replace_in(node: cst.CSTNode, replacements: dict[int, object]):
    if not replacements:
        return node
    return node.visit(ReplaceNodes(replacements))


def statement(text: str, module: cst.Module) -> cst.BaseStatement:
    return cst.parse_statement(text, config=module.config_for_parsing)


def expression(text: str, module: cst.Module) -> cst.BaseExpression:
    return cst.parse_expression(text, config=module.config_for_parsing)


def block_body(owner: cst.CSTNode) -> list:
    return list(owner.body)  # type: ignore[attr-defined]


def header_contains(statement_node: cst.CSTNode, node: cst.CSTNode, path: Path) -> bool:
    """Whether ``node`` sits in the header (test/iter/items/value) of ``statement_node``.

    Used to refuse hoisting a collective out of a compound statement's body.
    """
    try:
        at = next(i for i, n in enumerate(path) if n is statement_node)
    except StopIteration:
        return False
    child = path[at + 1] if at + 1 < len(path) else None
    if isinstance(statement_node, cst.SimpleStatementLine):
        return True
    if isinstance(statement_node, cst.If):
        return child is statement_node.test
    if isinstance(statement_node, cst.For):
        return child is statement_node.iter
    if isinstance(statement_node, cst.With):
        return any(child is item for item in statement_node.items)
    return False


def conditional_ancestor(path: Path, top: cst.CSTNode) -> cst.CSTNode | None:
    """A short-circuit, conditional, lambda or comprehension between ``top`` and the call."""
    try:
        at = next(i for i, n in enumerate(path) if n is top)
    except StopIteration:
        return None
    for node in path[at + 1:-1]:
        if isinstance(node, (cst.BooleanOperation, cst.IfExp, cst.Lambda, cst.ListComp, cst.SetComp,
                             cst.DictComp, cst.GeneratorExp)):
            return node
    return None


# -- conditions made of configuration and rank-local operands -----------------------------


def _flat_operands(test: cst.BaseExpression, operator: type) -> list[cst.BaseExpression]:
    """The operands of ``a or b or c`` (libcst nests them to the left)."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, operator) and not test.lpar:
        return _flat_operands(test.left, operator) + _flat_operands(test.right, operator)
    return [test]


def _join(operands: list[cst.BaseExpression], operator: type) -> cst.BaseExpression:
    joined = operands[0]
    for operand in operands[1:]:
        joined = cst.BooleanOperation(left=joined, operator=operator(), right=operand)
    return joined


def split_uniform_operands(test: cst.BaseExpression, site: Site, index: SourceIndex):
    """``(uniform part, rank-local part)`` of an ``and``/``or`` condition
    whose configuration operands the analysis named (fix facts), or None.

    A rewrite keeps the uniform part as it is, so that where the
    configuration alone decides (a feature that is off), no rank enters a
    collective it did not enter before.  The split only happens when it
    keeps the order in which operands are evaluated, or when every operand
    is free of calls.
    """
    facts = site.finding.fix_facts
    if facts is None or not facts.uniform_operands or facts.operator not in ("and", "or"):
        return None
    operator = cst.And if facts.operator == "and" else cst.Or
    if not isinstance(test, cst.BooleanOperation):
        return None
    operands = _flat_operands(test.with_changes(lpar=[], rpar=[]), operator)
    if len(operands) < 2:
        return None
    wanted = {(span.line - index.line_base, span.column - 1) for span in facts.uniform_operands}
    uniform = []
    for operand in operands:
        rng = index.range(operand)
        if rng is None:
            return None
        # a parenthesised operand starts at its parenthesis in libcst, inside it in ast
        starts = {(rng.start.line, rng.start.column + shift) for shift in range(len(getattr(operand, "lpar", ())) + 1)}
        uniform.append(bool(starts & wanted))
    if all(uniform) or not any(uniform):
        return None
    first_local = uniform.index(False)
    in_order = all(uniform[:first_local]) and not any(uniform[first_local:])
    if not in_order and not all(is_pure(operand) for operand in operands):
        return None
    kept = [o for o, u in zip(operands, uniform) if u]
    local = [o for o, u in zip(operands, uniform) if not u]
    return _join(kept, operator), _join(local, operator), facts.operator
