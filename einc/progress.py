"""A progress bar for long CLI work (benchmark suites, `einc tune`), on terminals only.

The bar is drawn on stderr with carriage-return updates, and only when stderr is a
terminal: in a pipe, a file or CI's log nothing is written at all, so saved output is the
same with or without it. ``EINC_PROGRESS=0`` turns it off on a terminal too. Lines that
the work prints meanwhile go through ``Progress.print``, which takes the bar off the line
first and draws it again below, so the two never garble each other.

>>> with Progress(3, "demo", stream=None) as bar:   # stream=None: sys.stderr at call time
...     for case in ("a", "b", "c"):
...         bar.advance(case)
"""
from __future__ import annotations

import os
import shutil
import sys
import time


def enabled_for(stream) -> bool:
    """Draw on ``stream``? Only a terminal, and not with EINC_PROGRESS=0 or TERM=dumb."""
    if os.environ.get("EINC_PROGRESS", "1") == "0" or os.environ.get("TERM") == "dumb":
        return False
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


class Progress:
    """``total`` units of work labelled ``label``; ``advance(item)`` after each unit."""

    WIDTH = 24  # characters of bar between the brackets
    INTERVAL = 0.1  # seconds between redraws (the last one is always drawn)

    def __init__(self, total: int, label: str = "", stream=None):
        self.total, self.label, self.done = max(int(total), 0), label, 0
        self.stream = sys.stderr if stream is None else stream
        self.on = enabled_for(self.stream)
        self.item, self.start, self.drawn_at, self.shown = "", time.monotonic(), 0.0, False

    def __enter__(self):
        self._draw(force=True)
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def advance(self, item: str = "", n: int = 1) -> None:
        """``n`` more units done; ``item`` names the one starting next (or just finished)."""
        self.done = min(self.done + n, self.total) if self.total else self.done + n
        self.item = item
        self._draw(force=self.done >= self.total)

    def set_item(self, item: str) -> None:
        """Name the unit in progress without counting it (e.g. before a slow case)."""
        self.item = item
        self._draw(force=True)

    def print(self, *args, file=None, **kwargs) -> None:
        """``print`` that keeps the bar below the printed lines."""
        self._clear()
        print(*args, file=file or sys.stdout, flush=True, **kwargs)
        self._draw(force=True)

    def close(self) -> None:
        """Take the bar off the screen (the work's own output stays)."""
        self._clear()
        self.on = False

    def line(self) -> str:
        """The text of the bar as it would be drawn now."""
        frac = self.done / self.total if self.total else 0.0
        fill = int(round(frac * self.WIDTH))
        elapsed = time.monotonic() - self.start
        eta = ""
        if 0 < self.done < self.total:
            eta = f" ~{_secs(elapsed / self.done * (self.total - self.done))} left"
        head = f"{self.label} " if self.label else ""
        text = (f"{head}[{'#' * fill}{'.' * (self.WIDTH - fill)}] {self.done}/{self.total} "
                f"{_secs(elapsed)}{eta}")
        if self.item:
            text += f"  {self.item}"
        cols = shutil.get_terminal_size((80, 24)).columns
        return text[:max(cols - 1, 10)]

    def _draw(self, force=False) -> None:
        if not self.on:
            return
        now = time.monotonic()
        if not force and now - self.drawn_at < self.INTERVAL:
            return
        self.drawn_at = now
        self._write("\r\x1b[2K" + self.line())
        self.shown = True

    def _clear(self) -> None:
        if self.on and self.shown:
            self._write("\r\x1b[2K")
            self.shown = False

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # a closed terminal never stops the work itself
            self.on = False


def _secs(t: float) -> str:
    if t < 60:
        return f"{t:.0f}s"
    return f"{int(t // 60)}m{int(t % 60):02d}s"
