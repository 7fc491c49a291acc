"""Rank identity by name: what an identifier says about this process's
position among the ranks, where no preset pattern names the value.

``rank_name_dims`` answers along which parallel dimensions a name for this
rank's id (``rank``, ``tp_rank``, ``rank_in_group``, ``is_main_process``)
differs, and that a name ending in ``_rank`` that is not one (``src_rank``,
``kv_lora_rank``) is none; ``size_name_is_uniform`` says
which sizes (``world_size``, ``tp_size``) are the same on every rank; and
``names_neighbour_rank`` reads a point-to-point call's peer as the rank
before or after this one (``prev_pp_rank``, ``next_pp_rank``); ``pipeline_end``
the tests of the pipeline's first and last stage (``is_first_pp_rank``,
``is_last_stage``), read alike by the relays and the neighbour exchanges.  These are
naming conventions shared by the distributed frameworks, not one API's
calls, so they sit beside the packs rather than in one of them.
"""

from __future__ import annotations

import functools
import re
from typing import Optional

from .groups import ALL_DIMS, group_from_text, group_span

# Prefixes of ``*_rank`` identifiers that denote *this process's* position.
# Names such as ``src_rank``, ``root_rank`` or ``kv_lora_rank`` are agreed
# values or hyper-parameters and stay uniform.
_RANK_PREFIX_DIMS = {
    "": ALL_DIMS, "local": ALL_DIMS, "global": ALL_DIMS, "node": ALL_DIMS, "world": ALL_DIMS,
    "my": ALL_DIMS, "cur": ALL_DIMS, "current": ALL_DIMS, "this": ALL_DIMS, "self": ALL_DIMS,
    "process": ALL_DIMS, "proc": ALL_DIMS, "mpi": ALL_DIMS, "gpu": ALL_DIMS, "device": ALL_DIMS,
    "worker": ALL_DIMS, "group": ALL_DIMS, "global_rank": ALL_DIMS,
    "tp": frozenset({"tp"}), "tensor_model_parallel": frozenset({"tp"}), "tensor_parallel": frozenset({"tp"}),
    "slice_parallel": frozenset({"tp"}),
    "attn_tp": frozenset({"tp"}), "moe_tp": frozenset({"tp", "ep"}), "tp_cp": frozenset({"tp", "cp"}),
    "pp": frozenset({"pp"}), "pipeline_model_parallel": frozenset({"pp"}), "pipeline_parallel": frozenset({"pp"}),
    "cp": frozenset({"cp"}), "context_parallel": frozenset({"cp"}), "dcp": frozenset({"tp", "cp"}), "pcp": frozenset({"cp"}),
    "dp": frozenset({"dp"}), "data_parallel": frozenset({"dp"}), "attn_dp": frozenset({"dp", "tp"}),
    "ep": frozenset({"ep"}), "moe_ep": frozenset({"ep"}), "expert_model_parallel": frozenset({"ep"}),
    "expert_parallel": frozenset({"ep"}), "moe": frozenset({"ep"}), "sp": frozenset({"tp"}),
}


# Predicates on this process's position (``is_main_process``, ``is_driver_worker``).
_RANK_PREDICATES = {
    "is_main_process", "is_master", "is_rank_zero", "is_rank_0", "is_leader", "is_driver_worker",
    "is_local_main_process", "is_main_rank", "is_coordinator", "is_chief",
}


@functools.lru_cache(maxsize=65536)
def rank_name_dims(identifier: str) -> Optional[frozenset]:
    """Dimensions along which an identifier naming this process's rank differs,
    or None when the identifier is not a rank id (``rank``, ``local_rank``,
    ``tp_rank``, ``rank_in_group`` are; ``src_rank``, ``kv_lora_rank``,
    ``num_ranks`` are not)."""
    name = identifier.lower().lstrip("_")
    if name in ("rank", "rank_id", "rank_idx"):
        return ALL_DIMS
    if name in _RANK_PREDICATES:
        return ALL_DIMS
    for head in ("is_first_", "is_last_", "is_global_first_", "is_local_first_"):
        if name.startswith(head) and name.endswith("rank"):
            middle = name[len(head):-len("rank")].strip("_")
            if not middle:
                return ALL_DIMS
            return _RANK_PREFIX_DIMS.get(middle, ALL_DIMS)
    if name.startswith("rank_in_"):
        group = group_from_text(name[len("rank_in_"):])
        return group_span(group) if group else ALL_DIMS
    for suffix in ("_rank", "_rank_id", "_rank_idx"):
        if name.endswith(suffix):
            prefix = name[: -len(suffix)]
            return _RANK_PREFIX_DIMS.get(prefix)
    return None


#: Names of this process's rank in the whole world (not in a group, not on a node): the
#: rank ids ``new_group`` lists and ``get_process_group_ranks`` returns.
WORLD_RANK_NAMES = frozenset({"rank", "global_rank", "world_rank"})
#: Prefixes of ``*_rank`` that name this process without a group or a node position
#: (``current_rank``, ``my_rank``): as plain ``rank``, the world's rank id.
_WORLD_RANK_PREFIXES = frozenset({"my", "cur", "current", "this", "self", "process", "proc", "mpi"})


def names_world_rank(text: str) -> bool:
    """Whether ``text`` (a name, a dotted name, a call's text) reads this
    process's rank in the whole world: a world-rank name (``rank``,
    ``self.global_rank``, ``self.current_rank``) or ``get_rank()`` handed no
    group.  ``local_rank``, ``tp_rank`` and ``get_rank(group)`` are ranks of
    a node or a group, whose values are not the world's rank ids."""
    text = text.strip()
    if text.endswith("()"):
        return text[:-2].rpartition(".")[2] == "get_rank"
    name = text.rpartition(".")[2].lower().lstrip("_")
    return name in WORLD_RANK_NAMES or (name.endswith("_rank") and name[:-len("_rank")] in _WORLD_RANK_PREFIXES)


#: Words that make a rank word a position on one node (``local_rank``,
#: ``node_rank``, ``gpu_id``, ``LOCAL_RANK``): one process per node holds
#: each value, not one process of the group.
_PER_NODE_WORDS = frozenset({"local", "node", "gpu", "device"})


def names_node_position(text: str) -> bool:
    """Whether ``text`` (a name, a dotted name, a source's description) has
    a word naming a position on one node (``local_rank``,
    ``environment variable LOCAL_RANK``, ``get_node_local_rank()``)."""
    return not _PER_NODE_WORDS.isdisjoint(re.split(r"[^a-z0-9]+", text.lower()))


#: Words that name a rank's neighbour along a pipeline or ring in a point-to-point
#: call's peer (``src=self.dist.prev_pp_rank``): the rank before this one and after it.
NEIGHBOUR_RANK_WORDS = {"previous": ("prev",), "next": ("next",)}


def names_neighbour_rank(text: str, side: str) -> bool:
    """Whether a peer's text names this rank's ``side`` neighbour (``previous`` or ``next``)."""
    lowered = text.lower()
    return any(word in lowered for word in NEIGHBOUR_RANK_WORDS[side])


_PIPELINE_DIMS = frozenset({"pp"})


def pipeline_end(identifier: str) -> Optional[str]:
    """``first`` or ``last`` where ``identifier`` tests whether this rank runs
    the pipeline's first or last stage (``is_first_stage``,
    ``is_pipeline_last_stage``, ``is_last_pp_rank``); None for any other name."""
    name = identifier.lower().lstrip("_")
    for end in ("first", "last"):
        if name in (f"is_{end}_stage", f"is_pipeline_{end}_stage"):
            return end
        if name.startswith(f"is_{end}_") and name.endswith("rank") and rank_name_dims(name) == _PIPELINE_DIMS:
            return end
    return None


@functools.lru_cache(maxsize=65536)
def size_name_is_uniform(identifier: str) -> bool:
    """World and group sizes are the same on every rank (``world_size``,
    ``tp_size``, ``pipeline_model_parallel_size``, ``num_dp_ranks``)."""
    name = identifier.lower().lstrip("_")
    if name in ("world_size", "num_ranks", "nranks", "n_ranks", "group_size"):
        return True
    if name.endswith("world_size") or name.endswith("parallel_size"):
        return True
    if name.endswith("_size"):
        return name[: -len("_size")] in _SIZED_DIMS
    # a count of one dimension's ranks (``num_dp_ranks``, ``n_tp_ranks``) is that group's size
    for head in ("num_", "n_"):
        if name.startswith(head) and name.endswith("_ranks"):
            return name[len(head): -len("_ranks")] in _SIZED_DIMS
    return False


def is_size_name(identifier: str) -> bool:
    """Whether an identifier names a group's size as a variable's or a
    field's name does (``world_size``, ``tp_size``, ``nranks``, a bare ``size``)."""
    return identifier == "size" or size_name_is_uniform(identifier)  # (it takes nranks and world_size)


#: the dimension prefixes of group-size names (``tp_size``, ``num_tp_ranks``)
_SIZED_DIMS = frozenset({"tp", "pp", "cp", "dp", "ep", "tp_cp", "moe_tp", "moe_ep", "attn_tp", "attn_dp", "sp", "dcp",
                         "pcp"})


#: A group object's members that name its first member (a rank id of the
#: world, as a broadcast's root is given): ``group.first_rank``, and the first
#: of its member list, ``group.ranks[0]``.
FIRST_MEMBER_FIELDS = frozenset({"first_rank"})
MEMBER_LISTS = frozenset({"ranks"})
#: A group object's members that say this rank is its first member
#: (``group.is_first_rank``), and those giving this rank's position in the
#: group, first where it is 0 (``group.rank_in_group == 0``).
FIRST_RANK_FLAGS = frozenset({"is_first_rank"})
GROUP_POSITIONS = frozenset({"rank_in_group"})
