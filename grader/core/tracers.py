"""What a function sees of its arguments under ``vmap``: tracer kinds, shapes and batch dims."""
from __future__ import annotations

from dataclasses import asdict, dataclass

import jax
import numpy as np

from . import _jax


@dataclass(frozen=True)
class Level:
    """One ``vmap`` layer of a value: the shape it shows, the value underneath, the batch dim."""
    shape: tuple[int, ...]
    val_shape: tuple[int, ...]
    batch_dim: int | None


@dataclass(frozen=True)
class ArgView:
    """What one argument looked like from inside the function (innermost vmap first)."""
    kind: str                 # "BatchTracer", "tracer" (another trace) or "concrete"
    type_name: str
    shape: tuple[int, ...]
    levels: tuple[Level, ...]

    @property
    def is_batch_tracer(self) -> bool:
        return self.kind == "BatchTracer"

    @property
    def batch_dim(self) -> int | None:
        return self.levels[0].batch_dim if self.levels else None

    @property
    def val_shape(self) -> tuple[int, ...]:
        return self.levels[0].val_shape if self.levels else self.shape

    def to_dict(self) -> dict:
        return asdict(self)


def _shape(x) -> tuple[int, ...]:
    return tuple(int(d) for d in np.shape(x))


def _kind(x) -> str:
    if _jax.is_batch_tracer(x):
        return "BatchTracer"
    return "tracer" if _jax.is_tracer(x) else "concrete"


def view(x) -> ArgView:
    """Describe ``x`` as a function under vmap received it, peeling nested BatchTracers."""
    levels, cur = [], x
    while _jax.is_batch_tracer(cur):
        levels.append(Level(_shape(cur), _shape(cur.val), cur.batch_dim))
        cur = cur.val
    return ArgView(_kind(x), type(x).__name__, _shape(x), tuple(levels))


def observe(f, in_axes, *args, out_axes=0, layers=None):
    """Run ``f`` under vmap and return ``(result, [ArgView per argument])`` as ``f`` saw them.

    ``layers`` wraps the observed function in further vmaps: a list of ``in_axes`` from the
    innermost outwards after the first (so nested vmaps report every level).
    """
    seen: list[ArgView] = []

    def spy(*xs):
        seen[:] = [view(x) for x in xs]
        return f(*xs)

    g = jax.vmap(spy, in_axes=in_axes, out_axes=out_axes)
    for axes in layers or ():
        g = jax.vmap(g, in_axes=axes)
    return g(*args), seen
