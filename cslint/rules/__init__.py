"""The rules: one module per rule, each a small class with docs and examples."""

from __future__ import annotations

from typing import Optional

from .base import Behaviour, Invalid, Rule, Scenario
from .csl001_not_analysable import NotAnalysable
from .csl002_unused_suppression import UnusedSuppression
from .csl101_divergent_branch import DivergentBranch
from .csl102_divergent_early_exit import DivergentEarlyExit
from .csl103_divergent_loop import DivergentLoop
from .csl104_divergent_exception import DivergentException

_RULES = (NotAnalysable, UnusedSuppression, DivergentBranch, DivergentEarlyExit, DivergentLoop, DivergentException)


def all_rules() -> list:
    """Every rule class, ordered by code."""
    return sorted(_RULES, key=lambda r: r.CODE)


def get_rule(code: str) -> Optional[type]:
    """The rule class for a code (case-insensitive), or None."""
    code = code.strip().upper()
    for rule in _RULES:
        if rule.CODE == code:
            return rule
    return None


def rule_for(hazard) -> Optional[type]:
    """The rule that reports an analysis hazard (None: no rule does)."""
    for rule in all_rules():
        if rule.reports(hazard):
            return rule
    return None


def build_finding(hazard, text_of=lambda span: ""):
    """The finding a rule makes of a hazard, or None when no rule reports it."""
    rule = rule_for(hazard)
    return rule.build_finding(hazard, text_of) if rule is not None else None


__all__ = ["Behaviour", "Invalid", "Rule", "Scenario", "all_rules", "build_finding", "get_rule", "rule_for"]
