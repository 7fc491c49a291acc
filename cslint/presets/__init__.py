"""Knowledge packs: which calls are collectives over which group, which values
are rank-local, which are uniform, and which predicates select a mode.

A preset holds API knowledge only, never verdicts on particular functions.
``load_presets(names)`` merges the named packs (plus nothing else); the
analysis adds the user's ``[tool.cslint]`` patterns on top.

Dimensions.  Divergence is tracked as a set of *parallel dimensions* over which
a value may differ: ``tp``, ``pp``, ``cp``, ``dp``, ``ep`` and ``x`` (any other
or unknown split).  A process group spans some dimensions (``tp`` spans
``{tp}``, ``tp_cp`` spans ``{tp, cp}``, the world and unnamed groups span all).
A collective over G is endangered by a condition that may differ along a
dimension G spans.
"""

from __future__ import annotations

import fnmatch
import functools
import importlib
import re
from dataclasses import dataclass, field
from typing import Iterable, Optional

ALL_DIMS = frozenset({"tp", "pp", "cp", "dp", "ep", "x"})

#: group name -> the dimensions its ranks differ along
GROUP_SPANS: dict[str, frozenset] = {
    "world": ALL_DIMS,
    "tp": frozenset({"tp"}),
    "pp": frozenset({"pp"}),
    "cp": frozenset({"cp"}),
    "dp": frozenset({"dp"}),
    "ep": frozenset({"ep"}),
    "tp_cp": frozenset({"tp", "cp"}),
    # the data-parallel attention ranks and the tensor-parallel ranks of one
    # stage together (SGLang's ``dp_tp`` groups)
    "dp_tp": frozenset({"dp", "tp"}),
}


def group_span(group: str) -> frozenset:
    """Dimensions spanned by a group in the generic world (:data:`GENERIC_WORLD`);
    unknown groups span everything.  The analysis asks the loaded presets'
    world (``Knowledge.world.span``) instead."""
    return GROUP_SPANS.get(group, ALL_DIMS)


@dataclass(frozen=True)
class World:
    """How a framework lays its ranks out, as a preset declares it
    (:attr:`Preset.world`).

    The generic world (no ``factors``) is the lattice of :data:`GROUP_SPANS`:
    each named dimension its own, ``x`` any other split.  A declared world
    is the product of its ``factors`` (TensorRT-LLM's ``Mapping``: world =
    TP x PP x CP), with ``inside`` pairs ``(inner, outer)`` for dimensions
    whose ranks are ranks of another (attention-DP and expert ranks are TP
    ranks).  There a group spans the dimensions its name gives plus those
    inside them (``tp`` spans ``{tp, dp, ep}``), and every split, ``x``
    included, is a split along some factor: a value agreed over a group
    that leaves out some factors differs along those factors only.
    """

    factors: tuple = ()
    inside: tuple = ()
    #: ``(group, dimensions)`` pairs the analysed tree's own getters define
    #: (``get_dp_tp_group()`` returning a TP subgroup either way spans ``{tp}``
    #: there; :mod:`cslint.analysis.groupgetters`), read before :data:`GROUP_SPANS`
    named: tuple = ()
    _memo: dict = field(default_factory=dict, compare=False, hash=False, repr=False)

    def with_named(self, named: tuple) -> "World":
        """This world where the groups of ``named`` span what it says (a fresh memo)."""
        return World(self.factors, self.inside, tuple(named))

    def asked(self) -> frozenset:
        """The groups this world was asked the span of since it was made
        (what an extraction read of it, :meth:`~cslint.engine.workers.Workers.learn_spans`)."""
        return frozenset(self._memo)

    def changed_spans(self, named: tuple) -> frozenset:
        """The groups whose span differs between this world and one where ``named`` holds."""
        mine, theirs = dict(self.named), dict(named)
        return frozenset(group for group in mine.keys() | theirs.keys() if mine.get(group) != theirs.get(group))

    @property
    def declared(self) -> bool:
        return bool(self.factors)

    def closure(self, dims: frozenset) -> frozenset:
        """``dims`` with the dimensions inside any of them: a value that differs
        between TP ranks may differ between the attention-DP ranks, which are TP ranks."""
        inner = {a for a, outer in self.inside if outer in dims and a not in dims}
        return dims | inner if inner else dims

    def span(self, group: str) -> frozenset:
        """The dimensions ``group``'s ranks differ along; unknown groups span everything."""
        found = self._memo.get(group)
        if found is None:
            base = next((dims for name, dims in self.named if name == group), None) \
                or GROUP_SPANS.get(group, ALL_DIMS)
            if self.factors and base != ALL_DIMS:
                base = self.closure(base)
                if base >= frozenset(self.factors):
                    base = ALL_DIMS
            found = self._memo[group] = base
        return found

    def residual(self, dims: frozenset, span: frozenset) -> frozenset:
        """Along which dimensions a value differing along ``dims`` still differs
        once agreed over a group spanning ``span``: in a declared world an
        unnamed split (``x``) is one along the factors the group leaves out."""
        rest = dims - span
        if self.factors and "x" in rest:
            rest = (rest - {"x"}) | (self.closure(frozenset(self.factors) - span) - span)
        return rest


#: the generic lattice, for presets that declare no world of their own
GENERIC_WORLD = World()


# Tokens that name a parallel dimension inside identifiers (get_tp_group,
# tensor_model_parallel_rank, pipeline_parallel_size, ...).
_DIM_TOKENS = [
    ("tp_cp", "tp_cp"), ("cp_tp", "tp_cp"), ("dp_tp", "dp_tp"), ("tp_dp", "dp_tp"),
    ("tensor_model_parallel", "tp"), ("tensor_parallel", "tp"), ("tp", "tp"), ("tensor", "tp"),
    # DeepSpeed's pipeline grid calls its Megatron-style tensor-slicing group (the model-parallel ranks of one
    # stage) "slice parallel": ``grid.get_slice_parallel_group()``, ``get_slice_parallel_rank()``
    ("slice_parallel", "tp"),
    ("pipeline_model_parallel", "pp"), ("pipeline_parallel", "pp"), ("pipe_parallel", "pp"), ("pipeline", "pp"),
    ("pp", "pp"),
    ("context_parallel", "cp"), ("cp", "cp"), ("dcp", "cp"), ("pcp", "cp"),
    ("data_parallel", "dp"), ("dp", "dp"),
    ("expert_model_parallel", "ep"), ("expert_parallel", "ep"), ("expert", "ep"), ("ep", "ep"), ("moe", "ep"),
]


#: _DIM_TOKENS as group_from_text tests them: a token of several words as
#: ``_words_`` inside the joined text (True), a one-word token as a part (False)
_DIM_TESTS = tuple((f"_{token}_", True, group) if "_" in token else (token, False, group)
                   for token, group in _DIM_TOKENS)

_split_non_alnum = re.compile(r"[^a-z0-9]+").split
_split_non_word = re.compile(r"[^a-z0-9_]+").split


@functools.lru_cache(maxsize=None)
def group_from_text(text: str) -> Optional[str]:
    """Guess a process group from an expression text (``get_tp_group()``,
    ``self.pp_comm``, ``mpu.get_data_parallel_group()``); None when no
    dimension token is present.  (Asked tens of thousands of times a run
    about a few thousand texts -- every group argument and field name of
    every analysed function -- and a function of the text alone: each
    answer is worked out once.)"""
    lowered = text.lower()
    pieces = _split_non_alnum(lowered)
    words = set(pieces) | set(_split_non_word(lowered))
    parts = set()
    for word in words:
        parts.update(word.split("_"))
    joined = "_" + "_".join(pieces) + "_"
    for token, several_words, group in _DIM_TESTS:
        if token in (joined if several_words else parts):
            return group
    if "world" in parts or "global" in parts:
        return "world"
    return None


# --------------------------------------------------------------------------
# Specs
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class CollectiveSpec:
    """A call pattern that is a collective.

    ``pattern`` matches the canonical dotted callee text (imports resolved) or
    the raw text.  ``group``: a fixed group, or None to infer it (``group=``
    keyword, ``group_arg`` position, the receiver's name, the method name).
    ``result``: ``uniform`` when the returned value is identical on every rank
    of the group (allgather/allreduce/broadcast), ``object`` when every rank
    gets one of the same kind whose contents are its own (``comm.Split``: a
    communicator on every rank, holding the ranks of this rank's color),
    ``shard`` when every rank gets a part of the same shape whose contents
    are its own (a reduce-scatter over equal splits; ``reduce_scatterv``'s
    per-rank sizes are ``local``), ``local`` otherwise.
    ``inplace``: positions of arguments that hold the group-uniform result
    after the call (``dist.all_reduce(t)``; ``comm.Allreduce(send, recv)``).
    ``receiver``: ``any``, ``comm`` (the receiver must look like a
    communicator, which keeps ``torch.gather``/``np.broadcast`` out) or
    ``named`` (the pattern's receiver names the library object,
    ``*.accelerator.gather``: the method name alone says nothing, so a
    function of that name elsewhere is not taken for a collective wrapper).
    """

    pattern: str
    api: str
    group: Optional[str] = None
    result: str = "uniform"
    inplace: tuple = ()
    inplace_kw: tuple = ()
    receiver: str = "any"
    group_arg: Optional[int] = None
    group_kw: str = "group"
    #: where the value a rank contributes is passed: positional index, or keywords
    payload: int = 0
    payload_kw: tuple = ()
    #: how a rank with nothing to contribute can still take part (the
    #: always-enter fix): ``none`` (no payload, a barrier), ``consumption``
    #: (a gathered list whose neutral item follows from how it is read), the
    #: name of a :class:`NeutralTable` (the identity of the call's reduction
    #: op), or ``""`` (no neutral value is known: broadcasts, scatters...)
    join: str = ""
    #: the :class:`AgreementTemplate` that agrees on a predicate in this API
    agreement: str = ""
    #: the call also runs local work that can fail on one rank (a framework's
    #: training loop): its exceptions are rank-local, unlike a bare collective's
    local_work: bool = False
    #: what a rank contributes is its own share of the data: the API gathers
    #: per-process results of a data-parallel job (a batch's outputs, its
    #: images, its token counts), so the values a function passes to it differ
    #: between ranks in structure as well as contents
    payload_local: bool = False
    #: where the root of a broadcast that returns what the root passed is
    #: named (positional index, keywords): on the rank that is the root, the
    #: payload it passed holds what every rank of the group gets back
    root_arg: Optional[int] = None
    root_kw: tuple = ()
    #: the operation the call performs where its name is a helper's, not the
    #: operation's (``tensor_model_parallel_all_reduce`` all-reduces over
    #: tp): two arms issuing the helper and the operation are in step
    operation: str = ""


#: Source kinds the analysis treats specially (see analysis/program.py).
KIND_DATA_SHARD = "per-rank data shard"  # contents differ, length does not
KIND_FILESYSTEM = "local filesystem view"  # counts where it decides a collective directly
KIND_GATHERED_DATA = "data this rank contributes to a gather"  # a parameter a data-parallel gather collects
KIND_FORWARD_INPUT = "this rank's batch, forwarded through a data-parallel module"  # input of a wrapped forward
KIND_STEP_BATCH = "this rank's batch, handed to a step hook"  # see Preset.batch_hooks
#: the order a set yields its elements in: hashes of objects (their ids) and
#: of strings (``PYTHONHASHSEED``) differ between processes, so the same set
#: iterates in a different order on each rank; only a loop reads it
KIND_ITERATION_ORDER = "per-process iteration order of a set"
#: the entries of a module-global container a function fills on first use
#: (``if key not in _TRACKER: _TRACKER[key] = ...``): what this process met
KIND_LAZY_REGISTRY = "registry filled lazily by this process"
#: when a background thread runs this process's code: a library's thread
#: calling back (a progress bar's refresh thread, on its timer; see
#: Preset.thread_callbacks), or a thread the file starts
KIND_THREAD_TIMING = "timing of a background thread"
#: this rank's share of the data: its values and sizes differ between ranks,
#: its kind does not (every rank runs the same code on the same kind of data)
KIND_ALIKE_KINDS = frozenset({KIND_DATA_SHARD, KIND_GATHERED_DATA, KIND_FORWARD_INPUT, KIND_STEP_BATCH})


@dataclass(frozen=True)
class SourceSpec:
    """A rank-local value: ``pattern`` on the dotted text of a call's callee
    (``what='call'``) or of a read expression (``what='value'``).

    ``dims`` maps a mode name (``''`` = no mode active) to the dimensions the
    value differs along; ``'*'`` is the default for every mode.
    """

    pattern: str
    kind: str
    what: str = "call"
    dims: tuple = (("*", ALL_DIMS),)

    def dims_in(self, modes: frozenset) -> frozenset:
        table = dict(self.dims)
        for mode in sorted(modes):
            if mode in table:
                return table[mode]
        if not modes and "" in table:
            return table[""]
        return table.get("*", frozenset())


@dataclass(frozen=True)
class ModeSpec:
    """A configuration predicate that changes which values are divergent."""

    name: str
    predicates: tuple  # dotted-text patterns of the predicate expression
    description: str = ""


#: Placeholders in fix templates: identifiers no program uses, so a template
#: parses as Python and the codemods substitute syntax nodes for them.
PREDICATE = "__cslint_predicate__"  # the rank-local condition being agreed on
FLAG = "__cslint_flag__"  # a fresh local name for an agreed flag
PAYLOAD = "__cslint_payload__"  # the payload argument of the collective
TENSOR = "__cslint_tensor__"  # a tensor parameter whose device a new tensor shares


@dataclass(frozen=True)
class AgreementTemplate:
    """How the ranks of a group agree on a predicate, in one API: any rank's
    ``PREDICATE`` holding makes the agreed test true on every rank.

    ``test`` is the agreed expression; ``setup`` statements run before it
    (``setup_on_device`` instead, when a tensor parameter gives the device).
    Format fields: ``{receiver}`` (the communicator as the calling code
    names it), ``{method}`` (the group's allgather, from ``methods``), and
    ``{group_kw}`` (``, group=<expr>`` or nothing).  ``methods`` maps a group
    to its allgather method where the API names groups by method; empty when
    a group is passed as an argument.
    """

    test: str
    setup: tuple = ()
    setup_on_device: tuple = ()
    imports: tuple = ()
    methods: tuple = ()  # ((group, method), ...)
    #: whether groups other than the world need a group expression
    needs_group_expr: bool = False
    #: templates to use instead where they apply: a module that already
    #: reduces with its own op enum agrees through that (see ``requires_name``)
    preferred: tuple = ()
    #: the template applies only in a module that binds this name (the op
    #: enum its own reductions pass), so no import is added
    requires_name: str = ""
    #: ((group, attribute of the communicator holding the group's size), ...)
    sizes: tuple = ()
    #: the test that holds when ``PREDICATE`` holds on every rank (same
    #: fields as ``test``); "" to say it as ``not`` the test of ``not P``
    all_test: str = ""

    def method_for(self, group: str) -> Optional[str]:
        return dict(self.methods).get(group)


@dataclass(frozen=True)
class NeutralTable:
    """The identity of each reduction op, for a rank that takes part in a
    reduction without contributing (``PAYLOAD`` stands for its payload).

    ``op`` names the keyword holding the op; ``default`` the op used when it
    is absent.  ``numeric_payload``: the identities are numbers, valid only
    for a payload that is visibly a number.  An op not in ``identities``
    (an average, a user-defined op, a variable) has no neutral value.
    """

    identities: tuple  # ((op name, expression), ...)
    default: str
    op: str = "op"
    op_arg: Optional[int] = None  # the op's position when passed positionally
    imports: tuple = ()
    numeric_payload: bool = False

    def identity(self, op_text: str) -> Optional[str]:
        name = op_text.rsplit(".", 1)[-1] if op_text else self.default
        return dict(self.identities).get(name)


@dataclass
class Preset:
    name: str
    collectives: list = field(default_factory=list)
    not_collectives: list = field(default_factory=list)  # patterns that must never match
    sources: list = field(default_factory=list)
    #: dotted patterns of uniform reads/calls: the same value on every rank,
    #: and a call among them fails (if it fails) on every rank alike, as its
    #: operands decide (a world size, a backend, a device's properties)
    uniform: list = field(default_factory=list)
    modes: list = field(default_factory=list)
    agreements: dict = field(default_factory=dict)  # name -> AgreementTemplate
    neutrals: dict = field(default_factory=dict)  # name -> NeutralTable
    #: members of a group object that give this rank's position *within
    #: that group* (``get_pp_group().is_last_rank``): they differ only along
    #: the dimensions of the group the receiver names
    relative_ranks: list = field(default_factory=list)
    #: ``hang`` for APIs whose launcher leaves the other ranks waiting when one
    #: rank raises (MPI-launched executors); "" says nothing
    unhandled_exceptions: str = ""
    #: calls that make a process group every member joins together
    #: (``init_process_group``, ``new_group``): they complete on every member
    #: or on none, so a member that fails before or inside one leaves no peer
    #: past it -- a collective reached only after it cannot be entered alone
    rendezvous: list = field(default_factory=list)
    #: calls (last dotted part) whose work can fail on one rank by that
    #: rank's own resources (a KV-cache allocation refused on a full rank):
    #: under ``unhandled-exceptions = "hang"``, like local I/O
    local_failures: list = field(default_factory=list)
    #: calls (canonical dotted names) that, made with no arguments, say
    #: whether this process is part of a distributed job
    #: (``torch.distributed.is_initialized()``): True in a world of several
    #: ranks, so a test of one folds there
    job_tests: list = field(default_factory=list)
    #: calls (canonical dotted names) that, made with no arguments, give the
    #: number of ranks of the whole job (``torch.distributed.get_world_size()``:
    #: the default group's size), so ``> 1`` of one holds wherever the job has
    #: several ranks
    world_sizes: list = field(default_factory=list)
    #: ``(pattern, methods)``: calls that wrap a module for data parallelism
    #: (``DistributedDataParallel(m)``, ``FullyShardedDataParallel(m)``,
    #: ``fully_shard(m)`` in place).  Calling the wrapped module runs its
    #: forward, which communicates (parameter all-gathers, buffer broadcasts),
    #: on this rank's own batch; the backward of what it computed all-reduces
    #: the gradients; ``methods`` are its other methods that communicate
    data_parallel_wrappers: list = field(default_factory=list)
    #: ``(pattern, methods)``: context managers under which the modules a
    #: function builds are partitioned over the ranks (``with
    #: deepspeed.zero.Init(): model = Model(config)``, ZeRO-3): calling such a
    #: module is a collective, like calling a wrapped one (its forward
    #: all-gathers the partitioned weights)
    partitioning_contexts: list = field(default_factory=list)
    #: ``(base pattern, methods)``: methods a framework calls on every rank
    #: with that rank's own batch as the first argument after ``self``, in a
    #: class derived from a base the pattern matches (a Lightning trainer hands
    #: each process its shard to ``training_step``): the batch differs between
    #: ranks in structure and contents
    batch_hooks: list = field(default_factory=list)
    #: ``(base pattern, methods)``: methods a library calls from a thread of
    #: its own, at times each process's scheduler and timers decide, in a
    #: class derived from a base the pattern matches (rich's auto-refresh
    #: thread calls every progress column's ``render`` several times a
    #: second): a collective reached from one runs a per-process number of
    #: times, interleaved with the main thread's collectives as it happens
    thread_callbacks: list = field(default_factory=list)
    #: point-to-point receives (last dotted part) that hand back what one peer
    #: sent (``x = dist.recv_object(src=prev_pp_rank)``); a receive into a
    #: buffer the caller passes (``pp_recv(tensor)``) is none
    p2p_receives: list = field(default_factory=list)
    #: point-to-point sends (last dotted part): the first argument goes to the peer
    p2p_sends: list = field(default_factory=list)
    #: the keywords naming a point-to-point call's peer (``src``, ``dst``);
    #: passed by position, it is a receive's first argument, a send's second
    p2p_peer_keywords: list = field(default_factory=list)
    #: how the framework lays its ranks out (:class:`World`); None: the generic lattice
    world: Optional[World] = None


@dataclass
class Knowledge:
    """All loaded presets merged, with fast lookups."""

    names: list
    collectives: list
    not_collectives: list
    sources: list
    uniform: list
    modes: list
    #: collective names that are also ordinary method names (``gather``,
    #: ``reduce``): a function of such a name is not followed across files by
    #: its name alone
    ambiguous_names: frozenset = frozenset()
    #: see :attr:`Preset.relative_ranks`
    relative_ranks: frozenset = frozenset()
    #: ``hang`` when a loaded preset says so, else ``crash`` (see :attr:`Preset.unhandled_exceptions`)
    unhandled_exceptions: str = "crash"
    #: see :attr:`Preset.rendezvous` (call names, last dotted part)
    rendezvous: frozenset = frozenset()
    #: see :attr:`Preset.local_failures` (call names, last dotted part)
    local_failures: frozenset = frozenset()
    #: see :attr:`Preset.job_tests` (canonical dotted names)
    job_tests: frozenset = frozenset()
    #: see :attr:`Preset.world_sizes` (canonical dotted names)
    world_sizes: frozenset = frozenset()
    #: see :attr:`Preset.data_parallel_wrappers` (canonical dotted patterns)
    data_parallel_wrappers: tuple = ()
    #: see :attr:`Preset.partitioning_contexts` (canonical dotted patterns)
    partitioning_contexts: tuple = ()
    #: see :attr:`Preset.batch_hooks` (canonical dotted base patterns)
    batch_hooks: tuple = ()
    #: see :attr:`Preset.thread_callbacks` (canonical dotted base patterns)
    thread_callbacks: tuple = ()
    #: the loaded presets' world (:attr:`Preset.world`): the one they declare, or
    #: the generic lattice where none or several different ones are declared
    world: World = GENERIC_WORLD
    #: see :attr:`Preset.p2p_receives`, :attr:`Preset.p2p_sends` (call names, last
    #: dotted part) and :attr:`Preset.p2p_peer_keywords`
    p2p_receives: frozenset = frozenset()
    p2p_sends: frozenset = frozenset()
    p2p_peer_keywords: frozenset = frozenset()

    @property
    def has_payload_local(self) -> bool:
        """Whether some collective gathers per-process data (:attr:`CollectiveSpec.payload_local`)."""
        return bool(self.payload_local_names)

    @property
    def payload_local_names(self) -> frozenset:
        """The last names of the collectives that gather per-process data."""
        memo = self.__dict__.get("_payload_local_names")
        if memo is None:
            memo = self.__dict__["_payload_local_names"] = frozenset(
                spec.pattern.rsplit(".", 1)[-1] for spec in self.collectives if spec.payload_local)
        return memo

    @property
    def job_test_names(self) -> frozenset:
        """The last names of :attr:`job_tests` (a cheap first look at a call)."""
        memo = self.__dict__.get("_job_test_names")
        if memo is None:
            memo = self.__dict__["_job_test_names"] = frozenset(name.rsplit(".", 1)[-1] for name in self.job_tests)
        return memo

    def operation(self, name: str) -> str:
        """The operation a collective of this last name performs
        (:attr:`CollectiveSpec.operation`): ``name`` itself unless a spec
        of that name says otherwise."""
        memo = self.__dict__.get("_operations")
        if memo is None:
            memo = self.__dict__["_operations"] = {
                spec.pattern.rsplit(".", 1)[-1].lstrip("*"): spec.operation
                for spec in self.collectives if spec.operation}
        return memo.get(name, name)

    def relative_rank_dims(self, receiver: str, member: str) -> Optional[frozenset]:
        """Dimensions a rank identity read from a group object differs along:
        those of the group the receiver's text names, when ``member`` is
        relative to its group (``get_pp_group().is_first_rank``: ``pp``);
        None when the member is not relative or the receiver names no group."""
        if member not in self.relative_ranks or not receiver:
            return None
        group = group_from_text(receiver)
        if group is None or group == "world" or group not in GROUP_SPANS:
            return None
        return self.world.span(group)

    def _index(self, specs: list) -> tuple:
        """(tail -> [(order, spec)] of the exact tails, [(order, spec)] of the
        tails ``*`` that every tail matches, [(order, spec, match)] of the
        other wildcard tails, a match of any of those or None)."""
        exact: dict = {}
        every: list = []
        wild: list = []
        for order, spec in enumerate(specs):
            tail = spec.pattern.rsplit(".", 1)[-1]
            if tail == "*":
                every.append((order, spec))  # ``random.*``: any tail
            elif any(ch in tail for ch in "*?["):
                # matched as fnmatch.fnmatchcase matches, compiled once
                wild.append((order, spec, fnmatch.translate(tail)))
            else:
                exact.setdefault(tail, []).append((order, spec))
        # most tails match no other wildcard: one combined match rules them all out
        any_wild = re.compile("|".join(f"(?:{pattern})" for _order, _spec, pattern in wild)).match if wild else None
        return exact, every, [(order, spec, re.compile(pattern).match) for order, spec, pattern in wild], any_wild

    def candidates(self, kind: str, tail: str) -> list:
        """Specs (``kind`` = ``collectives`` or ``sources``) whose pattern may
        match a dotted text ending in ``tail``, in declaration order."""
        memo = self.__dict__.get("_candidates")
        if memo is None:
            memo = self.__dict__["_candidates"] = {}
        result = memo.get((kind, tail))
        if result is not None:
            return result
        cache = self.__dict__.setdefault("_indexes", {})
        if kind not in cache:
            cache[kind] = self._index(getattr(self, kind))
        exact, every, wild, any_wild = cache[kind]
        found = exact.get(tail, [])
        if every or wild:
            matched = [(order, spec) for order, spec, match in wild if match(tail) is not None] \
                if wild and any_wild(tail) is not None else []
            found = sorted(found + every + matched, key=lambda pair: pair[0])
        result = [spec for _, spec in found]
        memo[(kind, tail)] = result
        return result

    def is_uniform(self, text: str) -> bool:
        """Whether a dotted text matches a preset ``uniform`` pattern."""
        rx = self.__dict__.get("_uniform_rx")
        if rx is None:
            rx = _compile_patterns(self.uniform)
            self.__dict__["_uniform_rx"] = rx
        return bool(rx.match(text)) if rx is not False else False

    def is_not_collective(self, text: str) -> bool:
        rx = self.__dict__.get("_notc_rx")
        if rx is None:
            rx = _compile_patterns(self.not_collectives)
            self.__dict__["_notc_rx"] = rx
        return bool(rx.match(text)) if rx is not False else False

    def mode_assignments(self) -> list:
        """Every combination of mode flags (empty set = all modes off)."""
        assignments = [frozenset()]
        for mode in self.modes:
            assignments = assignments + [a | {mode.name} for a in assignments]
        return assignments


# --------------------------------------------------------------------------
# Fix knowledge: shared by the analysis (fix facts), the rules and the codemods
# --------------------------------------------------------------------------

#: Every knowledge pack, by the name ``presets`` selects it with.
_PACKS = ("torch_distributed", "mpi4py", "tensorrt_llm", "vllm", "sglang", "deepspeed", "megatron", "accelerate",
          "lightning")

#: Builtins whose call neither communicates nor changes anything a rank can see.
PURE_BUILTINS = frozenset({
    "any", "all", "sum", "min", "max", "len", "bool", "int", "float", "str", "tuple", "list",
    "abs", "round", "isinstance", "sorted", "zip", "range", "enumerate", "set", "frozenset", "dict",
})

#: Words that mark a call as talking to other ranks (``send_object``,
#: ``tp_allgather``, ``broadcast_pyobj``...): a payload that calls one would
#: be observed by the other ranks, so no fix may move or duplicate it.
#: Matched by substring in any callee's last name (``analysis.callfacts.effects``:
#: a payload's effects in the fix facts the rules and codemods read), not per
#: API: the calls it must catch are mostly a project's own wrappers, which no
#: pack names, and a false match only withholds a fix.  It does not cover
#: every pack's collectives (MPI's ``Split``/``Scan``, Accelerate's
#: ``wait_for_everyone``, Lightning's ``fit`` hold none of the words).
COMMUNICATION_WORDS = ("send", "recv", "broadcast", "bcast", "gather", "allreduce", "all_reduce", "reduce",
                       "scatter", "barrier", "alltoall", "all_to_all", "publish")


def is_communicating_name(name: str) -> bool:
    """Whether a callee's last name looks like communication."""
    lowered = name.lower()
    return any(word in lowered for word in COMMUNICATION_WORDS)


@functools.lru_cache(maxsize=None)
def _fix_tables() -> tuple:
    agreements: dict = {}
    neutrals: dict = {}
    for name in _PACKS:
        preset = importlib.import_module(f"{__name__}.{name}").PRESET
        agreements.update(preset.agreements)
        neutrals.update(preset.neutrals)
    return agreements, neutrals


def agreement_template(name: str) -> Optional[AgreementTemplate]:
    """The agreement template a collective spec names (every pack's, whichever are enabled)."""
    return _fix_tables()[0].get(name) if name else None


def neutral_table(name: str) -> Optional[NeutralTable]:
    return _fix_tables()[1].get(name) if name else None


def covering_group(groups: Iterable[str], candidates: Iterable[str], world: World = GENERIC_WORLD) -> Optional[str]:
    """The smallest of ``candidates`` whose ranks include every rank of all
    ``groups`` (``{tp, cp}`` -> ``tp_cp``); None when none does.

    Agreeing over a larger group is still an agreement for each smaller one,
    provided every rank of the larger group reaches the guard -- true of SPMD
    loops, where all ranks run the same code.
    """
    groups = set(groups)
    if len(groups) == 1 and next(iter(groups)) in set(candidates):
        return next(iter(groups))
    needed = frozenset().union(*(world.span(g) for g in groups)) if groups else frozenset()
    fitting = [c for c in candidates if c in GROUP_SPANS and world.span(c) >= needed]
    if not fitting:
        return None
    return min(fitting, key=lambda c: (len(world.span(c)), c))


def render_agreement(name: str, receiver: str, group: str, group_expr: str = ""):
    """The agreement (:class:`~cslint.model.Agreement`) of template ``name``
    over ``group`` through ``receiver``, or None when this API cannot say it
    (no receiver, no allgather for the group, a group it cannot name)."""
    from ..model import Agreement

    template = agreement_template(name)
    if template is None or not receiver:
        return None
    method = ""
    if template.methods:
        method = template.method_for(group) or ""
        if not method:
            return None
    if template.needs_group_expr and group != "world" and not group_expr:
        return None
    fields = {"receiver": receiver, "method": method, "group_kw": f", group={group_expr}" if group_expr else ""}
    return Agreement(
        all_test=template.all_test.format(**fields),
        test=template.test.format(**fields),
        setup=tuple(line.format(**fields) for line in template.setup),
        setup_on_device=tuple(line.format(**fields) for line in template.setup_on_device),
        imports=template.imports,
        template=name,
    )


def render_single_rank_test(name: str, receiver: str, group: str) -> str:
    """A test that holds when ``group`` has one rank, in template ``name``'s
    API through ``receiver`` (``self.dist.pp_size == 1``); "" when unknown."""
    template = agreement_template(name)
    attribute = dict(template.sizes).get(group) if template is not None else None
    return f"{receiver}.{attribute} == 1" if attribute and receiver else ""


def agreement_groups(name: str) -> tuple:
    """The groups template ``name`` can agree over by method (empty: any, by argument)."""
    template = agreement_template(name)
    return tuple(group for group, _ in template.methods) if template is not None else ()


def _last_identifier(pattern: str) -> str:
    tail = pattern.split(":", 1)[0].rsplit(".", 1)[-1]
    return tail


def load_presets(names: Iterable[str]) -> Knowledge:
    """Load and merge presets by name (``torch_distributed``, ``mpi4py``,
    ``tensorrt_llm``, ``vllm``, ``sglang``, ``deepspeed``, ``megatron``).
    Unknown names raise ``ValueError`` with the list of known ones."""
    presets = []
    for name in names:
        if name not in _PACKS:
            raise ValueError(f"unknown preset {name!r}; known presets: {', '.join(_PACKS)}")
        presets.append(importlib.import_module(f"{__name__}.{name}").PRESET)
    return merge_presets(presets)


def merge_presets(presets: Iterable[Preset]) -> Knowledge:
    """The knowledge of ``presets`` together (a custom API's own pack beside the shipped ones)."""
    merged = Knowledge([], [], [], [], [], [])
    relative: set = set()
    rendezvous: set = set()
    worlds: set = set()
    for preset in presets:
        merged.names.append(preset.name)
        merged.collectives.extend(preset.collectives)
        merged.not_collectives.extend(preset.not_collectives)
        merged.sources.extend(preset.sources)
        merged.uniform.extend(preset.uniform)
        merged.modes.extend(preset.modes)
        relative.update(preset.relative_ranks)
        if preset.unhandled_exceptions == "hang":
            merged.unhandled_exceptions = "hang"
        rendezvous.update(preset.rendezvous)
        if preset.world is not None:
            worlds.add(preset.world)
        merged.local_failures |= frozenset(preset.local_failures)
        merged.job_tests |= frozenset(preset.job_tests)
        merged.world_sizes |= frozenset(preset.world_sizes)
        merged.p2p_receives |= frozenset(preset.p2p_receives)
        merged.p2p_sends |= frozenset(preset.p2p_sends)
        merged.p2p_peer_keywords |= frozenset(preset.p2p_peer_keywords)
        merged.data_parallel_wrappers += tuple(preset.data_parallel_wrappers)
        merged.partitioning_contexts += tuple(preset.partitioning_contexts)
        merged.batch_hooks += tuple((base, tuple(methods)) for base, methods in preset.batch_hooks)
        merged.thread_callbacks += tuple((base, tuple(methods)) for base, methods in preset.thread_callbacks)
    merged.relative_ranks = frozenset(relative)
    merged.rendezvous = frozenset(rendezvous)
    if len(worlds) == 1:  # presets that lay the ranks out differently leave the generic lattice
        merged.world = next(iter(worlds))
    strong, weak = set(), set()
    for spec in merged.collectives:
        tail = _last_identifier(spec.pattern).replace("*", "")
        if not tail or tail in _WEAK_NEEDLES:
            continue
        receiver = spec.pattern.rsplit(".", 1)[0] if "." in spec.pattern else ""
        fixed_prefix = bool(receiver) and "*" not in receiver
        ambiguous = tail in AMBIGUOUS_NAMES
        (weak if spec.receiver in ("comm", "named") or fixed_prefix or ambiguous else strong).add(tail)
    merged.ambiguous_names = frozenset(minimal_needles(weak) - minimal_needles(strong))
    return merged


# MPI names too common in ordinary code (``str.split``, ``ir.Scan``) to say
# anything about a function named after them.
_WEAK_NEEDLES = {"Split", "Split_type", "Scan", "Exscan"}


# Capitalised MPI names that also occur in ordinary identifiers (ReduceOp, GatherND).
_AMBIGUOUS_NAMES = {"Gather", "Reduce", "Scatter", "Alltoall", "Alltoallv", "Gatherv", "Scatterv"}

#: Collective names that are also ordinary names (``threading.Barrier``,
#: ``ir.Scan``, ``onnx.Gather``): the byte prefilter takes them only on a
#: communicator-looking receiver.
AMBIGUOUS_NAMES = frozenset(_AMBIGUOUS_NAMES | _WEAK_NEEDLES | {"Barrier"})


def minimal_needles(needles: set) -> set:
    """Drop needles that contain a shorter needle (the shorter one already
    selects every file the longer one would); str or bytes."""
    ordered = sorted(needles, key=len)
    kept: list = []
    for needle in ordered:
        if not any(short in needle for short in kept):
            kept.append(needle)
    return set(kept)


def _compile_patterns(patterns: list):
    if not patterns:
        return False
    return re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in patterns))


def fnmatch_any(text: str, patterns: Iterable[str]) -> bool:
    return any(fnmatch.fnmatchcase(text, p) for p in patterns)
