"""libcst rewrites that make collectives rank-safe, driven by cslint findings.

* :mod:`codemods.always_enter_rewrite` -- every rank enters the collective; a rank
  that would have skipped it sends a neutral value and keeps its local exit.
* :mod:`codemods.consensus_rewrite` -- the rank-local condition becomes one agreed
  over the collectives' group.
* :mod:`codemods.driver` -- `plan_fixes` / `fix_source` / `write_fixes`, used by
  `cslint fix` (:mod:`codemods.cli`) and `tensorrt_llm_patch`.
* :mod:`codemods.always_enter`, :mod:`codemods.consensus_gate` -- the two
  strategies as libcst commands.

Standalone (from the repository root, which holds `.libcst.codemod.yaml`)::

    python -m libcst.tool codemod always_enter.AlwaysEnterCommand PATH
    python -m libcst.tool codemod consensus_gate.ConsensusGateCommand PATH
"""

from .driver import (
    AppliedFix,
    FileFix,
    FixPlan,
    RefusedFix,
    fix_source,
    plan_fixes,
    write_fixes,
)

__all__ = ["AppliedFix", "FileFix", "FixPlan", "RefusedFix", "fix_source", "plan_fixes", "write_fixes"]
