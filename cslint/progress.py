"""A one-line progress bar on stderr for long runs in a terminal.

``cslint check`` shows it when stderr is a terminal and the tree has more than
:data:`MIN_FILES` files; redirected or small runs print nothing (CI logs stay
clean).  Redraws are throttled, and the line is cleared when the run ends.
"""

from __future__ import annotations

import sys
import time
from typing import Optional, TextIO

MIN_FILES = 200
WIDTH = 30


class ProgressBar:
    def __init__(self, stream: Optional[TextIO] = None, interval: float = 0.1):
        self.stream = stream if stream is not None else sys.stderr
        self.interval = interval
        self.label = ""
        self.total = 0
        self.done = 0
        self._last_draw = 0.0
        self._drawn = False

    def start(self, label: str, total: int) -> None:
        self.label, self.total, self.done = label, max(0, total), 0
        self._draw(force=True)

    def expect(self, count: int = 1) -> None:
        """More files joined the current phase (files are chosen as it runs)."""
        self.total += count
        self._draw()

    def advance(self, count: int = 1) -> None:
        self.done = min(self.total, self.done + count)
        self._draw(force=self.done == self.total)

    def note(self, text: str) -> None:
        """A phase without a count (the whole-tree analysis)."""
        self.label, self.total, self.done = text, 0, 0
        self._draw(force=True)

    def render(self) -> str:
        if self.total <= 0:
            return f"cslint: {self.label}"
        filled = WIDTH * self.done // self.total
        return (f"cslint: {self.label} [{'#' * filled}{'.' * (WIDTH - filled)}] "
                f"{self.done}/{self.total} files")

    def _draw(self, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._last_draw < self.interval:
            return
        self._last_draw = now
        self.stream.write("\r\x1b[2K" + self.render())
        self.stream.flush()
        self._drawn = True

    def close(self) -> None:
        if self._drawn:
            self.stream.write("\r\x1b[2K")
            self.stream.flush()
            self._drawn = False
