"""Shared wording for divergence findings."""

from __future__ import annotations

MODE_NAMES = {"adp": "attention-DP"}


def describe_group(group: str) -> str:
    if group.startswith("group:"):
        return f"the group `{group[6:]}`"
    return f"the {group} group" if group != "world" else "all ranks"


def describe_source(hazard) -> str:
    source = hazard.source
    return f"`{source.text}` ({source.kind})"


def collective_phrase(hazard) -> str:
    site = hazard.site
    if hazard.direct:
        return f"collective `{site.callee}` over {describe_group(hazard.group)}"
    return f"`{site.callee}()` (which reaches collective `{hazard.collective}` over {describe_group(hazard.group)})"


def mode_suffix(hazard) -> str:
    if not hazard.modes:
        return ""
    names = ", ".join(MODE_NAMES.get(m, m) for m in hazard.modes)
    return f" [with {names} enabled]"
