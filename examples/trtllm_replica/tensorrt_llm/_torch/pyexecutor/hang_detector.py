"""The executor's hang detector: aborts the job when an iteration stalls.

Each loop iteration calls `checkpoint()`; a daemon thread fires `on_hang` when
no checkpoint came for `timeout_s` seconds (the production default is 300 s).
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable


class HangDetector:
    def __init__(self, timeout_s: float = 300.0, on_hang: Callable[[], None] | None = None, rank: int = 0) -> None:
        self.timeout_s = timeout_s
        self.on_hang = on_hang
        self.rank = rank
        self._last = time.monotonic()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.fired = False

    def start(self) -> None:
        if self.timeout_s <= 0 or self._thread is not None:
            return
        self._last = time.monotonic()
        self._thread = threading.Thread(target=self._watch, name="hang-detector", daemon=True)
        self._thread.start()

    def checkpoint(self) -> None:
        self._last = time.monotonic()

    def stop(self) -> None:
        self._stop.set()

    def _watch(self) -> None:
        period = min(1.0, self.timeout_s / 4)
        while not self._stop.wait(period):
            if time.monotonic() - self._last > self.timeout_s:
                self.fired = True
                print(f"[rank {self.rank}] HangDetector: no progress for {self.timeout_s:.0f} s, aborting",
                      file=sys.stderr, flush=True)
                if self.on_hang is not None:
                    self.on_hang()
                return
