"""The data every part of cslint exchanges: findings, their chains, fix hints.

`analysis/` produces these; `rules/` decide the code and message; `report/`
prints them; `codemods/` locate their edits from them.  Everything here is
plain data (picklable, JSON-serialisable through :meth:`Finding.to_json`) so
findings can cross process boundaries and be cached.

Positions: ``line`` is 1-based, ``column`` is 1-based (as ruff prints them);
``end_line``/``end_column`` delimit the collective call expression (end column
exclusive, 1-based).  ``Span`` uses the same convention.
"""

from __future__ import annotations

import ast
from dataclasses import asdict, dataclass, field
from typing import Any, NamedTuple, Optional

JSON_VERSION = 1

_new_object = object.__new__


@dataclass(frozen=True)
class Span:
    """A source range; 1-based lines and 1-based columns (end exclusive)."""

    line: int
    column: int
    end_line: int
    end_column: int

    def to_json(self) -> dict:
        return {"line": self.line, "column": self.column, "end_line": self.end_line, "end_column": self.end_column}

    @classmethod
    def from_json(cls, data: dict) -> "Span":
        return cls(int(data["line"]), int(data["column"]), int(data["end_line"]), int(data["end_column"]))

    @classmethod
    def of(cls, node: Any) -> "Span":
        """The span of an ``ast`` node (ast columns are 0-based).  Made for
        most call sites of every analysed function: its fields are set as the
        frozen class's own ``__init__`` sets them (in order, into the
        instance's ``__dict__``, so it compares, hashes and pickles alike),
        without a ``object.__setattr__`` call per field."""
        end_line = getattr(node, "end_lineno", None) or node.lineno
        end_col = getattr(node, "end_col_offset", None)
        if end_col is None:
            end_col = node.col_offset
        span = _new_object(cls)
        fields = span.__dict__
        fields["line"] = node.lineno
        fields["column"] = node.col_offset + 1
        fields["end_line"] = end_line
        fields["end_column"] = end_col + 1
        return span


@dataclass(frozen=True)
class ChainLink:
    """One step of a finding's explanation.

    ``kind`` is one of: ``collective`` (the collective itself), ``call`` (a call
    that reaches the collective), ``condition`` (the controlling branch, exit,
    loop or except), ``flow`` (a value flowing from one name to another) and
    ``source`` (the rank-local origin).
    """

    path: str
    line: int
    note: str
    kind: str = "flow"

    def to_json(self) -> dict:
        return {"path": self.path, "line": self.line, "note": self.note}


@dataclass(frozen=True)
class FixOption:
    """One fix strategy a rule offers for a finding, with its label."""

    strategy: str  # always-enter | consensus
    safe: bool  # ruff's meaning: applying it cannot change what any rank computes
    reason: str = ""

    def to_json(self) -> dict:
        return {"strategy": self.strategy, "safe": self.safe, "reason": self.reason}


@dataclass(frozen=True)
class FixHint:
    """The fix strategies the finding's rule offers, preferred first.

    ``strategy``/``safe``/``reason`` are the preferred one (what ``cslint
    fix`` applies when it fits); ``alternatives`` are tried in order when it
    does not.  The rule decides both (see :meth:`cslint.rules.Rule.fix_options`),
    so ``check`` and ``fix`` cannot disagree.
    """

    strategy: str
    safe: bool
    reason: str = ""
    alternatives: tuple = ()  # FixOption, ...

    @property
    def options(self) -> tuple:
        return (FixOption(self.strategy, self.safe, self.reason),) + tuple(self.alternatives)

    @classmethod
    def of(cls, options) -> Optional["FixHint"]:
        options = tuple(options)
        if not options:
            return None
        first = options[0]
        return cls(first.strategy, first.safe, first.reason, options[1:])

    def to_json(self) -> dict:
        data: dict = {"strategy": self.strategy, "safe": self.safe}
        if self.reason:
            data["reason"] = self.reason
        if self.alternatives:
            data["alternatives"] = [option.to_json() for option in self.alternatives]
        return data

    @classmethod
    def from_json(cls, data: dict) -> "FixHint":
        alternatives = tuple(FixOption(str(o["strategy"]), bool(o["safe"]), str(o.get("reason", "")))
                             for o in data.get("alternatives", ()))
        return cls(str(data["strategy"]), bool(data["safe"]), str(data.get("reason", "")), alternatives)


# --- fix facts: what the codemods need to rewrite a finding, typed ---------------
#
# Templates (an agreement's statements, a neutral value) hold placeholder
# identifiers that the codemods replace by syntax nodes; they are defined with
# the presets (``cslint.presets.PREDICATE``, ``FLAG``, ``PAYLOAD``, ``TENSOR``).


@dataclass(frozen=True)
class Payload:
    """The argument of the call at a finding that carries what a rank sends.

    ``effects``: ``pure`` (no call other than a pure builtin), ``calls``
    (other calls: side effects are possible) or ``communicates`` (it calls
    something that talks to other ranks).
    """

    text: str
    span: Span
    keyword: str = ""  # the keyword it is passed by; "" when positional
    effects: str = "pure"
    numeric: bool = False  # visibly a number (a literal, len(), int(), arithmetic of those)

    def to_json(self) -> dict:
        return {"text": self.text, **self.span.to_json(), "keyword": self.keyword, "effects": self.effects,
                "numeric": self.numeric}

    @classmethod
    def from_json(cls, data: dict) -> "Payload":
        return cls(str(data["text"]), Span.from_json(data), str(data.get("keyword", "")),
                   str(data.get("effects", "calls")), bool(data.get("numeric", False)))


@dataclass(frozen=True)
class Agreement:
    """How the ranks of the collective's group agree on a predicate, in the
    code's own API (rendered from a preset's agreement template)."""

    test: str  # the agreed expression: true when the predicate holds on any rank
    setup: tuple = ()  # statements before the test
    setup_on_device: tuple = ()  # the same, the flag on a tensor parameter's device
    imports: tuple = ()  # module imports the statements need
    template: str = ""  # the preset template (re-rendered for a covering group)
    #: true when the predicate holds on every rank ("" when the API says it
    #: through ``test`` on the negated predicate)
    all_test: str = ""

    def to_json(self) -> dict:
        return {"test": self.test, "setup": list(self.setup), "setup_on_device": list(self.setup_on_device),
                "imports": list(self.imports), "template": self.template, "all_test": self.all_test}

    @classmethod
    def from_json(cls, data: dict) -> "Agreement":
        return cls(str(data["test"]), tuple(data.get("setup", ())), tuple(data.get("setup_on_device", ())),
                   tuple(data.get("imports", ())), str(data.get("template", "")), str(data.get("all_test", "")))


@dataclass(frozen=True)
class Neutral:
    """What a rank with nothing to contribute sends to a reduction: the
    identity of its op (a template over the payload)."""

    text: str
    imports: tuple = ()
    numeric_payload: bool = False  # valid only for a visibly numeric payload

    def to_json(self) -> dict:
        return {"text": self.text, "imports": list(self.imports), "numeric_payload": self.numeric_payload}

    @classmethod
    def from_json(cls, data: dict) -> "Neutral":
        return cls(str(data["text"]), tuple(data.get("imports", ())), bool(data.get("numeric_payload", False)))


@dataclass(frozen=True)
class Carrier:
    """An object the code already broadcasts to every rank of a group each
    time it runs (a schedule), found by the analysis: the propagate
    strategy carries a condition in it instead of adding a collective.

    ``function`` (qualified name, in ``path``) builds ``variable`` with
    ``factory`` on the root (the rank whose object every rank receives) and
    sends it with ``collective`` over ``group`` at ``line``.  ``cls`` is
    the object's class, dotted with its module, in ``cls_path`` (""
    when the analysis did not read that module: the fix looks for it
    beside ``module``, the carrying function's module).  ``single_rank``
    is a test, in the finding's function, that holds when ``group`` has one
    rank (where the condition can stay local); "" when the API has none.
    """

    function: str
    path: str
    line: int
    collective: str
    group: str
    variable: str
    factory: str
    cls: str
    cls_path: str
    module: str = ""
    single_rank: str = ""

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> "Carrier":
        return cls(**{f: data[f] for f in cls.__dataclass_fields__ if f in data})


@dataclass(frozen=True)
class FixFacts:
    """What a fix of the finding needs, from the analysis and the presets.

    ``receiver`` and ``group_expr`` are texts valid in the finding's own
    function (the communicator and the ``group=`` argument of the collective
    it reaches; "" when they cannot be named there).  ``direct``: the call is
    the collective itself, not a function that reaches one.  ``join`` says
    how a rank that skips can still take part: ``none`` (no payload),
    ``consumption`` (a gathered list: the neutral item follows from how the
    list is read), ``identity`` (a reduction: ``neutral``), or "" (unknown).
    ``statement`` is the controlling construct (``if``, ``while``, ``for``,
    ``ifexp``...); ``leaves_loop``: the early exit leaves a loop whose later
    iterations the other ranks still run; ``region`` counts the collectives
    the branches hold.
    """

    receiver: str = ""
    group_expr: str = ""
    api: str = "unknown"
    payload: Optional[Payload] = None
    agreement: Optional[Agreement] = None
    direct: bool = True
    join: str = ""
    neutral: Optional[Neutral] = None
    statement: str = ""
    leaves_loop: bool = False
    region: int = 1
    #: every group the call at the finding reaches a collective over: an
    #: agreement guarding the call must cover them all
    reached_groups: tuple = ()
    #: an ``and``/``or`` condition: its operator and the spans of the
    #: operands that are the same on every rank of the group (configuration);
    #: a rewrite keeps them as they are, so a disabled feature costs nothing
    operator: str = ""
    uniform_operands: tuple = ()  # Span, ...
    #: a call on the condition's flow that reaches a collective over a group
    #: covering the finding's (its text): the path may agree already
    agreed_by: str = ""
    #: the condition only asks whether a value is there: ``(its text,
    #: whether the condition holds when it is, whether the code a consensus
    #: would make a disagreeing rank run or skip reads it)``
    presence: Optional[tuple] = None
    #: the exit leaves an event loop (``while True``) for good
    leaves_unbounded_loop: bool = False
    #: ... through a caller: the exit returns nothing, and a caller leaves its
    #: event loop when the call's result is missing (then both flags above hold)
    ends_callers_loop: bool = False
    #: the exit returns a value, and a caller tests the function's result in
    #: a condition that decides a collective: always-enter lets the exiting
    #: rank decide from the gathered result too (``decide-from-gathered``),
    #: since keeping its own value would part the ranks at that caller
    result_decides_callers: bool = False
    #: early exits: the other exits of the same kind before the collective
    #: whose conditions also differ between ranks (the finding names the
    #: nearest): ``((guard span, condition text, uniform operand spans,
    #: operator), ...)``;
    #: always-enter defers them together
    other_exits: tuple = ()
    #: an existing broadcast that carries an object to every rank of the
    #: group, in which the condition can travel (the propagate strategy)
    carrier: Optional["Carrier"] = None
    #: the rank-local part of the condition says this rank may do what the
    #: branch does (``self._can_pause()``: a permission, the presets'
    #: ``permission_test``): a consensus lets the branch run only where it
    #: holds on every rank, and a rank that may but is held back takes the
    #: path a rank that may not takes anyway
    every_rank_may: bool = False

    def to_json(self) -> dict:
        return {
            "receiver": self.receiver, "group_expr": self.group_expr, "api": self.api,
            "payload": self.payload.to_json() if self.payload else None,
            "agreement": self.agreement.to_json() if self.agreement else None,
            "direct": self.direct, "join": self.join,
            "neutral": self.neutral.to_json() if self.neutral else None,
            "statement": self.statement, "leaves_loop": self.leaves_loop, "region": self.region,
            "reached_groups": list(self.reached_groups), "operator": self.operator,
            "uniform_operands": [span.to_json() for span in self.uniform_operands],
            "agreed_by": self.agreed_by,
            "presence": list(self.presence) if self.presence else None,
            "leaves_unbounded_loop": self.leaves_unbounded_loop,
            "ends_callers_loop": self.ends_callers_loop,
            "result_decides_callers": self.result_decides_callers,
            "other_exits": [{"guard": guard.to_json(), "condition": text, "operator": operator,
                             "uniform_operands": [span.to_json() for span in uniform]}
                            for guard, text, uniform, operator in self.other_exits],
            "carrier": self.carrier.to_json() if self.carrier else None,
            "every_rank_may": self.every_rank_may,
        }

    @classmethod
    def from_json(cls, data: dict) -> "FixFacts":
        payload, agreement, neutral = data.get("payload"), data.get("agreement"), data.get("neutral")
        return cls(
            receiver=str(data.get("receiver", "")), group_expr=str(data.get("group_expr", "")),
            api=str(data.get("api", "unknown")), payload=Payload.from_json(payload) if payload else None,
            agreement=Agreement.from_json(agreement) if agreement else None, direct=bool(data.get("direct", True)),
            join=str(data.get("join", "")), neutral=Neutral.from_json(neutral) if neutral else None,
            statement=str(data.get("statement", "")), leaves_loop=bool(data.get("leaves_loop", False)),
            region=int(data.get("region", 1)),
            reached_groups=tuple(str(g) for g in data.get("reached_groups", ())),
            operator=str(data.get("operator", "")),
            uniform_operands=tuple(Span.from_json(s) for s in data.get("uniform_operands", ())),
            agreed_by=str(data.get("agreed_by", "")),
            presence=(str(data["presence"][0]), bool(data["presence"][1]), bool(data["presence"][2]))
            if data.get("presence") else None,
            leaves_unbounded_loop=bool(data.get("leaves_unbounded_loop", False)),
            ends_callers_loop=bool(data.get("ends_callers_loop", False)),
            result_decides_callers=bool(data.get("result_decides_callers", False)),
            other_exits=tuple((Span.from_json(e["guard"]), str(e["condition"]),
                               tuple(Span.from_json(u) for u in e.get("uniform_operands", ())),
                               str(e.get("operator", "")))
                              for e in data.get("other_exits", ())),
            carrier=Carrier.from_json(data["carrier"]) if data.get("carrier") else None,
            every_rank_may=bool(data.get("every_rank_may", False)),
        )


#: confidence levels, lowest first
CONFIDENCE_LEVELS = ("low", "medium", "high")


@dataclass(frozen=True)
class Doubt:
    """One reason the analysis may be wrong about a finding.

    ``strong``: the doubt alone makes the finding one to review by hand
    (the value may already be agreed; the collective is reached on paths
    the analysis does not relate to this call's); a weak doubt only lowers
    the confidence one step.
    """

    kind: str
    strong: bool
    note: str

    def to_json(self) -> dict:
        return {"kind": self.kind, "strong": self.strong, "note": self.note}

    @classmethod
    def from_json(cls, data: dict) -> "Doubt":
        return cls(str(data["kind"]), bool(data.get("strong", False)), str(data.get("note", "")))


@dataclass(frozen=True)
class Confidence:
    """How sure the analysis is that the finding is a real hazard: ``high``
    (no doubt), ``medium`` (weak doubts only) or ``low`` (a strong doubt).
    The rule computes it from the analysis' facts (see
    :meth:`cslint.rules.Rule.confidence`)."""

    level: str
    doubts: tuple = ()  # Doubt, ...

    @classmethod
    def of(cls, doubts) -> "Confidence":
        doubts = tuple(doubts)
        if any(d.strong for d in doubts):
            return cls("low", doubts)
        return cls("medium" if doubts else "high", doubts)

    def at_least(self, level: str) -> bool:
        return CONFIDENCE_LEVELS.index(self.level) >= CONFIDENCE_LEVELS.index(level)

    def to_json(self) -> dict:
        return {"level": self.level, "doubts": [d.to_json() for d in self.doubts]}

    @classmethod
    def from_json(cls, data: dict) -> "Confidence":
        level = str(data.get("level", "high"))
        if level not in CONFIDENCE_LEVELS:
            raise ValueError(f"unknown confidence level {level!r}")
        return cls(level, tuple(Doubt.from_json(d) for d in data.get("doubts", ())))


def normalise_condition(text: str) -> str:
    """Condition text with layout removed: re-printed by ``ast`` when it parses, else whitespace-collapsed."""
    collapsed = " ".join(text.split())
    if not collapsed:
        return ""
    try:
        return ast.unparse(ast.parse(collapsed, mode="eval"))
    except (SyntaxError, ValueError, RecursionError):
        return collapsed


class FindingIdentity(NamedTuple):
    """What a finding is about, without where it sits: edits that shift
    lines keep it.  The one identity the baseline, the codemods' consumers and
    the patcher share, at the granularity each needs."""

    path: str  # relative to the consumer's root, '/'-separated
    function: str
    collective: str
    callee: str
    condition: str  # normalised
    code: str

    def finding_key(self) -> tuple:
        """Which hazard: its site, collective, condition and rule (the baseline's fingerprint)."""
        return (self.path, self.function, self.collective, self.condition, self.code)

    def site_key(self) -> tuple:
        """Which call: removing one guard may expose another guard of the same
        call, which is still the same site (the patcher's fixed-or-not)."""
        return (self.path, self.function, self.callee or self.collective)


@dataclass(frozen=True)
class SiteRef:
    """One collective call site a root-cause finding stands for (the call,
    or the call in the finding's function that leads to the collective)."""

    line: int
    column: int
    end_line: int
    end_column: int
    callee: str
    collective: str
    group: str

    def to_json(self) -> dict:
        return {"line": self.line, "column": self.column, "end_line": self.end_line,
                "end_column": self.end_column, "callee": self.callee, "collective": self.collective,
                "group": self.group}

    @classmethod
    def from_json(cls, data: dict) -> "SiteRef":
        return cls(int(data["line"]), int(data["column"]), int(data["end_line"]), int(data["end_column"]),
                   str(data.get("callee", "")), str(data.get("collective", "")), str(data.get("group", "")))


@dataclass(frozen=True)
class UpstreamRef:
    """The finding whose condition a finding reads downstream of: its
    condition differs through a field (``through``) set inside that
    finding's guard, where the ranks already part.  ``guard_line`` is the
    first line of that guard, ``line`` the call reported there."""

    path: str
    guard_line: int
    line: int
    through: str

    def to_json(self) -> dict:
        return {"path": self.path, "guard_line": self.guard_line, "line": self.line, "through": self.through}

    @classmethod
    def from_json(cls, data: dict) -> "UpstreamRef":
        return cls(str(data["path"]), int(data["guard_line"]), int(data["line"]), str(data.get("through", "")))


@dataclass(frozen=True)
class DownstreamRef:
    """A finding the root-cause report leaves out because it reads, only
    downstream, the divergence of the finding that lists it."""

    path: str
    line: int
    column: int
    code: str
    function: str
    collective: str
    condition: str

    def to_json(self) -> dict:
        return {"path": self.path, "line": self.line, "column": self.column, "code": self.code,
                "function": self.function, "collective": self.collective, "condition": self.condition}

    @classmethod
    def from_json(cls, data: dict) -> "DownstreamRef":
        return cls(str(data["path"]), int(data["line"]), int(data["column"]), str(data.get("code", "")),
                   str(data.get("function", "")), str(data.get("collective", "")), str(data.get("condition", "")))


@dataclass
class Finding:
    """One collective whose participation depends on rank-local state."""

    code: str
    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    message: str
    collective: str  # the collective's short name, e.g. "tp_allgather"
    group: str  # process group: world, tp, pp, cp, dp, tp_cp, ...
    chain: list[ChainLink] = field(default_factory=list)
    fix: Optional[FixHint] = None
    # --- facts for consumers (baseline fingerprints, codemods) --------------
    function: str = ""  # qualified name of the enclosing function, "PyExecutor._can_queue"
    condition: str = ""  # normalised source text of the controlling condition
    guard_kind: str = ""  # branch | early-exit | loop | exception
    guard: Optional[Span] = None  # the controlling statement (if/while/for/return/raise/try)
    callee: str = ""  # dotted text of the call at `line`, e.g. "self.dist.tp_allgather"
    api: str = ""  # flavour of the collective API: trtllm | torch | mpi | unknown
    source: str = ""  # short text of the rank-local source, e.g. "self.active_requests"
    fix_facts: Optional[FixFacts] = None  # what the codemods need (None: not a divergence finding)
    #: how sure the analysis is (None: not a divergence finding)
    confidence: Optional[Confidence] = None
    #: root-cause reporting: every call site the guard decides, this one first
    #: (empty when the finding stands for its own site only)
    sites: list[SiteRef] = field(default_factory=list)
    #: the function whose condition decides, when it is not ``function``: a
    #: finding reported at the call that passes the rank-local value ("" otherwise)
    condition_function: str = ""
    #: the finding whose guard this one's condition reads downstream of (a
    #: field set inside it); None when the condition differs on its own
    upstream: Optional[UpstreamRef] = None
    #: root-cause reporting: the findings left out because they read this
    #: one's divergence only downstream (:attr:`upstream` names this one)
    downstream: list[DownstreamRef] = field(default_factory=list)

    @property
    def span(self) -> Span:
        return Span(self.line, self.column, self.end_line, self.end_column)

    def identity(self, relpath: str) -> FindingIdentity:
        """The finding's identity, its path given relative to the consumer's root."""
        return FindingIdentity(relpath, self.function, self.collective, self.callee,
                               normalise_condition(self.condition), self.code)

    def to_json(self) -> dict:
        """The finding object of the JSON contract in ``docs/design.md`` (plus extension keys)."""
        return {
            "code": self.code,
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "end_line": self.end_line,
            "end_column": self.end_column,
            "message": self.message,
            "collective": self.collective,
            "group": self.group,
            "chain": [link.to_json() for link in self.chain],
            "fix": self.fix.to_json() if self.fix else None,
            # extensions (compatible: consumers ignore unknown keys)
            "function": self.function,
            "condition": self.condition,
            "guard_kind": self.guard_kind,
            "guard": self.guard.to_json() if self.guard else None,
            "callee": self.callee,
            "api": self.api,
            "source": self.source,
            "fix_facts": self.fix_facts.to_json() if self.fix_facts else None,
            "confidence": self.confidence.to_json() if self.confidence else None,
            **({"sites": [site.to_json() for site in self.sites]} if self.sites else {}),
            **({"condition_function": self.condition_function} if self.condition_function else {}),
            **({"upstream": self.upstream.to_json()} if self.upstream else {}),
            **({"downstream": [ref.to_json() for ref in self.downstream]} if self.downstream else {}),
        }

    @classmethod
    def from_json(cls, data: dict) -> "Finding":
        """The finding :meth:`to_json` wrote (``cslint fix --from-json``).

        Raises ``ValueError`` for an object that is not a finding.
        """
        try:
            fix = data.get("fix")
            guard = data.get("guard")
            facts = data.get("fix_facts")
            return cls(
                code=str(data["code"]), path=str(data["path"]), line=int(data["line"]),
                column=int(data["column"]), end_line=int(data["end_line"]), end_column=int(data["end_column"]),
                message=str(data.get("message", "")), collective=str(data.get("collective", "")),
                group=str(data.get("group", "")),
                chain=[ChainLink(str(link["path"]), int(link["line"]), str(link.get("note", "")),
                                 str(link.get("kind", "flow"))) for link in data.get("chain", [])],
                fix=FixHint.from_json(fix) if fix else None,
                function=str(data.get("function", "")), condition=str(data.get("condition", "")),
                guard_kind=str(data.get("guard_kind", "")), guard=Span.from_json(guard) if guard else None,
                callee=str(data.get("callee", "")), api=str(data.get("api", "")), source=str(data.get("source", "")),
                fix_facts=FixFacts.from_json(facts) if facts else None,
                confidence=Confidence.from_json(data["confidence"]) if data.get("confidence") else None,
                sites=[SiteRef.from_json(site) for site in data.get("sites", ())],
                condition_function=str(data.get("condition_function", "")),
                upstream=UpstreamRef.from_json(data["upstream"]) if data.get("upstream") else None,
                downstream=[DownstreamRef.from_json(ref) for ref in data.get("downstream", ())],
            )
        except (KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"not a finding object ({type(exc).__name__}: {exc})") from exc

    def sort_key(self) -> tuple:
        return (self.path, self.line, self.column, self.code)


@dataclass(frozen=True)
class FileError:
    """A path that could not be read at all (as opposed to a CSL001 finding)."""

    path: str
    message: str

    def to_json(self) -> dict:
        return asdict(self)


@dataclass
class CheckResult:
    """What one `cslint check` run produced."""

    files: int = 0
    findings: list[Finding] = field(default_factory=list)
    errors: list[FileError] = field(default_factory=list)
    #: findings left out because their confidence is below ``min-confidence``
    below_confidence: int = 0

    def to_json(self) -> dict:
        data = {
            "version": JSON_VERSION,
            "files": self.files,
            "findings": [f.to_json() for f in sorted(self.findings, key=Finding.sort_key)],
            "errors": [e.to_json() for e in self.errors],
        }
        if self.below_confidence:
            data["below_confidence"] = self.below_confidence
        return data

    @classmethod
    def from_json(cls, data: Any) -> "CheckResult":
        """The result :meth:`to_json` wrote; ``ValueError`` for anything else."""
        if not isinstance(data, dict) or not isinstance(data.get("findings"), list):
            raise ValueError("expected an object with a `findings` list")
        if data.get("version") != JSON_VERSION:
            raise ValueError(f"unsupported report version {data.get('version')!r} (expected {JSON_VERSION})")
        errors = [FileError(str(e.get("path", "")), str(e.get("message", ""))) for e in data.get("errors", [])]
        return cls(files=int(data.get("files", 0)), findings=[Finding.from_json(f) for f in data["findings"]],
                   errors=errors, below_confidence=int(data.get("below_confidence", 0)))
