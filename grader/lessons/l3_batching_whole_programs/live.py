"""What lesson 3 measures live: the cost of a batched program (equations, its largest array), the
trip counts of a batched while loop, and lax.map's chunking. Nothing JAX can tell us is written
down here."""
from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax

from ... import core
from ...core import _jax
from .kit.observe import array_sizes


def cost(fn, *args) -> dict:
    """Equations (inner programs included) and the largest array any of them makes, in bytes."""
    jaxpr = jax.make_jaxpr(fn)(*args)
    eqns = core.summarize(jaxpr, recursive=True)
    sizes = array_sizes(jaxpr)
    return {"equations": len(eqns), "top_level": len(core.summarize(jaxpr)),
            "largest_bytes": max((b for _, b in sizes), default=0),
            "primitives": core.primitives(eqns)}


def loop_trips(limits) -> tuple[int, list[list[int]]]:
    """vmap a ``while i < n: i += 1`` over the per-example ``limits`` and record what each
    example's body saw on each run of the batched body: ``(runs, counters per example)``. A
    finished example's body still runs; the select in the loop's lowering keeps its old carry,
    so it sees the same counter again."""
    seen: list[tuple[int, int]] = []

    def count_up(n, example):
        def body(i):
            jax.debug.callback(lambda e, v: seen.append((int(e), int(v))), example, i)
            return i + 1
        return lax.while_loop(lambda i: i < n, body, jnp.int32(0))

    limits = jnp.asarray(limits, jnp.int32)
    finals = jax.vmap(count_up)(limits, jnp.arange(len(limits)))
    jax.effects_barrier()
    per_example = [[v for e, v in seen if e == ex] for ex in range(len(limits))]
    assert [int(v) for v in finals] == [int(n) for n in limits]
    return len(seen) // len(limits), per_example


def count_batching_passes(fn, *args) -> int:
    """How many times a rule handed a program to ``batch_jaxpr`` or ``batch_jaxpr_axes`` while
    ``fn`` was traced (the outermost call each time: on some releases one calls the other)."""
    module, names = _jax.batching, ("batch_jaxpr", "batch_jaxpr_axes")
    originals, depth, count = {n: getattr(module, n) for n in names}, [0], [0]

    def counting(original):
        def call(*a, **k):
            count[0] += depth[0] == 0
            depth[0] += 1
            try:
                return original(*a, **k)
            finally:
                depth[0] -= 1
        return call

    for n in names:
        setattr(module, n, counting(originals[n]))
    try:
        jax.make_jaxpr(fn)(*args)
    finally:
        for n in names:
            setattr(module, n, originals[n])
    return count[0]


def map_costs(fn, xs, batch_sizes) -> list[dict]:
    """``lax.map(fn, xs, batch_size=b)`` for each b (None: one example a step), and vmap."""
    rows = []
    for b in batch_sizes:
        rows.append({"how": f"lax.map batch_size={b}",
                     **cost(lambda a, b=b: lax.map(fn, a, batch_size=b), xs)})
    rows.append({"how": "vmap", **cost(jax.vmap(fn), xs)})
    return rows


__all__ = ["cost", "count_batching_passes", "loop_trips", "map_costs"]
