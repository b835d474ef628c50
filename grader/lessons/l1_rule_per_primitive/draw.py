"""Small helpers the lesson's exercises share to draw cases and word findings."""
from __future__ import annotations

from ...exercise import describe
from ...feedback import Finding


def insert(shape, axis, size) -> tuple[int, ...]:
    """``shape`` with a new axis of ``size`` where ``in_axes=axis`` says (negative counts from the end)."""
    pos = axis % (len(shape) + 1)
    return tuple(shape[:pos]) + (size,) + tuple(shape[pos:])


def axis(rng, rank) -> int:
    """A random in_axes entry for a value of ``rank`` axes, negative half of the time."""
    pos = int(rng.integers(0, rank))
    return pos - rank if rng.random() < 0.5 else pos


def shape(rng, rank, low=2, high=5) -> tuple[int, ...]:
    return tuple(int(d) for d in rng.integers(low, high + 1, size=rank))


def finding(case, expected, got, hint) -> Finding:
    return Finding(describe(case), str(expected), str(got), hint)
