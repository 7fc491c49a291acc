"""The rule base class: one rule is one small class that owns its finding.

The analysis reports *hazards* (a collective, or a call that reaches one,
whose execution depends on rank-local state).  A rule decides which hazards
it reports (:meth:`Rule.reports`), and owns everything a finding says about
them: the message, the chain notes, the fix strategies that apply with their
safe/unsafe labels, and why there is no automatic fix when none applies.
``cslint check`` prints the strategies and ``cslint fix`` applies them, both
from :meth:`Rule.fix_options`, so the two cannot disagree.

Examples, Fixit style: every ``VALID`` snippet gives no finding of the rule's
code; every ``INVALID`` one (an :class:`Invalid`) gives one with the expected
message, and ``cslint fix --unsafe-fixes`` turns it into the expected source
with the expected label.  ``tests/test_rules.py`` runs them through the whole
engine and the codemods; ``tests/test_fix_behaviour.py`` runs every safe fix
among them on real ranks.
"""

from __future__ import annotations

from typing import Callable, ClassVar, NamedTuple, Optional

from ..model import (
    Agreement,
    Carrier,
    ChainLink,
    Confidence,
    Doubt,
    FixFacts,
    FixHint,
    FixOption,
    Finding,
    Neutral,
    Payload,
    Span,
    UpstreamRef,
)
from ..presets import (ALL_DIMS, KIND_DEVICE_ID, neutral_table, permission_test, render_agreement,
                       render_single_rank_test)
from .rootcause import READ_DOWNSTREAM

ALWAYS_ENTER = "always-enter"
PROPAGATE = "propagate"
CONSENSUS = "consensus"
EXIT_MODES = ("keep-local", "decide-from-gathered")


class Scenario(NamedTuple):
    """Inputs under which ``takes`` (rank numbers) reach the guarded collective."""

    setup: str  # statements run on every rank before the call; `rank` and `world` are bound
    takes: tuple


class Behaviour(NamedTuple):
    """How to run an example on real ranks (``tests/test_fix_behaviour.py``).

    ``call`` runs on every rank after a scenario's setup; ``observe`` is the
    value compared between the fixed program and the original one (with its
    collectives confined to the ranks that reach them).  ``backend``:
    ``gloo`` (torch.distributed) or ``mpi`` (mpi4py: ``comm`` is bound).
    """

    call: str
    observe: str
    scenarios: tuple
    backend: str = "gloo"


class Invalid(NamedTuple):
    """An example the rule flags: the expected message and what the fix does.

    ``fixed`` is the source after ``cslint fix --unsafe-fixes`` (None: no fix
    applies, ``refused`` is then part of the reason); ``label`` is ``safe``
    or ``unsafe``.  A safe fix must come with a :class:`Behaviour`.
    """

    code: str
    message: str
    fixed: Optional[str] = None
    label: str = ""
    refused: str = ""
    behaviour: Optional[Behaviour] = None


class Rule:
    CODE: ClassVar[str] = ""
    NAME: ClassVar[str] = ""
    SUMMARY: ClassVar[str] = ""
    DOC: ClassVar[str] = ""
    KIND: ClassVar[Optional[str]] = None  # the hazard kind this rule reports
    VALID: ClassVar[list] = []
    INVALID: ClassVar[list] = []
    #: extra [tool.cslint] presets the examples need (added to the defaults)
    EXAMPLE_PRESETS: ClassVar[list] = []
    #: how the chain's condition step reads (``{text}``: the condition, ``{exit}``: the exit)
    CONDITION_NOTE: ClassVar[str] = ""
    #: the fix strategies that can apply, preferred first
    STRATEGIES: ClassVar[tuple] = ()
    #: why there is no automatic fix, when no strategy applies
    NO_FIX: ClassVar[str] = ""

    # -- decision and wording ---------------------------------------------------------
    @classmethod
    def reports(cls, hazard) -> bool:
        """Whether this rule reports the hazard."""
        return cls.KIND is not None and hazard.kind == cls.KIND

    @classmethod
    def message(cls, hazard) -> str:  # pragma: no cover - overridden
        raise NotImplementedError

    @classmethod
    def condition_note(cls, cond) -> str:
        """How the chain's condition step reads for this rule (after "the call ")."""
        return cls.CONDITION_NOTE.format(text=cond.text, exit=cond.exit_text or "an exit")

    @classmethod
    def chain(cls, hazard) -> list:
        """The "why" steps: the collective, the calls down to it, the
        condition, the flows and the rank-local source."""
        site, path = hazard.site, hazard.path
        links: list = []
        if hazard.direct:
            links.append(ChainLink(path, site.span.line, f"`{site.callee}` is a collective over {hazard.group}",
                                   "collective"))
        else:
            links.append(ChainLink(path, site.span.line, f"`{site.callee}()` leads to a collective", "call"))
            for link_path, line, note in hazard.reach_chain:
                # the analysis words the collective's own step "... is a collective over ..."
                kind = "collective" if "is a collective" in note else "call"
                links.append(ChainLink(link_path or path, line, note, kind))
        cond = hazard.cond
        note = cls.condition_note(cond)
        links.append(ChainLink(getattr(hazard, "cond_path", "") or path, cond.line, f"the call {note}", "condition"))
        for link_path, line, note in reversed(hazard.via):
            links.append(ChainLink(link_path, line, note, "flow"))
        source = hazard.source
        links.append(ChainLink(source.path, source.line,
                               f"`{source.text}` is {_article(source.kind)}: {_dims_phrase(hazard.source_dims)}",
                               "source"))
        return links

    # -- fixes --------------------------------------------------------------------------
    @classmethod
    def fix_options(cls, finding: Finding, exit_mode: str = "keep-local") -> tuple:
        """The strategies that apply to ``finding``, preferred first, each
        with its label: the one truth for ``check``'s hint and ``fix``."""
        facts = finding.fix_facts
        if facts is None:
            return ()
        found = (_STRATEGY_CHECKS[strategy](finding, facts, exit_mode) for strategy in cls.STRATEGIES)
        return tuple(option for option in found if isinstance(option, FixOption))

    @classmethod
    def why_not(cls, finding: Finding, strategy: str, exit_mode: str = "keep-local") -> str:
        """Why ``strategy`` does not apply to ``finding`` ("" when it does)."""
        if strategy not in cls.STRATEGIES:
            return cls.NO_FIX or f"{cls.CODE} findings have no {strategy} fix"
        if finding.fix_facts is None and finding.condition_function:
            return (f"the condition is in `{finding.condition_function}`, where it differs only through what this "
                    "call passes: no rewrite of this call agrees it (agree the argument before the call, or fix "
                    f"`{finding.condition_function}` by hand)")
        if finding.fix_facts is None:
            return "the finding carries no fix facts; re-run `cslint check`"
        found = _STRATEGY_CHECKS[strategy](finding, finding.fix_facts, exit_mode)
        return "" if isinstance(found, FixOption) else found

    @classmethod
    def no_fix_reason(cls, finding: Finding, exit_mode: str = "keep-local") -> str:
        """Why :meth:`fix_options` offers nothing for ``finding``."""
        if not cls.STRATEGIES:
            return cls.NO_FIX or f"{cls.CODE} findings have no automatic fix"
        return "; ".join(dict.fromkeys(cls.why_not(finding, s, exit_mode) for s in cls.STRATEGIES))

    # -- confidence ------------------------------------------------------------------------
    #: how many functions between a call and its collective make the reach a weak doubt
    LONG_REACH = 3
    #: source kinds that rarely decide control flow on their own: an object
    #: built with a device id differs per rank in that id only
    WEAK_SOURCE_KINDS = frozenset({KIND_DEVICE_ID})

    @classmethod
    def doubts(cls, hazard) -> list:
        """Why the analysis may be wrong about ``hazard``, from its facts."""
        found = []
        for agreed in hazard.agreed:
            where = f"`{agreed.call}` (line {agreed.line})"
            if agreed.stored:
                found.append(Doubt("agreed-stored", False,
                                   f"the value was agreed by `{agreed.collective}` over {agreed.group} in {where} and "
                                   "kept in a field: it stays agreed only while every rank stores it at the same "
                                   "point of the pass"))
            else:
                found.append(Doubt("agreed", True,
                                   f"the value comes out of {where}, which reaches `{agreed.collective}` over "
                                   f"{agreed.group}: it may already be the same on every rank"))
            break  # the first call on the flow says it
        if hazard.constructed or hazard.source.kind in cls.WEAK_SOURCE_KINDS:
            found.append(Doubt("constructed", True,
                               f"the flow goes through an object built from `{hazard.source.text}`; the analysis "
                               "does not tell that object's other fields from the argument"))
        if hazard.modes and hazard.conditional_reach:
            found.append(Doubt("mode-path", True,
                               f"the collective is reached only with {', '.join(hazard.modes)}, and inside the "
                               "called functions only on some paths, which the analysis does not relate to this "
                               "call's path"))
        other_loop = getattr(hazard, "other_loop", None)
        if other_loop:
            found.append(Doubt("other-loop", True,
                               f"the value reaches the condition through `{other_loop[0]}`, which only "
                               f"`{other_loop[1]}` writes, another event loop than this one: an executor runs "
                               "one of its loops, picked by configuration, and the analysis does not relate "
                               "the two"))
        upstream = getattr(hazard, "upstream", None)
        if upstream and upstream[5:]:
            found.append(Doubt("reported-upstream", True,
                               f"the value reaches the condition through `{upstream[0]}`, set where the condition at "
                               f"line {upstream[5]} parts the ranks (its own call runs only in calling contexts that "
                               f"agree on it); the finding at line {upstream[2]} reads the same divergence and is "
                               "reported: this condition reads it downstream"))
        elif upstream:
            found.append(Doubt("reported-upstream", True,
                               f"the value reaches the condition through `{upstream[0]}`, set "
                               f"{'past the early exit' if upstream[4:] and upstream[4] else 'inside the condition'} "
                               f"at line {upstream[1]}, which may differ over the group and is reported itself (the "
                               f"call at line {upstream[2]}): this condition reads that divergence downstream"))
        if getattr(hazard, "downstream_only", False):
            found.append(Doubt(READ_DOWNSTREAM, True,
                               "every flow that makes the condition differ goes through fields set where conditions "
                               "reported themselves part the ranks: the root-cause report leaves this finding out (`--report "
                               "per-site` shows it)"))
        if hazard.flow_cut:
            found.append(Doubt("flow-cut", True,
                               f"the flow from `{hazard.source.text}` to the condition has more steps than the "
                               f"explanation keeps ({len(hazard.via)}); the steps that decide it are not shown"))
        calls = 0 if hazard.direct else len(hazard.reach_chain) - 1
        if calls >= cls.LONG_REACH:
            found.append(Doubt("long-chain", False,
                               f"the collective is {calls} calls away; each call's reach keeps only the "
                               "configuration its constant arguments rule out, not the rest of its path conditions"))
        return found

    @classmethod
    def confidence(cls, hazard) -> Confidence:
        """``high`` without doubts, ``medium`` with weak ones only, ``low``
        with a strong one (see :class:`cslint.model.Confidence`)."""
        return Confidence.of(cls.doubts(hazard))

    # -- hazard -> finding ----------------------------------------------------------------
    @classmethod
    def build_finding(cls, hazard, text_of: Callable[[Span], str] = lambda span: "") -> Finding:
        """The finding of a hazard this rule reports.  ``text_of`` slices
        source text by span (the payload argument's text)."""
        site, cond = hazard.site, hazard.cond
        finding = Finding(
            code=cls.CODE,
            path=hazard.path,
            line=site.span.line,
            column=site.span.column,
            end_line=site.span.end_line,
            end_column=site.span.end_column,
            message=cls.message(hazard) + (
                f" (the condition is in `{hazard.cond_function}`, where it differs only through what this call passes)"
                if getattr(hazard, "cond_path", "") else ""),
            collective=hazard.collective,
            group=hazard.group,
            chain=cls.chain(hazard),
            function=hazard.function,
            condition=cond.text,
            guard_kind=hazard.kind,
            guard=cond.guard,
            callee=site.callee,
            api=hazard.api if hazard.api in ("trtllm", "torch", "mpi") else "unknown",
            source=hazard.source.text,
            # reported at a caller, the condition is in another function: no rewrite of this site agrees it
            fix_facts=None if getattr(hazard, "cond_path", "") else fix_facts(hazard, text_of),
            confidence=cls.confidence(hazard),
            condition_function=hazard.cond_function if getattr(hazard, "cond_path", "") else "",
            upstream=_upstream_ref(hazard),
        )
        finding.fix = FixHint.of(cls.fix_options(finding))
        return finding


def _upstream_ref(hazard) -> Optional[UpstreamRef]:
    """The typed reference to the reported guard whose divergence the
    hazard's condition reads downstream (``Hazard.upstream``), or None."""
    upstream = getattr(hazard, "upstream", None)
    if not upstream:
        return None
    text, guard_line, line, path = upstream[:4]
    return UpstreamRef(path, guard_line, line, text)


def fix_facts(hazard, text_of: Callable[[Span], str]) -> FixFacts:
    """The typed fix facts of a hazard: the analysis' call facts, rendered
    with the presets' agreement and neutral-value templates."""
    site, cond = hazard.site, hazard.cond
    own = site.fix  # the call at the finding: its payload argument
    reached = hazard.collective_facts  # the collective, as this function names it
    payload = None
    if own is not None and own.payload is not None:
        payload = Payload(text_of(own.payload), own.payload, own.payload_keyword, own.payload_effects,
                          own.payload_numeric)
    api = hazard.api if hazard.api in ("trtllm", "torch", "mpi") else "unknown"
    receiver = reached.receiver if reached is not None else ""
    group_expr = reached.group_expr if reached is not None else ""
    agreement = render_agreement(reached.agreement, receiver, hazard.group, group_expr) if reached else None
    join, neutral = "", None
    if hazard.direct and own is not None:
        table = neutral_table(own.join)
        if table is not None:
            identity = table.identity(own.op)
            join = "identity"
            neutral = Neutral(identity, table.imports, table.numeric_payload) if identity else None
        else:
            join = own.join
    elif not hazard.direct and reached is not None:
        join = reached.join
    operator = getattr(cond, "operator", "")
    divergent = getattr(hazard, "operands_divergent", ())
    operands = getattr(cond, "operands", ())
    uniform = tuple(span for (span, _atoms, _presence), differs in zip(operands, divergent) if not differs)
    presence = getattr(cond, "presence", None)
    local = [entry for entry, differs in zip(operands, divergent) if differs]
    if presence is None and len(local) == 1:
        presence = local[0][2]  # the one operand a consensus would agree on
    # a `return` of nothing that a caller leaves its event loop on leaves that loop (through the caller)
    ends_loop = getattr(hazard, "ends_callers_event_loop", False)
    # an exception is no rank that is done with the loop: the ranks raise together as soon as one must,
    # rather than wait (idle) until it must on every rank
    raises = getattr(cond, "exit_text", "").startswith("raise") or getattr(cond, "statement", "") == "assert"
    agreed_by = next((f"`{a.call}` (line {a.line}), which reaches `{a.collective}` over {a.group}"
                      for a in getattr(hazard, "agreed", ())), "")
    # a branch whose rank-local part says this rank may act (a permission) runs only where every rank may
    whole = getattr(cond, "text", "")
    local_texts = [text_of(entry[0]) for entry in local] if local else [whole] if whole and not operands else []
    every_rank_may = getattr(hazard, "kind", "") == "branch" and bool(local_texts) and operator in ("", "and") \
        and all(permission_test(text) is True for text in local_texts)
    return FixFacts(receiver=receiver, group_expr=group_expr, api=api, payload=payload, agreement=agreement,
                    direct=hazard.direct, join=join, neutral=neutral, statement=getattr(cond, "statement", ""),
                    leaves_loop=getattr(cond, "leaves_loop", False) or ends_loop, region=hazard.region_collectives,
                    reached_groups=tuple(getattr(hazard, "reached_groups", ())), operator=operator if uniform else "",
                    uniform_operands=uniform, agreed_by=agreed_by, presence=presence,
                    leaves_unbounded_loop=(getattr(cond, "leaves_unbounded_loop", False) and not raises) or ends_loop,
                    ends_callers_loop=ends_loop,
                    result_decides_callers=getattr(hazard, "result_decides_callers", False),
                    other_exits=tuple(
                        (other.guard, other.text,
                         tuple(span for (span, _atoms, _presence), differs in zip(other.operands, divergent)
                               if not differs), other.operator)
                        for other, divergent in getattr(hazard, "other_exits", ())),
                    carrier=_carrier(hazard, text_of), every_rank_may=every_rank_may)


def _carrier(hazard, text_of: Callable[[Span], str]):
    """The analysis' schedule carrier as fix facts (the broadcast's payload named by its text)."""
    found = getattr(hazard, "carrier", None)
    if found is None or found.path != hazard.path:
        return None
    variable = text_of(found.site.fix.payload)
    if not variable.isidentifier():
        return None
    reached = hazard.collective_facts
    receiver = found.site.fix.receiver
    agreement = reached.agreement if reached is not None else ""
    return Carrier(found.function, found.path, found.site.span.line, found.collective, found.group, variable,
                   found.factory, found.cls, found.cls_path, found.module,
                   render_single_rank_test(agreement, receiver, found.group) if agreement else "")


# -- the strategies' applicability and labels (from the fix facts alone) --------------


def _statement_problem(facts: FixFacts) -> str:
    """Why the controlling construct cannot be rewritten ("" when it is an ``if``)."""
    statement = facts.statement
    if statement in ("", "if"):
        return ""
    if statement == "group":
        return ("each rank chooses the group the collective runs over; choose it from what the ranks agree on "
                "(or issue one collective per group on every rank)")
    if statement == "thread":
        return ("the call runs on a background thread; move it to the main thread, before the thread starts "
                "(or hand the thread what a main-thread hook computed)")
    if statement in ("ifexp", "boolop", "comprehension"):
        what = {"ifexp": "a conditional expression", "boolop": "an `and`/`or` operand",
                "comprehension": "a comprehension"}[statement]
        return f"the collective is reached inside {what}; write it as an `if` statement to fix it automatically"
    return f"the exit is decided by {'an' if statement[0] in 'aeiou' else 'a'} `{statement}`, not an `if`"


def _always_enter(finding: Finding, facts: FixFacts, exit_mode: str):
    """The always-enter option, or why it does not apply."""
    kind = finding.guard_kind
    if kind not in ("early-exit", "branch"):
        return "always-enter moves a collective out of a branch or past an early exit"
    if _statement_problem(facts):
        return _statement_problem(facts)
    if kind == "early-exit" and facts.ends_callers_loop:
        return ("the exit returns nothing to a caller that leaves its event loop on it; deferring the return "
                "would not keep the ranks together")
    if kind == "early-exit" and facts.leaves_loop:
        return ("the exit leaves a loop whose next iterations call the collective again on the other ranks; "
                "deferring it would not keep the ranks together")
    if kind == "branch" and not facts.direct:
        return "the branch guards a call that reaches a collective, not the collective itself"
    if kind == "branch" and facts.region > 1:
        return "the branch holds several collectives; always-enter moves one"
    payload = facts.payload
    if payload is not None and payload.effects == "communicates":
        return f"the payload `{payload.text}` talks to other ranks, which would observe it"
    if facts.direct and facts.join not in ("none", "consumption", "identity"):
        return f"no neutral value is known for `{finding.collective}` (a rank cannot take part without contributing)"
    if facts.direct and facts.join == "identity" and facts.neutral is None:
        return f"the reduction op of `{finding.callee}` has no known identity"
    if facts.direct and facts.join == "identity" and facts.neutral.numeric_payload and not (
            payload is not None and payload.numeric):
        return (f"the identity of `{finding.callee}`'s reduction is a number, but the payload is not visibly "
                "one (a literal, `len()`, `int()`...)")
    if not facts.direct and payload is None:
        return f"`{finding.callee}` computes what it sends inside itself; no neutral value can be passed in"
    if exit_mode == "decide-from-gathered" and kind == "early-exit":
        return FixOption(ALWAYS_ENTER, False, "every rank enters the collective; the rank that would have "
                                              "exited decides from the gathered result instead of its own")
    if kind == "early-exit" and facts.result_decides_callers:
        return FixOption(ALWAYS_ENTER, False, "every rank enters the collective; the rank that would have "
                                              "exited decides from the gathered result instead of its own, "
                                              "since a caller tests the result before a collective and a rank "
                                              "keeping its own value would part from the others there")
    if not facts.direct:
        return FixOption(ALWAYS_ENTER, False, f"every rank enters `{finding.callee}`: the rest of its body now "
                                              "also runs on ranks that skipped it")
    if payload is not None and payload.effects != "pure":
        return FixOption(ALWAYS_ENTER, False, f"every rank enters the collective; the payload `{payload.text}` "
                                              "is now evaluated on ranks that skipped it and may have side effects")
    return FixOption(ALWAYS_ENTER, True, "every rank enters the collective; a rank that would skip it sends a "
                                         "neutral value and keeps its own result")


def _consensus(finding: Finding, facts: FixFacts, exit_mode: str):
    """The consensus option, or why it does not apply."""
    kind = finding.guard_kind
    if kind not in ("early-exit", "branch", "loop"):
        return "consensus agrees on the condition of a branch, an early exit or a `while` loop"
    if facts.agreement is None:
        where = f"`{facts.receiver}`" if facts.receiver else f"the call of `{finding.callee}`"
        return f"no way to agree on the condition through {where} ({facts.api} API) is known from here"
    if kind != "loop" and _statement_problem(facts):
        return _statement_problem(facts)
    if kind == "loop" and facts.statement == "thread":
        return _statement_problem(facts)
    if kind == "loop" and facts.statement != "while":
        return ("a `for` loop's trip count comes from its iterable; agreeing on it needs a hand-written fix "
                f"(see `cslint explain {finding.code}`)")
    if kind == "loop" and facts.agreement.setup:
        return ("this API agrees through statements before the test, and a `while` test would not re-run them: "
                "agree at the end of the loop body by hand")
    refusal = _consensus_semantics(finding, facts)
    if refusal:
        return refusal
    if kind == "early-exit" and facts.ends_callers_loop:
        return FixOption(CONSENSUS, False, f"the ranks return nothing together (their caller leaves its event loop "
                                           f"on it), once `{finding.condition}` holds on every rank (one more "
                                           "collective each time this runs); a rank whose own condition holds "
                                           "goes on with the rest of the function, with nothing to do, until then")
    if kind == "early-exit" and facts.leaves_unbounded_loop:
        return FixOption(CONSENSUS, False, f"the ranks leave the event loop together, once `{finding.condition}` "
                                           "holds on every rank (one more collective each pass); a rank whose "
                                           "own condition holds keeps running passes, with nothing to do, until "
                                           "then")
    if kind == "branch" and facts.every_rank_may:
        return FixOption(CONSENSUS, True, f"the ranks agree on `{finding.condition}` first (one more collective "
                                          "each time the code runs) and take the branch only where it holds on "
                                          "every rank: it says a rank may act, so a rank that may but is held "
                                          "back takes the path a rank that may not takes anyway")
    what = {"early-exit": "exit", "branch": "branch", "loop": "loop"}[kind]
    return FixOption(CONSENSUS, False, f"the ranks agree on `{finding.condition}` first (one more collective "
                                       f"each time the code runs); ranks whose own condition was false now take "
                                       f"the {what} too")


def _consensus_semantics(finding: Finding, facts: FixFacts) -> str:
    """Why a consensus ("every rank takes the branch when any rank's
    condition holds") would be wrong here, or "".

    A consensus is checked against what a rank whose own condition is false
    then does: it must not act on a value it does not have, leave work it
    still holds, or pay a second collective for a condition that is agreed
    already.
    """
    if facts.agreed_by:
        return (f"the condition's value already comes out of {facts.agreed_by}; agreeing on it again would add a "
                "collective to a path that agrees already")
    kind = finding.guard_kind
    if kind == "early-exit" and facts.leaves_unbounded_loop:
        # leaving an event loop is agreed the other way round: all leave once every rank's condition holds,
        # so a rank whose own condition holds goes on with the passes it would have skipped
        if facts.presence and not facts.presence[1] and facts.presence[2]:
            text = facts.presence[0]
            return (f"the exit leaves the event loop when `{text}` is empty or None: to leave together, a rank "
                    f"without `{text}` would go on running the rest of the loop, which reads it")
        return ""
    if facts.presence and facts.presence[2]:
        text, holds_when_present, _reads = facts.presence
        if kind == "early-exit":
            return (f"the exit is taken when `{text}` is empty or None: with a consensus, a rank that still holds "
                    f"`{text}` would skip the code that handles it")
        if kind == "branch" and holds_when_present:
            return (f"the branch runs when `{text}` is there and reads it: with a consensus, a rank without "
                    f"`{text}` would act on an empty or None value")
        if kind == "branch":
            return (f"the branch runs when `{text}` is empty or None: with a consensus, a rank that holds `{text}` "
                    "would skip the arm that handles it")
    return ""


def _propagate(finding: Finding, facts: FixFacts, exit_mode: str):
    """The propagate option (carry the condition in an object the code
    already broadcasts over the group), or why it does not apply."""
    kind = finding.guard_kind
    if kind not in ("early-exit", "branch"):
        return "propagate carries the condition of a branch or an early exit"
    if _statement_problem(facts):
        return _statement_problem(facts)
    carrier = facts.carrier
    if carrier is None:
        return f"no method of this class already broadcasts an object to every rank of {finding.group}"
    if carrier.function == finding.function:
        return "the broadcast is in this very function; the condition would travel after it is needed"
    if finding.callee.rsplit(".", 1)[-1] == carrier.function.rsplit(".", 1)[-1]:
        return f"the guarded call is `{carrier.function}` itself, the broadcast that would carry the condition"
    if not carrier.single_rank:
        return f"how to tell a one-rank {carrier.group} group is not known for this API"
    if kind == "early-exit" and facts.leaves_unbounded_loop:
        return ("the exit leaves the event loop for good: with the root's value, a rank that still has work there "
                "would leave it")
    refusal = _consensus_semantics(finding, facts)
    if refusal:
        return refusal.replace("a consensus", "the root's value")
    short = carrier.function.rsplit(".", 1)[-1]
    return FixOption(PROPAGATE, False, f"the condition travels in the object `{short}` already broadcasts over "
                                       f"{carrier.group} (no collective is added); every rank takes the root's "
                                       "value, so a rank whose own condition differs now follows the root")


_STRATEGY_CHECKS = {ALWAYS_ENTER: _always_enter, PROPAGATE: _propagate, CONSENSUS: _consensus}


# -- chain wording ------------------------------------------------------------------------


def _article(kind: str) -> str:
    if kind.startswith(("per-", "exception", "randomness", "local", "rank-local")):
        return kind
    return ("an " if kind[:1] in "aeiou" else "a ") + kind


_DIM_NAMES = {"tp": "tensor-parallel", "pp": "pipeline-parallel", "cp": "context-parallel",
              "dp": "data-parallel", "ep": "expert-parallel", "x": "other"}


def _dims_phrase(dims) -> str:
    if not dims or set(dims) >= set(ALL_DIMS):
        return "it can differ on every rank"
    return "it can differ between " + ", ".join(_DIM_NAMES.get(d, d) for d in sorted(dims)) + " ranks"


__all__ = ["PROPAGATE", "Agreement", "Behaviour", "Invalid", "Rule", "Scenario", "fix_facts"]
