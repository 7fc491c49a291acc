"""The shipped knowledge packs, by the name ``presets`` selects each with, and
their loading: ``load_presets(names)`` merges the named packs (plus nothing
else)."""

from __future__ import annotations

import importlib
from typing import Iterable

from .knowledge import Knowledge, merge_presets
from .specs import Preset

#: Every knowledge pack, by the name ``presets`` selects it with.
PACKS = ("torch_distributed", "mpi4py", "tensorrt_llm", "vllm", "sglang", "deepspeed", "megatron", "accelerate",
         "lightning")


def pack(name: str) -> Preset:
    """The shipped pack ``name`` (a module of this package)."""
    return importlib.import_module(f"{__package__}.{name}").PRESET


def load_presets(names: Iterable[str]) -> Knowledge:
    """Load and merge presets by name (``torch_distributed``, ``mpi4py``,
    ``tensorrt_llm``, ``vllm``, ``sglang``, ``deepspeed``, ``megatron``).
    Unknown names raise ``ValueError`` with the list of known ones."""
    presets = []
    for name in names:
        if name not in PACKS:
            raise ValueError(f"unknown preset {name!r}; known presets: {', '.join(PACKS)}")
        presets.append(pack(name))
    return merge_presets(presets)
