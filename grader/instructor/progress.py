"""The one line an instructor watches while a long run grades: graded / failed / left, the
rate, the time left, the workers. On a terminal it is redrawn in place below the submissions'
lines; elsewhere (a log, CI) it is printed as a plain line every ``every`` seconds."""
from __future__ import annotations

import time

CLEAR = "\r\033[K"


class Progress:
    def __init__(self, total: int, out, every: float = 30.0, clock=time.monotonic):
        self.total, self.out, self.every, self.clock = total, out, every, clock
        self.graded = self.failed = 0
        self.started = clock()
        self._shown = None              # when a plain line was last printed
        self._drawn = False             # a line is on the terminal, to clear before printing
        try:
            self.tty = out.isatty()
        except (AttributeError, ValueError):
            self.tty = False

    def done(self, failed: bool) -> None:
        if failed:
            self.failed += 1
        else:
            self.graded += 1

    @property
    def left(self) -> int:
        return self.total - self.graded - self.failed

    def line(self, workers: int | None = None) -> str:
        finished, took = self.graded + self.failed, self.clock() - self.started
        rate = finished / took * 60 if finished and took > 0 else 0.0
        eta = format_eta(self.left / rate * 60) if rate else "-"
        text = (f"graded {self.graded} / failed {self.failed} / left {self.left} | "
                f"{rate:.1f} per minute | {eta} left")
        return text + ("" if workers is None else f" | {workers} worker(s)")

    def show(self, workers: int | None = None, force: bool = False) -> None:
        """Redraw (terminal) or, at most every ``every`` s unless ``force``, print the line."""
        if self.tty:
            self.out.write(CLEAR + self.line(workers))
            self.out.flush()
            self._drawn = True
            return
        now = self.clock()
        if force or self._shown is None or now - self._shown >= self.every:
            self._shown = now
            print("autograde: progress: " + self.line(workers), file=self.out, flush=True)

    def clear(self) -> None:
        """Before a line of its own is printed: take the progress line off the terminal."""
        if self.tty and self._drawn:
            self.out.write(CLEAR)
            self.out.flush()
            self._drawn = False


def format_eta(seconds: float) -> str:
    seconds = max(0, round(seconds))
    if seconds < 90:
        return f"{seconds} s"
    if seconds < 90 * 60:
        return f"{round(seconds / 60)} min"
    return f"{seconds // 3600} h {round(seconds % 3600 / 60):02d} min"
