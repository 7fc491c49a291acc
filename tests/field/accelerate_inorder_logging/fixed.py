"""Ordered multi-process logging: a rank-local branch in front of a barrier loop.

Upstream: huggingface/accelerate, fix commit e8f22fce8c51295b86f607cf88d487a8902c4de4
          (issue #3939, "Fix in_order logging parameter (deadlock/ignored)").
Group: world (every process of the accelerate PartialState).
Why ranks diverge: see buggy.py.
Variant: fixed -- `in_order` is decided first from the call's arguments (the
same on every process); the main-process check only applies outside it, so
either every process runs the turn loop or none does.
"""

import logging

from accelerate import PartialState


class RankOrderedLogger(logging.LoggerAdapter):
    def _emits_here(self, main_only):
        state = PartialState()
        return not main_only or state.is_main_process

    def log(self, level, msg, *args, **kwargs):
        main_only = kwargs.pop("main_process_only", True)
        ordered = kwargs.pop("in_order", False)
        if not self.isEnabledFor(level):
            return
        if ordered:
            state = PartialState()
            for turn in range(state.num_processes):
                if turn == state.process_index:
                    self.logger.log(level, msg, *args, **kwargs)
                state.wait_for_everyone()
        elif self._emits_here(main_only):
            self.logger.log(level, msg, *args, **kwargs)
