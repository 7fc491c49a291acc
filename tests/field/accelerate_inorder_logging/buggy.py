"""Ordered multi-process logging: a rank-local branch in front of a barrier loop.

Upstream: huggingface/accelerate, fix commit e8f22fce8c51295b86f607cf88d487a8902c4de4
          (issue #3939, "Fix in_order logging parameter (deadlock/ignored)").
Group: world (every process of the accelerate PartialState).
Why ranks diverge: with main_process_only=True and in_order=True the main
process takes the "may emit" arm and logs once, while every other process
falls into the in-order arm and waits in `wait_for_everyone()` for a turn
loop the main process never enters.
Variant: buggy -- the emit check and the in-order loop are exclusive arms.
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
        if self._emits_here(main_only):
            self.logger.log(level, msg, *args, **kwargs)
        elif ordered:
            state = PartialState()
            for turn in range(state.num_processes):
                if turn == state.process_index:
                    self.logger.log(level, msg, *args, **kwargs)
                state.wait_for_everyone()  # expect: CSL101
