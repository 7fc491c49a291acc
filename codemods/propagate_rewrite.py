"""Propagate: carry a condition in the object the code already broadcasts.

Where a method of the same class already broadcasts an object to every rank
of the group each time it runs (a schedule), a rank-local condition that
decides whether ranks enter a collective can travel in that object instead
of being agreed by a new collective.  The analysis names the broadcast, the
object and its class (:class:`cslint.model.Carrier`); this rewrite::

    # the function with the finding                       # after
    need_check = any(r.in_flight for r in self.active)    need_check = any(r.in_flight for r in self.active)
    if need_check:                                   ==>  if (need_check if self.dist.pp_size == 1
        self.transceiver.check_status()                          else self._scheduled_need_check):
                                                              self.transceiver.check_status()

    # the broadcasting method (its root builds the object)
    schedule = Schedule.from_result(batch)                schedule = Schedule.from_result(batch)
                                                    ==>   schedule.need_check = any(r.in_flight for r in self.active)
    schedule = self.dist.pp_broadcast(schedule, root=0)   schedule = self.dist.pp_broadcast(schedule, root=0)
                                                          self._scheduled_need_check = schedule.need_check

plus ``self._scheduled_need_check = False`` in ``__init__`` (what every rank
uses before the first schedule) and a ``need_check: bool = False`` field in
the object's dataclass, so the value pickles with it.  No collective is
added: every rank of the group takes the root's value, the one the root had
when it built the schedule (the last schedule before the decision).  Where
the group has one rank the condition stays local -- a loop that never runs
the broadcasting method (no pipeline stages) decides as before.

The condition is evaluated in the broadcasting method, so it may read only
``self`` and the function's own locals that are assigned once from such
reads (they are inlined); otherwise the rewrite is refused.
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass
from pathlib import Path

import libcst as cst

from cslint.model import Carrier

from .consensus_rewrite import consensus_guard
from .locate import SourceIndex, walk
from .neutral import code_of
from .sites import Edit, FunctionScope, Plan, Refused, Site, expression, is_pure, parenthesize, split_uniform_operands

PREFIX = "_scheduled_"
_BUILTIN_NAMES = frozenset(dir(builtins))


@dataclass(frozen=True)
class Companion:
    """The edits outside the finding's function that a propagate fix needs:
    applied to the whole file after the function's own edit, and to the
    class's file (see :func:`apply_companions`)."""

    carrier: Carrier
    owner_class: str  # the class holding the finding's function and the broadcasting method
    slug: str  # the object's new field
    expression: str  # the condition as the broadcasting method computes it

    @property
    def attribute(self) -> str:
        return PREFIX + self.slug


def plan_propagate(sites: list[Site], index: SourceIndex, scope: FunctionScope) -> Plan:
    """Plan the propagate rewrite of the guard shared by ``sites``."""
    facts = sites[0].finding.fix_facts
    carrier = facts.carrier if facts is not None else None
    if carrier is None:
        raise Refused("no method of this class already broadcasts an object to every rank of the group")
    if not carrier.single_rank:
        raise Refused(f"how to tell a one-rank {carrier.group} group is not known for this API")
    guard, owner, gi = consensus_guard(sites[0])
    for site in sites[1:]:
        if consensus_guard(site)[0] is not guard or site.finding.fix_facts.carrier != carrier:
            raise Refused("the findings do not share one guard and one carrier")
    function = scope.function
    if not isinstance(function, cst.FunctionDef):
        raise Refused("the condition is not inside a method")
    qualname = sites[0].finding.function
    owner_class = qualname.rpartition(".")[0]
    if not owner_class or carrier.function.rpartition(".")[0] != owner_class or carrier.path != sites[0].finding.path:
        raise Refused(f"the broadcast (`{carrier.function}`) is not a method of `{owner_class or qualname}` "
                      "in this file")
    if carrier.function == qualname:
        raise Refused("the broadcast is in this very function; the condition would travel after it is needed")

    test = guard.test
    kept, split_op = None, ""
    split = split_uniform_operands(test, sites[0], index)
    if split is not None:
        kept, test, split_op = split
    slug = _slug(test)
    computed = _as_computed_elsewhere(test, scope, index)
    module = index.module
    attribute = PREFIX + slug
    carried = expression(f"({code_of(test)} if {carrier.single_rank} else self.{attribute})", module)
    new_test: cst.BaseExpression = carried
    if kept is not None:
        operator = cst.And() if split_op == "and" else cst.Or()
        new_test = cst.BooleanOperation(left=parenthesize(kept), operator=operator, right=carried)
    new_guard = guard.with_changes(test=new_test)
    companion = Companion(carrier, owner_class, slug, computed)
    check_companions([companion], index.file_text)
    edit = Edit(owner=owner, start=gi, end=gi + 1, new=[new_guard], replaced=[guard], companions=[companion])
    short = carrier.function.rsplit(".", 1)[-1]
    reason = (
        f"propagate: `{code_of(test)}` travels as `{carrier.variable}.{slug}` in the object `{short}` already "
        f"sends with `{carrier.collective}` over {carrier.group}; the root computes it, every rank reads "
        f"`self.{attribute}`; no collective is added"
    )
    effect = (f"every rank of {carrier.group} takes `{code_of(test)}` from the schedule `{short}` broadcasts (the "
              f"root's value); no collective is added; where the {carrier.group} group has one rank each rank "
              "decides as before")
    return Plan(edit=edit, strategy="propagate", safe=False, reason=reason, effect=effect)


def _slug(test: cst.BaseExpression) -> str:
    node = test
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
        raise Refused("the condition is a negation; name the value it tests to carry it")
    if isinstance(node, cst.Name):
        return node.value.lstrip("_")
    if isinstance(node, cst.Attribute):
        return node.attr.value.lstrip("_")
    raise Refused(f"the condition `{code_of(test)}` is an expression; give it a name to carry it")


def _as_computed_elsewhere(test: cst.BaseExpression, scope: FunctionScope, index: SourceIndex) -> str:
    """The condition as another method of the class can compute it: locals
    assigned once are replaced by their (pure) definitions; what is left
    may read only ``self``, builtins and the module's names."""
    inlined: dict[str, cst.BaseExpression] = {}

    def resolve(expr: cst.BaseExpression, depth: int = 0) -> cst.BaseExpression:
        if depth > 8:
            raise Refused("the condition's definition is too deep to carry")
        replacements = {}
        attribute_names = {id(n.attr) for n in walk(expr) if isinstance(n, cst.Attribute)}
        for node in walk(expr):
            if isinstance(node, cst.Name) and id(node) not in attribute_names and node.value in scope.assignments \
                    and node.value not in _bound_in(expr):
                value = scope.assignments[node.value]
                if not is_pure(value):
                    raise Refused(f"`{node.value}` is computed with calls; the broadcasting method cannot "
                                  "recompute it without repeating them")
                inlined[node.value] = value
                replacements[id(node)] = parenthesize(resolve(value, depth + 1))
        if not replacements:
            return expr
        from .sites import replace_in

        return replace_in(expr, replacements)

    computed = resolve(test)
    bound = _bound_in(computed)
    module_names = index.top_level_names or set()
    attribute_names = {id(n.attr) for n in walk(computed) if isinstance(n, cst.Attribute)}
    for node in walk(computed):
        if isinstance(node, cst.Name) and node.value not in ("self",) and node.value not in bound \
                and node.value not in _BUILTIN_NAMES and node.value not in module_names \
                and id(node) not in attribute_names:
            raise Refused(f"the condition reads `{node.value}`, a local the broadcasting method does not have")
    return code_of(computed)


def _bound_in(expr: cst.CSTNode) -> set[str]:
    """Names bound by the comprehensions of ``expr``."""
    bound: set[str] = set()
    for node in walk(expr):
        if isinstance(node, cst.CompFor):
            for sub in walk(node.target):
                if isinstance(sub, cst.Name):
                    bound.add(sub.value)
    return bound


# -- the edits outside the finding's function ----------------------------------------------------


def check_companions(companions: list[Companion], source: str | None) -> None:
    """Refuse (``Refused``) unless every companion edit has its place: run
    before the plan is accepted, on the file's original text."""
    if source is None:
        raise Refused("the rest of the file is not at hand (a fix of one function alone)")
    for companion in companions:
        _CompanionEditor(companion).transform(source, check_only=True)
        _class_file_text(companion)


def apply_companions(companions: list[Companion], text: str) -> str:
    """The file's text with the broadcasting method's and ``__init__``'s edits."""
    for companion in companions:
        text = _CompanionEditor(companion).transform(text)
    return text


def class_file_edits(companions: list[Companion]) -> dict[str, list[Companion]]:
    """The class files the companions add a field to, by path."""
    out: dict[str, list[Companion]] = {}
    for companion in companions:
        path, _text = _class_file_text(companion)
        out.setdefault(path, []).append(companion)
    return out


def add_fields(text: str, companions: list[Companion]) -> str:
    """``text`` (a class file) with each companion's field added to its dataclass."""
    module = cst.parse_module(text)
    for companion in companions:
        module = module.visit(_AddField(companion))
    return module.code


def _class_file_text(companion: Companion) -> tuple[str, str]:
    """(path, text) of the file defining the carried object's class."""
    carrier = companion.carrier
    path = carrier.cls_path or _module_file(carrier)
    if not path:
        raise Refused(f"the file of `{carrier.cls}` is not found beside `{carrier.path}`")
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise Refused(f"cannot read `{path}` to add the field: {exc}") from exc
    tree = cst.parse_module(text)
    name = carrier.cls.rsplit(".", 1)[-1]
    found = [node for node in tree.body if isinstance(node, cst.ClassDef) and node.name.value == name]
    if not found:
        raise Refused(f"`{name}` is not defined at the top of `{path}`")
    if not any(_decorator_name(d) == "dataclass" for d in found[0].decorators):
        raise Refused(f"`{name}` is not a dataclass; add the field `{companion.slug}` to it by hand")
    return path, text


def _module_file(carrier: Carrier) -> str:
    """The file of the class's module, found from the carrying function's
    module and file (both name the same package root)."""
    if not carrier.module:
        return ""
    parts = carrier.module.split(".")
    root = Path(carrier.path)
    if root.name == "__init__.py":
        root = root.parent
    else:
        root = root.with_suffix("")
    for _ in parts:
        root = root.parent
    dotted = carrier.cls.split(".")[:-1]  # without the class name
    for candidate in (root.joinpath(*dotted).with_suffix(".py"), root.joinpath(*dotted, "__init__.py")):
        if candidate.is_file():
            return str(candidate)
    return ""


def _decorator_name(decorator: cst.Decorator) -> str:
    node = decorator.decorator
    if isinstance(node, cst.Call):
        node = node.func
    while isinstance(node, cst.Attribute):
        return node.attr.value
    return node.value if isinstance(node, cst.Name) else ""


class _AddField(cst.CSTTransformer):
    def __init__(self, companion: Companion) -> None:
        super().__init__()
        self.companion = companion
        self.name = companion.carrier.cls.rsplit(".", 1)[-1]

    def leave_ClassDef(self, original_node, updated_node):  # noqa: N802 - libcst's visitor naming
        if original_node.name.value != self.name or not isinstance(updated_node.body, cst.IndentedBlock):
            return updated_node
        body = list(updated_node.body.body)
        fields = [i for i, stmt in enumerate(body) if isinstance(stmt, cst.SimpleStatementLine)
                  and isinstance(stmt.body[0], cst.AnnAssign)]
        if any(isinstance(body[i].body[0].target, cst.Name) and body[i].body[0].target.value == self.companion.slug
               for i in fields):
            return updated_node
        line = cst.parse_statement(f"{self.companion.slug}: bool = False\n")
        at = fields[-1] + 1 if fields else 0
        body.insert(at, line)
        return updated_node.with_changes(body=updated_node.body.with_changes(body=body))


class _CompanionEditor:
    """Edits the broadcasting method and ``__init__`` of the owner class."""

    def __init__(self, companion: Companion) -> None:
        self.companion = companion

    def transform(self, text: str, check_only: bool = False) -> str:
        module = cst.parse_module(text)
        owner = self.companion.owner_class.split(".")[-1]
        classes = [n for n in module.body if isinstance(n, cst.ClassDef) and n.name.value == owner]
        if len(classes) != 1:
            raise Refused(f"the class `{owner}` is not found once in the file")
        cls = classes[0]
        carrier = self.companion.carrier
        method = carrier.function.rsplit(".", 1)[-1]
        broadcaster = _method(cls, method)
        init = _method(cls, "__init__")
        if broadcaster is None:
            raise Refused(f"`{carrier.function}` is not a method of `{owner}` in this file")
        if init is None:
            raise Refused(f"`{owner}` has no `__init__` in this file to give `self.{self.companion.attribute}` "
                          "its value before the first broadcast")
        new_broadcaster = self._edit_broadcaster(broadcaster, module)
        if check_only:
            return text
        new_init = self._edit_init(init, module)
        new_cls = cls.with_deep_changes(cls.body, body=[
            new_broadcaster if stmt is broadcaster else new_init if stmt is init else stmt for stmt in cls.body.body
        ])
        return module.deep_replace(cls, new_cls).code

    def _edit_broadcaster(self, function: cst.FunctionDef, module: cst.Module) -> cst.FunctionDef:
        carrier, companion = self.companion.carrier, self.companion
        variable = carrier.variable
        factory_at = broadcast_at = None
        for owner, index, stmt in _statements(function):
            small = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 else None
            if isinstance(small, cst.Assign) and isinstance(small.value, cst.Call):
                targets = [t.target for t in small.targets]
                called = code_of(small.value.func)
                if any(isinstance(t, cst.Name) and t.value == variable for t in targets) and called == carrier.factory:
                    factory_at = (owner, index, stmt)
                elif called.endswith("." + carrier.collective) and small.value.args and \
                        code_of(small.value.args[0].value) == variable and len(targets) == 1 \
                        and isinstance(targets[0], cst.Name):
                    broadcast_at = (owner, index, stmt, targets[0].value)
        if factory_at is None:
            raise Refused(f"`{carrier.function}` does not build `{variable}` with `{carrier.factory}(...)` in a "
                          "statement of its own")
        if broadcast_at is None:
            raise Refused(f"the broadcast of `{variable}` in `{carrier.function}` is not a plain assignment")
        set_value = cst.parse_statement(f"{variable}.{companion.slug} = {companion.expression}\n",
                                        config=module.config_for_parsing)
        keep = cst.parse_statement(f"self.{companion.attribute} = {broadcast_at[3]}.{companion.slug}\n",
                                   config=module.config_for_parsing)
        inserts = {id(factory_at[0]): [(factory_at[1], set_value)]}
        inserts.setdefault(id(broadcast_at[0]), []).append((broadcast_at[1], keep))
        return _insert_after(function, inserts)

    def _edit_init(self, init: cst.FunctionDef, module: cst.Module) -> cst.FunctionDef:
        line = cst.parse_statement(f"self.{self.companion.attribute} = False\n", config=module.config_for_parsing)
        body = list(init.body.body)
        return init.with_changes(body=init.body.with_changes(body=body + [line]))


def _method(cls: cst.ClassDef, name: str) -> cst.FunctionDef | None:
    for stmt in cls.body.body:
        if isinstance(stmt, cst.FunctionDef) and stmt.name.value == name:
            return stmt
    return None


def _statements(function: cst.FunctionDef):
    """(block owner, index, statement) for every statement of the function, nested blocks included."""
    stack: list[cst.CSTNode] = [function.body]
    while stack:
        block = stack.pop()
        body = getattr(block, "body", ())
        for index, stmt in enumerate(body):
            yield block, index, stmt
            for child in _blocks_of(stmt):
                stack.append(child)


def _blocks_of(stmt: cst.CSTNode) -> list:
    found = []
    for name in ("body", "orelse", "finalbody"):
        value = getattr(stmt, name, None)
        if isinstance(value, cst.IndentedBlock):
            found.append(value)
        elif isinstance(value, (cst.Else, cst.Finally)):
            found.append(value.body)
        elif isinstance(value, cst.If):  # elif
            found.extend(_blocks_of(value) + [value.body])
    for handler in getattr(stmt, "handlers", ()) or ():
        found.append(handler.body)
    return found


class _InsertAfter(cst.CSTTransformer):
    def __init__(self, inserts: dict) -> None:
        super().__init__()
        self.inserts = inserts

    def on_leave(self, original_node, updated_node):  # type: ignore[override]
        wanted = self.inserts.get(id(original_node))
        if not wanted:
            return updated_node
        body = list(updated_node.body)
        for index, statement in sorted(wanted, key=lambda item: item[0], reverse=True):
            body.insert(index + 1, statement)
        return updated_node.with_changes(body=body)


def _insert_after(function: cst.FunctionDef, inserts: dict) -> cst.FunctionDef:
    return function.visit(_InsertAfter(inserts))
