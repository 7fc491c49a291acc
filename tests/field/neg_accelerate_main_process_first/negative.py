"""Negative (safe): staggered barriers -- the main process goes first, the others wait.

Upstream: huggingface/accelerate, src/accelerate/state.py, `PartialState._goes_first`
          behind `main_process_first()` (mirror HEAD 16cb6eb80dd9aa8b4df1a63ef57863e455d53b83).
Group: world (`wait_for_everyone()`).
Why it looks divergent: each of the two barriers sits under a rank test.
Why it is safe: the tests are complementary -- non-main processes enter the
first barrier, the main process enters the second, and those two barrier
calls are the same collective instance: every process issues exactly one.
"""

from contextlib import contextmanager

from accelerate import PartialState


class OrderedState:
    def __init__(self):
        self.state = PartialState()

    @contextmanager
    def _goes_first(self, is_main):
        if not is_main:
            self.state.wait_for_everyone()
        yield
        if is_main:
            self.state.wait_for_everyone()

    @contextmanager
    def main_process_first(self):
        with self._goes_first(self.state.is_main_process):
            yield


def prepare_dataset(ordered, build):
    with ordered.main_process_first():
        return build()
