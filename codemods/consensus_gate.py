"""The consensus strategy as a libcst command.

    python -m libcst.tool codemod consensus_gate.ConsensusGateCommand PATH

from the repository root.  The command asks ``cslint.api.check_paths`` for
the file's findings and goes through the driver; the rewrite itself is
:mod:`codemods.consensus_rewrite`.
"""

from __future__ import annotations

import libcst as cst
from libcst.codemod import VisitorBasedCodemodCommand

from .driver import run_command_on_module


class ConsensusGateCommand(VisitorBasedCodemodCommand):
    DESCRIPTION = (
        "cslint consensus gate: replace a rank-local branch/exit condition by one agreed over the "
        "collectives' group (allgather/allreduce of the local predicate)."
    )

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        return run_command_on_module(self, tree, strategy="consensus", exit_mode="keep-local")
