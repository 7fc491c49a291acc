"""Consensus gate: branch on an agreed predicate instead of a rank-local one.

The controlling condition ``P`` of a branch, early exit or ``while`` loop is
replaced by a predicate every rank of the collectives' group agrees on, written
in the API the code already uses for that group:

* TensorRT-LLM ``Distributed``-like objects: ``any(self.dist.tp_allgather(bool(P)))``
  (the receiver and the group's allgather method come from the finding's
  collective: ``tp_allgather``, ``pp_allgather``, ``cp_allgather``, ``allgather``...);
* mpi4py: ``comm.allreduce(bool(P), op=MPI.LOR)`` on the same communicator
  (``from mpi4py import MPI`` is added when the module lacks it);
* torch.distributed: a one-element tensor reduced with ``ReduceOp.MAX`` over
  the same ``group=`` before the branch, then ``if bool(<flag>.item()):``; the
  tensor goes to ``<t>.device`` when the collective's tensor ``t`` is a
  parameter (NCCL needs device tensors), else it stays on the CPU (gloo).

If any rank's ``P`` holds, every rank takes the branch (or the exit).  Ranks
whose local ``P`` was false now run the guarded code too, so these fixes are
labelled unsafe: review that the guarded code copes with a rank that has
nothing to do.  The agreed predicate is the result of a collective, hence
uniform, so a re-lint reports nothing at the rewritten site.

Run standalone with ``python -m libcst.tool codemod consensus_gate.ConsensusGateCommand PATH``
from the repository root.
"""

from __future__ import annotations

import os
import re

import libcst as cst
from libcst.codemod import VisitorBasedCodemodCommand

from .locate import EXIT_TYPES, SourceIndex, block_of, dotted_name
from .neutral import code_of
from .sites import (
    TRTLLM_ALLGATHER,
    Edit,
    FunctionScope,
    Plan,
    Refused,
    Site,
    expression,
    guard_top,
    statement,
)


def consensus_guard(site: Site) -> tuple[cst.CSTNode, cst.CSTNode, int]:
    """(the If/While whose test becomes agreed, its block owner, its index)."""
    kind = site.finding.guard_kind
    if site.guard_path is None:
        raise Refused("the finding has no controlling statement")
    guard = site.guard_path[-1]
    if kind == "early-exit":
        owner, gi, _, depth = guard_top(site)
        top = site.guard_path[depth]
        if not isinstance(top, cst.If):
            raise Refused(f"the exit is not under an `if` in the collective's block (found `{type(top).__name__}`)")
        if isinstance(guard, EXIT_TYPES):
            nearest = next((n for n in reversed(site.guard_path[:-1]) if isinstance(n, (cst.If, cst.Else))), None)
            if nearest is not top:
                raise Refused("the exit sits in a nested or `else` branch; agreeing on the outer test would not decide it")
        return top, owner, gi
    if kind == "branch":
        if not isinstance(guard, cst.If):
            raise Refused(f"the controlling statement is not an `if` (found `{type(guard).__name__}`)")
        return guard, *_in_block(site.guard_path)
    if kind == "loop":
        if isinstance(guard, cst.While):
            return guard, *_in_block(site.guard_path)
        raise Refused("a `for` loop's trip count comes from its iterable; agreeing on it needs a hand-written fix")
    if kind == "exception":
        raise Refused("exception paths are not rewritten automatically: agree on the local work's success "
                      "before the collective (see `cslint explain CSL104`)")
    raise Refused(f"`{kind or 'unknown'}` guards have no automatic fix")


def _in_block(path) -> tuple[cst.CSTNode, int]:
    try:
        return block_of(path, len(path) - 1)
    except Exception as exc:
        raise Refused("the guard is an `elif`; the earlier tests of its chain decide whether it runs") from exc


def plan_consensus(sites: list[Site], index: SourceIndex, scope: FunctionScope) -> Plan:
    """Plan the consensus rewrite of the guard shared by ``sites``."""
    guard, owner, gi = consensus_guard(sites[0])
    for site in sites[1:]:
        if consensus_guard(site)[0] is not guard:
            raise Refused("the findings do not share one guard")
    groups = {s.finding.group for s in sites}
    apis = {s.finding.api for s in sites}
    if len(apis) != 1:
        raise Refused(f"the guarded collectives use several APIs ({', '.join(sorted(apis))})")
    api = apis.pop()
    group = covering_group(groups) if api == "trtllm" else (groups.pop() if len(groups) == 1 else None)
    if group is None:
        raise Refused(f"the guarded collectives span several groups ({', '.join(sorted(groups))})")
    module = index.module
    test = guard.test
    if _already_agreed(test):
        raise Refused("the condition is already agreed through a collective; nothing to do")
    imports: list[str] = []
    pre: list[cst.BaseStatement] = []
    receiver = communicator(sites[0], index)
    if api == "trtllm":
        method = TRTLLM_ALLGATHER.get(group)
        if method is None:
            raise Refused(f"no allgather method known for group `{group}`")
        agreed = cst.Call(
            func=cst.Name("any"),
            args=[cst.Arg(cst.Call(func=expression(f"{receiver}.{method}", module),
                                   args=[cst.Arg(_bool_of(test))]))],
        )
        shown = f"any({receiver}.{method}(bool(P)))"
    elif api == "mpi":
        agreed = cst.Call(
            func=expression(f"{receiver}.allreduce", module),
            args=[cst.Arg(_bool_of(test)), cst.Arg(keyword=cst.Name("op"), value=expression("MPI.LOR", module),
                                                     equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))],
        )
        if not _binds(index, "MPI"):
            imports.append("from mpi4py import MPI")
        shown = f"{receiver}.allreduce(bool(P), op=MPI.LOR)"
    elif api == "torch":
        if isinstance(guard, cst.While):
            raise Refused("a torch consensus needs statements before the test; a `while` test would not re-run them")
        flag = scope.fresh("agreed_flag")
        group_arg = torch_group(sites[0], index)
        group_text = f", group={group_arg}" if group_arg else ""
        tensor_args = [cst.Arg(cst.List([cst.Element(
            cst.IfExp(test=_paren(test), body=cst.Integer("1"), orelse=cst.Integer("0")))]))]
        device = torch_device(sites[0], scope)
        if device:  # NCCL reduces device tensors only: put the flag where the collective's tensor lives
            tensor_args.append(cst.Arg(keyword=cst.Name("device"), value=expression(f"{device}.device", module),
                                       equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))))
        tensor = cst.Call(func=expression("torch.tensor", module), args=tensor_args)
        pre.append(cst.SimpleStatementLine(
            body=[cst.Assign(targets=[cst.AssignTarget(cst.Name(flag))], value=tensor)],
            leading_lines=guard.leading_lines,
        ))
        pre.append(statement(f"{receiver}.all_reduce({flag}, op={receiver}.ReduceOp.MAX{group_text})\n", module))
        agreed = expression(f"bool({flag}.item())", module)
        if not _binds(index, "torch"):
            imports.append("import torch")
        shown = f"{receiver}.all_reduce(<flag>, op={receiver}.ReduceOp.MAX{group_text})"
    else:
        raise Refused(f"the collective's API is `{api or 'unknown'}`; no consensus idiom is known for it")

    new_guard = guard.with_changes(test=agreed)
    if pre:
        new_guard = new_guard.with_changes(leading_lines=[])
    lines = sorted({s.finding.line for s in sites})
    what = {"early-exit": "exit", "branch": "branch", "loop": "loop"}.get(sites[0].finding.guard_kind, "branch")
    reason = (
        f"consensus over {group}: `{code_of(test)}` is agreed with `{shown}` before the {what}; "
        f"the {what} is taken on every rank when any rank's condition holds, so ranks whose own condition "
        f"was false now take it too (unsafe: review); covers collective line{'s' if len(lines) > 1 else ''} "
        f"{', '.join(map(str, lines))}"
    )
    edit = Edit(owner=owner, start=gi, end=gi + 1, new=pre + [new_guard], replaced=[guard], imports=imports)
    return Plan(edit=edit, strategy="consensus", safe=False, reason=reason)


def covering_group(groups: set[str]) -> str:
    """The smallest group every rank of all ``groups`` belongs to (TensorRT-LLM names).

    Agreeing over a larger group is still an agreement for each smaller one,
    provided every rank of the larger group reaches the guard -- true of SPMD
    executor loops, where all ranks run the same code.
    """
    if len(groups) == 1:
        return next(iter(groups))
    if groups <= {"tp", "cp", "tp_cp"}:
        return "tp_cp"
    return "world"


def _already_agreed(test: cst.BaseExpression) -> bool:
    """`any(x.tp_allgather(bool(P)))`, `comm.allreduce(bool(P), op=MPI.LOR)`, `bool(flag.item())`."""
    if isinstance(test, cst.Call) and isinstance(test.func, cst.Name) and test.func.value == "any" and test.args:
        inner = test.args[0].value
        return isinstance(inner, cst.Call) and dotted_name(inner.func).rsplit(".", 1)[-1] in TRTLLM_ALLGATHER.values()
    if isinstance(test, cst.Call) and dotted_name(test.func).endswith(".allreduce"):
        return any(a.keyword is not None and a.keyword.value == "op" and code_of(a.value) == "MPI.LOR" for a in test.args)
    return False


def _paren(expr: cst.BaseExpression) -> cst.BaseExpression:
    if expr.lpar or isinstance(expr, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)):
        return expr
    return expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def _bool_of(test: cst.BaseExpression) -> cst.Call:
    return cst.Call(func=cst.Name("bool"), args=[cst.Arg(test)])


def _binds(index: SourceIndex, name: str) -> bool:
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


def _line_text(index: SourceIndex, path: str, line: int, own_path: str) -> str:
    if os.path.abspath(path) == os.path.abspath(own_path):
        return index.line_text(line)
    else:
        try:
            with open(path, encoding="utf-8") as handle:
                lines = handle.read().splitlines()
        except OSError:
            return ""
    return lines[line - 1] if 0 < line <= len(lines) else ""


def _collective_line(site: Site, index: SourceIndex, same_file_only: bool = False) -> str:
    for link in site.finding.chain:
        if link.kind == "collective":
            if same_file_only and os.path.abspath(link.path) != os.path.abspath(site.finding.path):
                continue
            return _line_text(index, link.path, link.line, site.finding.path)
    return ""


def _group_receivers(index: SourceIndex, group: str) -> list[str]:
    """Receivers of this group's methods in the finding's own file, most used first."""
    prefix = "" if group == "world" else f"{group}_"
    methods = r"(?:allgather|allreduce|broadcast|gather|barrier)" if not prefix else rf"{prefix}\w+"
    pattern = re.compile(rf"(self(?:\.\w+)+)\.{methods}\s*\(")
    counts: dict[str, int] = {}
    for text in index.lines():
        for match in pattern.finditer(text):
            counts[match.group(1)] = counts.get(match.group(1), 0) + 1
    return sorted(counts, key=lambda r: -counts[r])


def communicator(site: Site, index: SourceIndex) -> str:
    """Receiver text of the collective: `self.dist`, `comm`, `dist`...

    A direct call names it (`self.dist.tp_allgather` -> `self.dist`).  For a
    wrapper (`self._can_queue(batch)`), the chain's collective link names the
    real collective's line; its receiver is used when it lies in the same
    file.  Otherwise -- the wrapper lives in another class, whose `self` is
    another object -- the receiver this file uses most for the group's
    methods is taken (`self.dist` for `self.dist.pp_broadcast(...)`).
    """
    finding = site.finding
    callee = finding.callee or dotted_name(site.call.func)
    head, _, last = callee.rpartition(".")
    if last == finding.collective and head:
        return head
    text = _collective_line(site, index, same_file_only=True)
    match = re.search(rf"([A-Za-z_][\w.]*)\.{re.escape(finding.collective)}\s*\(", text)
    if match is not None and (match.group(1).split(".")[0] != "self" or callee.startswith("self.")):
        return match.group(1)
    if finding.api == "trtllm":
        receivers = _group_receivers(index, finding.group)
        if receivers:
            return receivers[0]
    raise Refused(f"cannot tell which communicator `{callee}` uses from this call site")


def torch_group(site: Site, index: SourceIndex) -> str | None:
    """The `group=` argument of the torch collective, as text, if it has one."""
    finding = site.finding
    callee = finding.callee or dotted_name(site.call.func)
    if callee.rpartition(".")[2] == finding.collective:
        for arg in site.call.args:
            if arg.keyword is not None and arg.keyword.value == "group":
                return code_of(arg.value)
        return None
    match = re.search(r"group\s*=\s*([\w.\[\]]+)", _collective_line(site, index))
    return match.group(1) if match else None


def torch_device(site: Site, scope: FunctionScope) -> str | None:
    """A parameter holding the collective's tensor, whose `.device` the flag tensor can share.

    Only a parameter is sure to be bound where the guard is evaluated.
    """
    call = site.call
    positional = [a for a in call.args if a.keyword is None]
    function = scope.function
    if not positional or not isinstance(positional[0].value, cst.Name) or not isinstance(function, cst.FunctionDef):
        return None
    name = positional[0].value.value
    params = function.params
    every = [*params.posonly_params, *params.params, *params.kwonly_params]
    return name if any(p.name.value == name for p in every) else None


class ConsensusGateCommand(VisitorBasedCodemodCommand):
    DESCRIPTION = (
        "cslint consensus gate: replace a rank-local branch/exit condition by one agreed over the "
        "collectives' group (allgather/allreduce of the local predicate)."
    )

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        from .driver import run_command_on_module

        return run_command_on_module(self, tree, strategy="consensus", exit_mode="keep-local")
