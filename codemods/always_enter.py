"""The always-enter strategy as a libcst command.

    python -m libcst.tool codemod always_enter.AlwaysEnterCommand PATH [--exit-mode decide-from-gathered]

from the repository root (``.libcst.codemod.yaml`` lists the ``codemods``
package).  The command asks ``cslint.api.check_paths`` for the file's
findings and goes through the driver; the rewrite itself is
:mod:`codemods.always_enter_rewrite`.
"""

from __future__ import annotations

import argparse

import libcst as cst
from libcst.codemod import CodemodContext, VisitorBasedCodemodCommand

from .always_enter_rewrite import EXIT_MODES
from .driver import run_command_on_module


class AlwaysEnterCommand(VisitorBasedCodemodCommand):
    DESCRIPTION = (
        "cslint always-enter: move collectives out of rank-local guards and early exits; "
        "skipping ranks send a neutral value and still exit after the collective."
    )

    def __init__(self, context: CodemodContext, exit_mode: str = "keep-local") -> None:
        super().__init__(context)
        self.exit_mode = exit_mode

    @staticmethod
    def add_args(arg_parser: argparse.ArgumentParser) -> None:
        arg_parser.add_argument(
            "--exit-mode", dest="exit_mode", choices=EXIT_MODES, default="keep-local",
            help="keep-local: the skipping rank still exits after the collective (default); "
                 "decide-from-gathered: it decides from the gathered result instead",
        )

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        return run_command_on_module(self, tree, strategy="always-enter", exit_mode=self.exit_mode)
