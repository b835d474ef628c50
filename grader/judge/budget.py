"""The time one submission may take: one `Budget`, from the start of its grading, for its grading
kernel and all its judge children, which run at the same time (``ahead.py``)."""
from __future__ import annotations

import time
from dataclasses import replace


class Budget:
    """Wall-clock seconds one submission may take from its start: its grading kernel and all its
    judge children (the first and every per-exercise retry), which run at the same time
    (``ahead.py``). Spent, the kernel is stopped and no child is started. Cancelled (the
    submission failed while its judge ran ahead), the child running is killed and no other
    starts."""

    DEFAULT_S = 300.0

    def __init__(self, seconds: float = DEFAULT_S):
        self.seconds, self.start = float(seconds), time.monotonic()
        self.cancelled, self._stop = False, None

    @property
    def used(self) -> float:
        return time.monotonic() - self.start

    def left(self) -> float:
        return 0.0 if self.cancelled else self.seconds - self.used

    def cancel(self) -> None:
        self.cancelled = True
        stop = self._stop
        if stop is not None:
            stop()

    def running(self, stop) -> None:
        """``stop`` kills the child now running (``None``: none runs); called by `run_argv`."""
        self._stop = stop
        if stop is not None and self.cancelled:   # cancelled while it was being started
            stop()

    def cap(self, limits):
        """``limits`` (a child's `sandbox.Limits`) with no more wall-clock time than is left."""
        return replace(limits, wall_s=min(limits.wall_s, max(self.left(), 0.0)))

    def spent(self, where: str = "") -> str:
        return (f"timed out{' in ' + where if where else ''}: the submission's "
                f"{self.seconds:.0f} s (its kernel and the judge together) ran out")


def submission_budget(resources: dict, seconds: float) -> Budget:
    """The one `Budget` of the notebook nbgrader is grading (``resources`` is nbgrader's, one
    per notebook), made by whichever of ``JudgeAhead``, ``BoundedExecute`` and
    ``JudgeExercises`` asks first, so that the kernel and the judge draw on the same time."""
    held = resources.setdefault("inside_vmap", {})
    if not isinstance(held.get("budget"), Budget):
        held["budget"] = Budget(seconds)
    return held["budget"]
