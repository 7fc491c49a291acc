"""Consensus gate: branch on an agreed predicate instead of a rank-local one.

The controlling condition ``P`` of a branch, early exit or ``while`` loop is
replaced by a predicate every rank of the collectives' group agrees on,
written in the API the code already uses for that group.  The finding's fix
facts carry that agreement, rendered from the presets' template for the API
(:class:`cslint.model.Agreement`):

* TensorRT-LLM ``Distributed``-like objects: ``any(self.dist.tp_allgather(bool(P)))``
  (the receiver from the analysis, the group's allgather method from the preset);
* mpi4py: ``comm.allreduce(bool(P), op=MPI.LOR)`` on the same communicator
  (``from mpi4py import MPI`` is added when the module lacks it);
* torch.distributed: a one-element tensor reduced with ``ReduceOp.MAX`` over
  the same ``group=`` before the branch, then ``if bool(<flag>.item()):``; the
  tensor goes to ``<t>.device`` when the collective's tensor ``t`` is a
  parameter (NCCL needs device tensors), else it stays on the CPU (gloo).

Several collectives under one guard are agreed on once, over the smallest
group covering them (the presets' group lattice).  If any rank's ``P``
holds, every rank takes the branch (or the exit).  Ranks whose local ``P``
was false now run the guarded code too, so the rules label these fixes
unsafe: review that the guarded code copes with a rank that has nothing to
do.  Two kinds are agreed the other way round, holding on every rank: an
exit that leaves an event loop (the ranks leave together), and a branch
whose condition says a rank may act (``FixFacts.every_rank_may``: a
permission such as ``self._can_pause()``, which a rank that may not simply
skips), which the rules label safe: a rank held back takes the path a rank
that may not takes anyway.  The agreed predicate is the result of a collective, hence uniform, so a
re-lint reports nothing at the rewritten site.

The libcst command (``python -m libcst.tool codemod consensus_gate.ConsensusGateCommand PATH``)
is :mod:`codemods.consensus_gate`.
"""

from __future__ import annotations

import libcst as cst

from cslint.model import Agreement
from cslint.presets import (
    FLAG,
    PREDICATE,
    TENSOR,
    agreement_groups,
    agreement_template,
    covering_group,
    render_agreement,
)

from .locate import EXIT_TYPES, SourceIndex, block_of
from .neutral import code_of
from .sites import (
    Edit,
    FunctionScope,
    Plan,
    Refused,
    Site,
    binds,
    guard_top,
    parenthesize,
    split_uniform_operands,
    substitute,
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
    agreement, group = _agreement_for(sites, index)
    module = index.module
    test = guard.test
    if _already_agreed(test, agreement):
        raise Refused("the condition is already agreed through a collective; nothing to do")
    # `config and local`: only the rank-local part is agreed on, behind the configuration test, so
    # that no collective runs where the configuration alone decides (a feature that is off)
    kept, split_op = None, ""
    split = split_uniform_operands(test, sites[0], index) if not agreement.setup else None
    if split is not None:
        kept, test, split_op = split
    flag = scope.fresh("agreed_flag") if agreement.setup else ""
    device = torch_device(sites[0], scope)
    setup = agreement.setup_on_device if device and agreement.setup_on_device else agreement.setup
    if setup and isinstance(guard, cst.While):
        raise Refused("this API agrees through statements before the test; a `while` test would not re-run them")
    # An exit that leaves an event loop is agreed the other way round: the ranks leave together once
    # the condition holds on every rank (said as "not (any rank's `not P`)" where the API has no test for it).
    together = all(s.finding.guard_kind == "early-exit" and s.finding.fix_facts.leaves_unbounded_loop for s in sites)
    callers_loop = together and all(s.finding.fix_facts.ends_callers_loop for s in sites)
    # A branch whose condition says a rank may act (a permission) runs only where every rank may.
    every = all(s.finding.guard_kind == "branch" and s.finding.fix_facts.every_rank_may for s in sites)
    on_every_rank = together or every
    template_test = agreement.all_test if on_every_rank and agreement.all_test else agreement.test
    negate = on_every_rank and not agreement.all_test
    predicate = parenthesize(test)
    if negate:
        predicate = cst.UnaryOperation(operator=cst.Not(), expression=cst.parse_expression(f"({code_of(test)})"))
    names = {PREDICATE: predicate, FLAG: cst.Name(flag or "agreed_flag"), TENSOR: cst.Name(device or "t")}
    pre: list[cst.BaseStatement] = []
    for line in setup:
        statement = cst.parse_statement(line + "\n", config=module.config_for_parsing)
        pre.append(substitute(statement, names))
    if pre:
        pre[0] = pre[0].with_changes(leading_lines=guard.leading_lines)
    agreed = substitute(cst.parse_expression(template_test, config=module.config_for_parsing), names)
    if negate:
        agreed = cst.UnaryOperation(operator=cst.Not(), expression=parenthesize(agreed))
    if kept is not None:
        operator = cst.And() if split_op == "and" else cst.Or()
        agreed = cst.BooleanOperation(left=parenthesize(kept), operator=operator, right=agreed)
    imports = [line for line in agreement.imports if not binds(index, _bound_name(line))]
    new_guard = guard.with_changes(test=agreed)
    if pre:
        new_guard = new_guard.with_changes(leading_lines=[])
    lines = sorted({s.finding.line for s in sites})
    what = {"early-exit": "exit", "branch": "branch", "loop": "loop"}.get(sites[0].finding.guard_kind, "branch")
    shown = "; ".join(list(setup) + [("not " if negate else "") + template_test])
    shown = shown.replace(PREDICATE, "not P" if negate else "P").replace(FLAG, flag or "flag")
    shown = shown.replace(TENSOR, device or "t")
    reason = (
        f"consensus over {group}: `{code_of(test)}` (P) is agreed with `{shown}` before the {what}, "
        + ("which the ranks take together once every rank's condition holds (a rank whose own condition holds "
           + ("goes on with the rest of the function, idle, and its caller stays in its event loop" if callers_loop
              else "runs the loop's passes, idle,") + " until then); " if together else
           "which the ranks take only where it holds on every rank (it says a rank may act: a rank that may "
           "but is held back takes the path of a rank that may not); " if every else
           "which every rank takes when any rank's condition holds; ")
        + "covers collective "
        f"line{'s' if len(lines) > 1 else ''} {', '.join(map(str, lines))}"
        + (f"; the configuration test `{code_of(kept)}` is kept in front, so nothing is agreed where it decides"
           if kept is not None else "")
        + "; cost: one more collective each time this runs"
    )
    edit = Edit(owner=owner, start=gi, end=gi + 1, new=pre + [new_guard], replaced=[guard], imports=imports)
    effect = (f"every rank of {group} {'that passes `' + code_of(kept) + '` ' if kept is not None else ''}"
              f"first agrees on `{code_of(test)}` (one more collective each time this runs), then "
              + ((f"all return together once it holds on every rank (their caller then leaves its event loop); "
                  f"until then a rank for which it holds runs the rest of the function with nothing to do")
                 if callers_loop else
                 (f"all leave the loop together once it holds on every rank; until then a rank for which it holds "
                  f"runs the passes with nothing to do") if together else
                 f"all take the {what} only where it holds on every rank, or all go on" if every else
                 f"all take the {what} when any rank's condition holds, or all go on"))
    return Plan(edit=edit, strategy="consensus", safe=every, reason=reason, effect=effect)


def _agreement_for(sites: list[Site], index: SourceIndex) -> tuple[Agreement, str]:
    """One agreement for every collective the guarded calls reach, and its group.

    The group covers every collective the guard decides, those reached
    through the guarded calls included (an agreement over a smaller group
    leaves the others' ranks apart).  Where the module already reduces with
    its own op enum, the preset's preferred template says it in that idiom.
    """
    facts = [s.finding.fix_facts for s in sites]
    if any(f is None or f.agreement is None for f in facts):
        raise Refused("no way to agree on the condition is known for the guarded collective's API")
    templates = {f.agreement.template for f in facts}
    receivers = {f.receiver for f in facts}
    if len(templates) != 1 or len(receivers) != 1:
        raise Refused("the guarded collectives use several APIs or communicators "
                      f"({', '.join(sorted(receivers))})")
    template, receiver = templates.pop(), receivers.pop()
    groups = {s.finding.group for s in sites} | {g for f in facts for g in f.reached_groups}
    group = next(iter(groups)) if len(groups) == 1 else None
    agreement = facts[0].agreement if group == sites[0].finding.group and len({s.finding.group for s in sites}) == 1 \
        else None
    if group is None:
        candidates = agreement_groups(template)
        group = covering_group(groups, candidates) if candidates else None
        if group is None:
            raise Refused(f"the guarded collectives span several groups ({', '.join(sorted(groups))}) that "
                          "no single agreement covers")
    if agreement is None:
        agreement = render_agreement(template, receiver, group, facts[0].group_expr if group == sites[0].finding.group
                                     else "")
    if agreement is None:
        raise Refused(f"no agreement over {group} is known for `{receiver}`")
    found = agreement_template(template)
    for name in (found.preferred if found is not None else ()):
        preferred = agreement_template(name)
        if preferred is not None and preferred.requires_name and binds(index, preferred.requires_name):
            rendered = render_agreement(name, receiver, group, "")
            if rendered is not None:
                return rendered, group
    return agreement, group


def _already_agreed(test: cst.BaseExpression, agreement: Agreement) -> bool:
    """Whether the test already has the agreement's shape, ``any(x.tp_allgather(bool(...)))``."""
    if agreement.setup:
        return False  # the agreed test of such an API only reads a flag
    head = agreement.test.split(PREDICATE, 1)[0]
    return bool(head) and code_of(test).startswith(head)


def _bound_name(import_line: str) -> str:
    """The name an import statement binds (``from mpi4py import MPI`` -> ``MPI``)."""
    statement = cst.parse_statement(import_line + "\n")
    small = statement.body[0]
    alias = small.names[0]
    if alias.asname is not None:
        return alias.asname.name.value
    name = alias.name
    while isinstance(name, cst.Attribute):
        name = name.value
    return name.value if isinstance(small, cst.Import) else alias.name.value


def torch_device(site: Site, scope: FunctionScope) -> str | None:
    """A parameter holding the collective's tensor, whose `.device` a new tensor can share.

    Only a parameter is sure to be bound where the guard is evaluated.
    """
    payload = site.finding.fix_facts.payload if site.finding.fix_facts else None
    function = scope.function
    if payload is None or not payload.text.isidentifier() or not isinstance(function, cst.FunctionDef):
        return None
    params = function.params
    every = [*params.posonly_params, *params.params, *params.kwonly_params]
    return payload.text if any(p.name.value == payload.text for p in every) else None
