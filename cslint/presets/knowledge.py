"""The loaded packs merged (:class:`Knowledge`, with fast lookups), and the
collective names too common in ordinary code to select a file or a function
by."""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field
from typing import Iterable, Optional

from .groups import GENERIC_WORLD, GROUP_SPANS, World, group_from_text
from .specs import Preset


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
    #: see :attr:`Preset.job_ending_calls` (call names, last dotted part)
    job_ending_calls: frozenset = frozenset()
    #: see :attr:`Preset.job_tests` (canonical dotted names)
    job_tests: frozenset = frozenset()
    #: see :attr:`Preset.world_sizes` (canonical dotted names)
    world_sizes: frozenset = frozenset()
    #: see :attr:`Preset.no_data_classes` (canonical dotted names)
    no_data_classes: frozenset = frozenset()
    #: see :attr:`Preset.no_data_class_names` (canonical dotted names)
    no_data_class_names: frozenset = frozenset()
    #: see :attr:`Preset.group_switches`
    group_switches: tuple = ()
    #: see :attr:`Preset.group_names`: ``((name, separator, frozenset(fields)), ...)``
    group_names: tuple = ()
    #: see :attr:`Preset.structure_maps`: {canonical name: position of the tree}
    structure_maps: dict = field(default_factory=dict)
    #: see :attr:`Preset.data_parallel_wrappers` (canonical dotted patterns)
    data_parallel_wrappers: tuple = ()
    #: see :attr:`Preset.in_place_wrappers`: ((canonical dotted pattern, frozenset(names)), ...)
    in_place_wrappers: tuple = ()
    #: see :attr:`Preset.attribute_bases`: ((canonical dotted pattern, frozenset(names)), ...)
    attribute_bases: tuple = ()
    #: see :attr:`Preset.partitioning_contexts` (canonical dotted patterns)
    partitioning_contexts: tuple = ()
    #: see :attr:`Preset.batch_hooks` (canonical dotted base patterns)
    batch_hooks: tuple = ()
    #: see :attr:`Preset.thread_callbacks` (canonical dotted base patterns)
    thread_callbacks: tuple = ()
    #: the method names of :attr:`Preset.protocol_methods`
    protocol_methods: frozenset = frozenset()
    #: the loaded presets' world (:attr:`Preset.world`): the one they declare, or
    #: the generic lattice where none or several different ones are declared
    world: World = GENERIC_WORLD
    #: the loaded presets' worlds scoped to their packages (:attr:`World.packages`):
    #: how the code of those packages names its groups (:meth:`world_of`)
    scoped_worlds: tuple = ()
    #: see :attr:`Preset.p2p_receives`, :attr:`Preset.p2p_sends` (call names, last
    #: dotted part) and :attr:`Preset.p2p_peer_keywords`
    p2p_receives: frozenset = frozenset()
    p2p_filling_receives: frozenset = frozenset()
    p2p_sends: frozenset = frozenset()
    p2p_peer_keywords: frozenset = frozenset()
    #: see :attr:`Preset.pair_exchanges`: {canonical name: (direction, position, keyword)}
    pair_exchanges: dict = field(default_factory=dict)

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

    def world_of(self, module: str) -> World:
        """The world whose words name the groups of ``module``'s code: the scoped
        world of a loaded preset that describes it, else :attr:`world`.  (The
        spans of the groups are :attr:`world`'s everywhere: a scoped world only
        reads its package's texts as other groups of the lattice.)"""
        if not self.scoped_worlds:
            return self.world
        memo = self.__dict__.setdefault("_scoped_world_of", {})
        found = memo.get(module, False)
        if found is False:
            found = memo[module] = next((w for w in self.scoped_worlds if w.describes(module)), None)
        return self.world if found is None else found

    def broadcasts(self, name: str) -> bool:
        """Whether a collective of this last name (or operation) hands one
        rank's payload to the others: a spec of that name names its root
        (:attr:`CollectiveSpec.root_arg`), or the name says broadcast."""
        memo = self.__dict__.get("_broadcasts")
        if memo is None:
            memo = self.__dict__["_broadcasts"] = frozenset(
                named for spec in self.collectives if spec.root_arg is not None or spec.root_kw
                for named in (spec.pattern.rsplit(".", 1)[-1].lstrip("*"), spec.operation) if named)
        return name in memo or "broadcast" in name

    def relative_rank_dims(self, receiver: str, member: str, group_of=group_from_text) -> Optional[frozenset]:
        """Dimensions a rank identity read from a group object differs along:
        those of the group the receiver's text names (``group_of``: as the
        module that reads it names its groups, :meth:`world_of`), when
        ``member`` is relative to its group (``get_pp_group().is_first_rank``:
        ``pp``); None when the member is not relative or the receiver names no group."""
        if member not in self.relative_ranks or not receiver:
            return None
        group = group_of(receiver)
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
        matcher = self.__dict__.get("_uniform_rx")
        if matcher is None:
            matcher = self.__dict__["_uniform_rx"] = _PatternMatcher(self.uniform)
        return matcher.matches(text)

    def is_not_collective(self, text: str) -> bool:
        matcher = self.__dict__.get("_notc_rx")
        if matcher is None:
            matcher = self.__dict__["_notc_rx"] = _PatternMatcher(self.not_collectives)
        return matcher.matches(text)

    def mode_assignments(self) -> list:
        """Every combination of mode flags (empty set = all modes off)."""
        assignments = [frozenset()]
        for mode in self.modes:
            assignments = assignments + [a | {mode.name} for a in assignments]
        return assignments


def _last_identifier(pattern: str) -> str:
    tail = pattern.split(":", 1)[0].rsplit(".", 1)[-1]
    return tail


def merge_presets(presets: Iterable[Preset]) -> Knowledge:
    """The knowledge of ``presets`` together (a custom API's own pack beside the shipped ones)."""
    merged = Knowledge([], [], [], [], [], [])
    relative: set = set()
    rendezvous: set = set()
    worlds: set = set()
    scoped: list = []
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
        if preset.world is not None and preset.world.packages:
            if preset.world.factors or preset.world.inside or preset.world.named:
                raise ValueError(f"preset {preset.name!r}: a world scoped to packages declares words only")
            scoped.append(preset.world)
        elif preset.world is not None:
            worlds.add(preset.world)
        merged.local_failures |= frozenset(preset.local_failures)
        merged.job_ending_calls |= frozenset(preset.job_ending_calls)
        merged.job_tests |= frozenset(preset.job_tests)
        merged.world_sizes |= frozenset(preset.world_sizes)
        merged.no_data_classes |= frozenset(preset.no_data_classes)
        merged.no_data_class_names |= frozenset(preset.no_data_class_names)
        merged.group_switches += tuple(preset.group_switches)
        merged.group_names += tuple((name, separator, frozenset(fields))
                                    for name, separator, fields in preset.group_names)
        merged.structure_maps.update(preset.structure_maps)
        merged.p2p_receives |= frozenset(preset.p2p_receives)
        merged.p2p_filling_receives |= frozenset(preset.p2p_filling_receives)
        merged.p2p_sends |= frozenset(preset.p2p_sends)
        merged.p2p_peer_keywords |= frozenset(preset.p2p_peer_keywords)
        merged.pair_exchanges.update((name, (direction, position, keyword))
                                     for name, direction, position, keyword in preset.pair_exchanges)
        merged.data_parallel_wrappers += tuple(preset.data_parallel_wrappers)
        merged.partitioning_contexts += tuple(preset.partitioning_contexts)
        merged.in_place_wrappers += tuple((pattern, frozenset(names)) for pattern, names in preset.in_place_wrappers)
        merged.attribute_bases += tuple((pattern, frozenset(names)) for pattern, names in preset.attribute_bases)
        merged.batch_hooks += tuple((base, tuple(methods)) for base, methods in preset.batch_hooks)
        merged.thread_callbacks += tuple((base, tuple(methods)) for base, methods in preset.thread_callbacks)
        merged.protocol_methods |= frozenset(preset.protocol_methods)
    merged.relative_ranks = frozenset(relative)
    merged.rendezvous = frozenset(rendezvous)
    if len(worlds) == 1:  # presets that lay the ranks out differently leave the generic lattice
        merged.world = next(iter(worlds))
    merged.scoped_worlds = tuple(scoped)
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


class _PatternMatcher:
    """Whether a dotted text matches one of a list of fnmatch patterns, as
    one combined regex of them all says, without running it for most texts.
    A pattern whose last part (past its last ``.``) has no wildcard matches
    only a text whose last part is that very word (a ``.`` in a pattern is
    a ``.`` in the text, and the text's last part holds no ``.``); the
    others (``get_*_world_size``: a ``*`` may span dots) are kept in a
    regex of their own.  So a text whose last part no such word is needs
    only that one, which is tried for every text the analysis asks about
    (a few hundred thousand on a large tree), most of them matching
    nothing."""

    __slots__ = ("_every", "_words", "_wild")

    def __init__(self, patterns: list):
        self._every = _compile_patterns(patterns)
        tails = [p.rsplit(".", 1)[-1] for p in patterns]
        self._words = frozenset(tail for tail in tails if not any(ch in tail for ch in "*?["))
        self._wild = _compile_patterns([p for p, tail in zip(patterns, tails) if tail not in self._words])

    def matches(self, text: str) -> bool:
        if self._every is False:
            return False
        if text.rsplit(".", 1)[-1] in self._words:
            return bool(self._every.match(text))
        return self._wild is not False and bool(self._wild.match(text))


def fnmatch_any(text: str, patterns: Iterable[str]) -> bool:
    return any(fnmatch.fnmatchcase(text, p) for p in patterns)
