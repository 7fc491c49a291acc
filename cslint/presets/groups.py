"""The group lattice: the parallel dimensions a value may differ along, the
dimensions each process group spans (the generic lattice, or the world a
preset declares), and the group an expression's text names.

Divergence is tracked as a set of *parallel dimensions* over which a value
may differ: ``tp``, ``pp``, ``cp``, ``dp``, ``ep`` and ``x`` (any other or
unknown split).  A process group spans some dimensions (``tp`` spans
``{tp}``, ``tp_cp`` spans ``{tp, cp}``, the world and unnamed groups span
all).  A collective over G is endangered by a condition that may differ
along a dimension G spans.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Iterable, Optional

ALL_DIMS = frozenset({"tp", "pp", "cp", "dp", "ep", "x"})

#: groups cut out of another group's ranks (a DCP group is some of the TP
#: ranks): they span the dimensions their ranks differ along, but never hold
#: every rank of a group spanning those, so they cover no other group
SLICE_GROUPS = frozenset({"dcp"})

#: groups only a preset's scoped world reads a text of its own code as
#: (:attr:`World.words`); the generic reading knows the group's own word alone
#: (:data:`_DIM_TOKENS`), as a call hands the world's group on by it: so no
#: group of the tree is known to hold the same ranks, and they cover no other group
DECLARED_GROUPS = frozenset({"tp_cp_dp_ep"})

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
    # a decode-context-parallel group is cut out of the TP ranks: consecutive
    # ranks of one TP group (SGLang), or of TP x PCP with prefill context
    # parallelism (vLLM), so its ranks differ along ``tp`` as well as ``cp``
    # (torch and Megatron say "DCP" for the distributed checkpoint, never a group)
    "dcp": frozenset({"tp", "cp"}),
    # a tensor-parallel group that holds the context-, data- and expert-parallel
    # ranks of its stage too, as factors of its own ranks (SGLang's TP group:
    # attention TP x attention CP x attention DP, and MoE EP x DP x TP)
    "tp_cp_dp_ep": frozenset({"tp", "cp", "dp", "ep"}),
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

    A world scoped to ``packages`` says how the code of those packages names
    its groups (:attr:`words`: SGLang's runtime reads the group of attention
    TP x CP x DP ranks off its parallel state, ``get_parallel().tp_group``),
    and applies there alone
    (:meth:`~cslint.presets.Knowledge.world_of`): the same words elsewhere
    keep the generic reading (vLLM's ``tp_group`` is a plain TP group).  It
    names groups of the lattice, whose spans are the run's world's
    everywhere, so a group word handed on to another module spans there
    what it spans where it was read; it declares no factors of its own.
    """

    factors: tuple = ()
    inside: tuple = ()
    #: ``(group, dimensions)`` pairs the analysed tree's own getters define
    #: (``get_dp_tp_group()`` returning a TP subgroup either way spans ``{tp}``
    #: there; :mod:`cslint.analysis.groupgetters`), read before :data:`GROUP_SPANS`
    named: tuple = ()
    #: the packages (dotted module prefixes, ``("sglang.srt",)``) whose code this
    #: world's :attr:`words` describe; empty: every module
    packages: tuple = ()
    #: ``(word, group)`` pairs: a dotted form (``get_tp_group``,
    #: ``get_parallel.tp_group``) that names ``group`` where an expression's text
    #: holds it in this world's packages (SGLang's TP group is ``tp_cp_dp_ep``),
    #: read before the generic tokens (:meth:`own_group`)
    words: tuple = ()
    _memo: dict = field(default_factory=dict, compare=False, hash=False, repr=False)
    _word_memo: dict = field(default_factory=dict, compare=False, hash=False, repr=False)

    def with_named(self, named: tuple) -> "World":
        """This world where the groups of ``named`` span what it says (a fresh memo)."""
        return World(self.factors, self.inside, tuple(named), self.packages, self.words)

    def describes(self, module: str) -> bool:
        """Whether ``module``'s code is laid out as this world says (one of :attr:`packages` or inside one)."""
        return any(module == package or module.startswith(package + ".") for package in self.packages)

    def own_group(self, text: str) -> Optional[str]:
        """The group one of :attr:`words` names in an expression's text, or None:
        a word is a dotted form that the text holds as whole parts, calls'
        parentheses left out (``get_parallel.tp_group`` in
        ``get_parallel().tp_group.cpu_group``)."""
        if not self.words:
            return None
        found = self._word_memo.get(text, False)
        if found is False:
            parts = "." + text.replace("()", "").lower() + "."
            found = self._word_memo[text] = next(
                (group for word, group in self.words if "." + word + "." in parts), None)
        return found

    def group_from_text(self, text: str) -> Optional[str]:
        """The group an expression's text names in this world's code: the one
        its :attr:`words` name (:meth:`own_group`), else the generic reading
        (:func:`group_from_text`)."""
        return self.own_group(text) or group_from_text(text)

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
    ("tp_cp_dp_ep", "tp_cp_dp_ep"),  # (a declared group's own word, as a world's words hand it on)
    ("tp_cp", "tp_cp"), ("cp_tp", "tp_cp"), ("dp_tp", "dp_tp"), ("tp_dp", "dp_tp"),
    ("tensor_model_parallel", "tp"), ("tensor_parallel", "tp"), ("tp", "tp"), ("tensor", "tp"),
    # DeepSpeed's pipeline grid calls its Megatron-style tensor-slicing group (the model-parallel ranks of one
    # stage) "slice parallel": ``grid.get_slice_parallel_group()``, ``get_slice_parallel_rank()``
    ("slice_parallel", "tp"),
    ("pipeline_model_parallel", "pp"), ("pipeline_parallel", "pp"), ("pipe_parallel", "pp"), ("pipeline", "pp"),
    ("pp", "pp"),
    ("context_parallel", "cp"), ("cp", "cp"), ("dcp", "dcp"), ("pcp", "cp"),
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
    fitting = [c for c in candidates if c in GROUP_SPANS and c not in SLICE_GROUPS and c not in DECLARED_GROUPS
               and world.span(c) >= needed]
    if not fitting:
        return None
    return min(fitting, key=lambda c: (len(world.span(c)), c))
