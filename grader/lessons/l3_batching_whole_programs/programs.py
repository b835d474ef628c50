"""Programs inside programs, built from plain-data specs and read back from their batched jaxprs.

The exercises describe a ``lax.cond``, a ``lax.scan`` or a ``lax.while_loop`` as plain data (which
operands are batched, which values each output reads). Here such a spec becomes a real JAX
function, is batched with ``jax.vmap`` on the installed JAX, and what JAX made of it is read off
the jaxpr and the tracers: nothing about vmap's rules is written down here, JAX computes every
answer. Every per-example array is a ``(3,)`` vector; the batch size never equals 3.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from ... import core
from ...core import _jax

WIDTH = 3


def _vector(rng, batched: bool, size: int):
    shape = (size, WIDTH) if batched else (WIDTH,)
    return jnp.asarray(rng.standard_normal(shape).astype(np.float32))


def _sum_of(values, reads, wrap=lambda v: v):
    """``sum(wrap(values[j]) for j in reads)``; an output reading nothing is a constant."""
    acc = jnp.zeros(WIDTH, jnp.float32)
    for j in reads:
        acc = acc + wrap(values[j])
    return acc


def _out_dims(fn, in_axes, args, size: int) -> list:
    """Where the batch axis of each output of ``fn`` is, read off its tracers inside vmap."""
    seen = []

    def spy(*xs):
        out = fn(*xs)
        seen[:] = [core.view(o).batch_dim for o in jax.tree_util.tree_leaves(out)]
        return out

    jax.eval_shape(jax.vmap(spy, in_axes=in_axes, axis_size=size), *args)
    return seen


def _widened(jaxpr, inputs, size: int) -> list[int]:
    """Which of the program's inputs ``inputs`` (positions among its invars) a top-level
    broadcast_in_dim widens to the full batch before use."""
    graph, eqns = core.flow(jaxpr), core.summarize(jaxpr)
    found = set()
    for (name, ins, _, _), eqn in zip(graph["eqns"], eqns):
        if name == "broadcast_in_dim" and ins and ins[0] in inputs and \
                eqn.out_shapes[0][:1] == (size,) and eqn.in_shapes[0][:1] != (size,):
            found.add(inputs.index(ins[0]))
    return sorted(found)


# ---- cond ----------------------------------------------------------------------------------------

def cond_program(case):
    """``(fn, in_axes, args)``: ``lax.cond(p, true_branch, false_branch, *operands)``."""
    rng, size = np.random.default_rng(case.get("_seed", 0)), case["B"]
    ops = [_vector(rng, o, size) for o in case["operands"]]
    pred = jnp.asarray(rng.random(size) < 0.5) if case["pred"] else jnp.asarray(True)

    def branch(outputs, wrap):
        return lambda *o: tuple(_sum_of(o, reads, wrap) for reads in outputs)

    def fn(p, *operands):
        return lax.cond(p, branch(case["true"], jnp.sin), branch(case["false"], jnp.cos),
                        *operands)

    in_axes = (0 if case["pred"] else None, *(0 if o else None for o in case["operands"]))
    return fn, in_axes, [pred, *ops]


def jax_cond_plan(case) -> dict:
    """What the installed JAX makes of the case's cond under vmap, read off its batched jaxpr."""
    fn, in_axes, args = cond_program(case)
    jaxpr = jax.make_jaxpr(jax.vmap(fn, in_axes=in_axes, axis_size=case["B"]))(*args)
    operands = list(range(1, len(args)))
    return {"kept": "cond" in core.primitives(core.summarize(jaxpr)),
            "widened": _widened(jaxpr, operands, case["B"]),
            "out_batched": [d is not None for d in _out_dims(fn, in_axes, args, case["B"])]}


# ---- scan ----------------------------------------------------------------------------------------

def scan_program(case):
    """``(fn, in_axes, args)``: a scan over ``xs`` (length T) with a closed-over const ``k``."""
    rng, size = np.random.default_rng(case.get("_seed", 0)), case["B"]
    inits = [_vector(rng, c["init"], size) for c in case["carries"]]
    steps = case.get("T", 4)
    xs = jnp.asarray(rng.standard_normal((size, steps, WIDTH) if case["xs"] else (steps, WIDTH))
                     .astype(np.float32))
    k = _vector(rng, case["const"], size)

    def fn(xs, k, *init):
        def body(c, x):
            new = tuple(0.5 * _sum_of(c, s["reads"]) + (x if s["x"] else 0.0)
                        + (k if s["k"] else 0.0) for s in case["carries"])
            ys = tuple(_sum_of(c, y["reads"]) + (x if y["x"] else 0.0) for y in case["ys"])
            return new, ys
        return lax.scan(body, tuple(init), xs)

    in_axes = (0 if case["xs"] else None, 0 if case["const"] else None,
               *(0 if c["init"] else None for c in case["carries"]))
    return fn, in_axes, [xs, k, *inits]


def jax_scan_plan(case) -> dict:
    fn, in_axes, args = scan_program(case)
    jaxpr = jax.make_jaxpr(jax.vmap(fn, in_axes=in_axes, axis_size=case["B"]))(*args)
    n = len(case["carries"])
    dims = _out_dims(fn, in_axes, args, case["B"])
    return {"carry": [d is not None for d in dims[:n]],
            "ys": [d is not None for d in dims[n:]],
            "broadcast": _widened(jaxpr, list(range(2, 2 + n)), case["B"])}


# ---- while ---------------------------------------------------------------------------------------

BIG = 1e9      # a bound no carry reaches: it makes the predicate read a carry, never stop it


def while_program(case):
    """``(fn, in_axes, args)``: ``i < limit`` (and, per ``pred_reads``, ``sum(c_j) < BIG``),
    counting ``i`` up from an unbatched 0; the other carries update as in `scan_program`."""
    rng, size = np.random.default_rng(case.get("_seed", 0)), case["B"]
    inits = [_vector(rng, c["init"], size) for c in case["carries"]]
    limit = jnp.asarray(case["limits"] if case["limit"] else case["limits"][0], jnp.int32)
    k = _vector(rng, case["const"], size)

    def fn(limit, k, *init):
        def cond(state):
            i, c = state
            ok = i < limit
            for j in case["pred_reads"]:
                ok = ok & (jnp.sum(c[j]) < BIG)
            return ok

        def body(state):
            i, c = state
            new = tuple(0.5 * _sum_of(c, s["reads"]) + (k if s["k"] else 0.0)
                        for s in case["carries"])
            return i + 1, new

        return lax.while_loop(cond, body, (jnp.int32(0), tuple(init)))

    in_axes = (0 if case["limit"] else None, 0 if case["const"] else None,
               *(0 if c["init"] else None for c in case["carries"]))
    return fn, in_axes, [limit, k, *inits]


def _predicate_batched(jaxpr) -> bool:
    """Whether the batched while's cond_jaxpr returns a batch of booleans, not one."""
    eqn = next(e for e in _jax.open_jaxpr(jaxpr).eqns if e.primitive.name == "while")
    out = _jax.open_jaxpr(eqn.params["cond_jaxpr"]).outvars[0]
    return bool(np.shape(out.aval))


def jax_while_plan(case) -> dict:
    fn, in_axes, args = while_program(case)
    jaxpr = jax.make_jaxpr(jax.vmap(fn, in_axes=in_axes, axis_size=case["B"]))(*args)
    dims = _out_dims(fn, in_axes, args, case["B"])
    own = [int(n) for n in (case["limits"] if case["limit"] else case["limits"][:1] * case["B"])]
    trips = max(own)
    return {"pred_batched": _predicate_batched(jaxpr), "carry": [d is not None for d in dims],
            "trips": trips, "held": [trips - n for n in own]}


__all__ = ["cond_program", "jax_cond_plan", "jax_scan_plan", "jax_while_plan", "scan_program",
           "while_program"]
