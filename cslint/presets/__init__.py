"""Knowledge packs: which calls are collectives over which group, which values
are rank-local, which are uniform, and which predicates select a mode.

A preset holds API knowledge only, never verdicts on particular functions.
``load_presets(names)`` merges the named packs (plus nothing else); the
analysis adds the user's ``[tool.cslint]`` patterns on top.

The package's modules: :mod:`.groups` (the parallel dimensions and the group
lattice, the group an expression's text names), :mod:`.specs` (what a pack
declares: :class:`Preset` and its specs and templates), :mod:`.knowledge`
(the packs merged, with fast lookups), :mod:`.registry` (the shipped packs
and their loading), :mod:`.fixes` (every pack's fix tables, for the rules and
the codemods), :mod:`.rank_names` (what an identifier says about this rank),
and one module per pack.  Everything the rest of cslint uses is importable
from the package itself.
"""

from __future__ import annotations

from .fixes import (
    COMMUNICATION_WORDS,
    PURE_BUILTINS,
    agreement_groups,
    agreement_template,
    is_communicating_name,
    neutral_table,
    permission_test,
    render_agreement,
    render_single_rank_test,
)
from .groups import (
    ALL_DIMS,
    GENERIC_WORLD,
    GROUP_SPANS,
    World,
    covering_group,
    group_from_text,
    group_span,
)
from .knowledge import (
    AMBIGUOUS_NAMES,
    Knowledge,
    fnmatch_any,
    merge_presets,
    minimal_needles,
)
from .registry import PACKS, load_presets
from .specs import (
    FLAG,
    KIND_ALIKE_KINDS,
    KIND_DATA_SHARD,
    KIND_DEVICE_ID,
    KIND_FILESYSTEM,
    KIND_FORWARD_INPUT,
    KIND_GATHERED_DATA,
    KIND_GROUP_MEMBERSHIP,
    KIND_ITERATION_ORDER,
    KIND_LAZY_REGISTRY,
    KIND_RANK_ID,
    KIND_STEP_BATCH,
    KIND_THREAD_TIMING,
    PAYLOAD,
    PREDICATE,
    TENSOR,
    AgreementTemplate,
    CollectiveSpec,
    ModeSpec,
    NeutralTable,
    Preset,
    SourceSpec,
)

__all__ = [
    "ALL_DIMS", "AMBIGUOUS_NAMES", "COMMUNICATION_WORDS", "FLAG", "GENERIC_WORLD", "GROUP_SPANS",
    "KIND_ALIKE_KINDS", "KIND_DATA_SHARD", "KIND_DEVICE_ID", "KIND_FILESYSTEM", "KIND_FORWARD_INPUT",
    "KIND_GATHERED_DATA", "KIND_GROUP_MEMBERSHIP", "KIND_ITERATION_ORDER", "KIND_LAZY_REGISTRY", "KIND_RANK_ID",
    "KIND_STEP_BATCH", "KIND_THREAD_TIMING", "PACKS",
    "PAYLOAD", "PREDICATE", "PURE_BUILTINS", "TENSOR", "AgreementTemplate", "CollectiveSpec", "Knowledge", "ModeSpec",
    "NeutralTable", "Preset", "SourceSpec", "World", "agreement_groups", "agreement_template", "covering_group",
    "fnmatch_any", "group_from_text", "group_span", "is_communicating_name", "load_presets", "merge_presets",
    "minimal_needles", "neutral_table", "permission_test", "render_agreement", "render_single_rank_test",
]
