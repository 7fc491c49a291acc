"""What a knowledge pack declares: collective and source specs, modes, the
fix templates (agreements, neutral values) and the :class:`Preset` that
holds them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from .groups import ALL_DIMS, World


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
    #: the attribute by which a group object gives the name it is registered
    #: under, where the call is told its group by that name
    #: (``torch.ops.symm_mem.multimem_all_reduce_(t, "sum", group.group_name)``):
    #: the call runs over the group the attribute is read from
    group_by_name: str = ""

    def group_object(self, text: str) -> str:
        """The text of the group a group argument's text ``text`` names: the
        object it reads the group's name from (:attr:`group_by_name`), else ``text``."""
        suffix = f".{self.group_by_name}" if self.group_by_name else ""
        return text[:-len(suffix)] if suffix and text.endswith(suffix) and len(text) > len(suffix) else text


#: Source kinds the analysis treats specially (see analysis/program.py).
KIND_DATA_SHARD = "per-rank data shard"  # contents differ, length does not
KIND_FILESYSTEM = "local filesystem view"  # counts where it decides a collective directly
KIND_RANK_ID = "rank id"  # the kind of source a rank's own id is
KIND_DEVICE_ID = "device id"  # the kind of source this rank's device is, one the runtime found for it
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
#: whether this rank is in the list a group of the module was made from
#: (``rank in ranks`` of ``new_group(ranks)``), as a value: alike on that
#: group's members and on no other group's (``analysis/guards.py`` reads it
#: as this rank's id for a collective over any other group; it has no
#: dimensions of its own, so a value carried out of its function is read as
#: before, the same on every rank)
KIND_GROUP_MEMBERSHIP = "membership in a group's own list of ranks"
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
    #: calls (last dotted part) that tear every rank of the job down (a
    #: world kill after a rank's crash): a ``try`` whose handler calls one,
    #: or whose ``finally`` does under a flag that handler sets, turns an
    #: exception out of its body into the end of the job, not a hang
    #: (analysis/jobkills.py)
    job_ending_calls: list = field(default_factory=list)
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
    #: classes (canonical dotted names) no value of this rank's share of the data is an instance of (a model,
    #: an optimizer, a learning-rate scheduler): where ``isinstance(x, C)`` passed, ``x`` is not such data
    #: (:mod:`~cslint.analysis.typetests`)
    no_data_classes: list = field(default_factory=list)
    #: collections (canonical dotted names) that hold only the names of such classes (a library's list of
    #: its learning-rate schedulers' class names): where ``type(x).__name__ in NAMES`` passed, ``x`` is not
    #: such data either (:mod:`~cslint.analysis.typetests`)
    no_data_class_names: list = field(default_factory=list)
    #: ``(pattern, word)``: settings (dotted patterns) read as a group's parallel degree: where one is false or 1
    #: (``enable_cfg_parallel``, ``sp_degree``), the groups whose names carry ``word`` have one rank
    #: (:func:`~cslint.analysis.edges.switched_group`)
    group_switches: list = field(default_factory=list)
    #: ``(name, position)``: calls (canonical dotted names) that map the tree passed at ``position`` leaf by leaf,
    #: rebuilding its containers as they are (torch's ``tree_map_only``): the result has the tree's containers,
    #: their types, keys and lengths, with other leaves (:mod:`~cslint.analysis.mirrors`)
    structure_maps: list = field(default_factory=list)
    #: ``(pattern, methods)``: calls that wrap a module for data parallelism
    #: (``DistributedDataParallel(m)``, ``FullyShardedDataParallel(m)``,
    #: ``fully_shard(m)`` in place).  Calling the wrapped module runs its
    #: forward, which communicates (parameter all-gathers, buffer broadcasts),
    #: on this rank's own batch; the backward of what it computed all-reduces
    #: the gradients; ``methods`` are its other methods that communicate
    data_parallel_wrappers: list = field(default_factory=list)
    #: ``(pattern, names)``: calls that hand back the module passed first, changed in place, its class
    #: extended by ``names`` (``fully_shard(m)``): the result holds ``m``'s attributes and those names
    #: (:mod:`~cslint.analysis.lackednames`)
    in_place_wrappers: list = field(default_factory=list)
    #: ``(pattern, names)``: library base classes whose instances hold ``names`` and, beside them, only what
    #: their subclasses bind (``torch.nn.Module``: its methods and ``training``; parameters, buffers and
    #: submodules are bound by the subclass, by name): an attribute a subclass never binds is not there
    #: (:mod:`~cslint.analysis.lackednames`)
    attribute_bases: list = field(default_factory=list)
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
    #: the names of methods a library runs on an object of a class derived
    #: from one of its own without any call naming them (``module(x)`` runs
    #: ``torch.nn.Module.forward``, ``thread.start()`` runs
    #: ``threading.Thread.run``): a method of such a name, of any class, is
    #: never run only where the calls naming it are made
    #: (:mod:`~cslint.analysis.processes`).  The name alone, not the base:
    #: a class reaches the library's base through classes of other
    #: libraries the tree does not hold (a model deriving from another
    #: package's module class), which no lineage read here would follow.
    protocol_methods: list = field(default_factory=list)
    #: point-to-point receives (last dotted part) that hand back what one peer
    #: sent (``x = dist.recv_object(src=prev_pp_rank)``); a receive into a
    #: buffer the caller passes (``pp_recv(tensor)``) is none
    p2p_receives: list = field(default_factory=list)
    #: point-to-point receives (last dotted part) that fill the buffer passed
    #: as their first argument with what one peer sent (``dist.recv(t,
    #: group_src=pp_rank - 1)``): a helper that receives a parameter so from
    #: the stage before and sends it on to the stage after relays it in place
    #: (``agreedbuffers.relayed_in_place``)
    p2p_filling_receives: list = field(default_factory=list)
    #: point-to-point sends (last dotted part): the first argument goes to the peer
    p2p_sends: list = field(default_factory=list)
    #: the keywords naming a point-to-point call's peer (``src``, ``dst``);
    #: passed by position, it is a receive's first argument, a send's second
    p2p_peer_keywords: list = field(default_factory=list)
    #: ``(name, direction, position, keyword)``: a framework's exchange between
    #: two pipeline stages (a canonical dotted name), run as a collective over
    #: the two ranks of this stage and the peer stage it names, and over them
    #: alone (DeepSpeed's ``p2p.send(t, dest_stage)``: a broadcast over the
    #: group of the two stages); ``direction``: ``send`` or ``recv``; the peer
    #: is passed at ``position`` or as ``keyword``
    pair_exchanges: list = field(default_factory=list)
    #: ``(name, separator, fields)``: a group coordinator's name, made from the name of the group it
    #: was created as (vLLM's ``unique_name``, ``"tp:0"`` for ``group_name="tp"``: the part before
    #: ``separator``), and its fields holding that group's process groups (``cpu_group``,
    #: ``device_group``), the same in an object the coordinator hands its name and groups to
    #: together (its device communicator); :mod:`~cslint.analysis.namedgroups`
    group_names: list = field(default_factory=list)
    #: how the framework lays its ranks out (:class:`World`); None: the generic lattice
    world: Optional[World] = None
