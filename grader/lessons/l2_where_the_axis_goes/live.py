"""What lesson 2 shows live: the eight calls of ``mv``, the ``dot`` and reduction calls of its
self-checks, each traced on the installed JAX when asked. Nothing JAX can tell us is written
down here."""
from __future__ import annotations

import jax
import jax.numpy as jnp

from ... import core


def mv(A, v):
    return A @ v


# (in_axes, out_axes, shapes of the stacked arguments). Rows 3 and 4 are one call written with a
# positive and a negative in_axes; rows 5 and 7 differ only in out_axes.
MV_CALLS = (
    ((0, None), 0, ((5, 2, 3), (3,))),
    ((0, None), 1, ((5, 2, 3), (3,))),
    ((1, None), 0, ((2, 5, 3), (3,))),
    ((-2, None), 0, ((2, 5, 3), (3,))),
    ((None, 0), 0, ((2, 3), (5, 3))),
    ((0, 0), 0, ((5, 2, 3), (5, 3))),
    ((None, 0), 1, ((2, 3), (5, 3))),
    ((2, -1), 0, ((2, 3, 5), (3, 5))),
)


def mv_table() -> list[dict]:
    """The eight calls traced on this JAX: result shape and equation list of each."""
    rows = []
    for number, (in_axes, out_axes, shapes) in enumerate(MV_CALLS, start=1):
        g = jax.vmap(mv, in_axes=in_axes, out_axes=out_axes)
        eqns = core.summarize_fn(g, *[jnp.ones(s) for s in shapes])
        out = jax.eval_shape(g, *[jnp.ones(s) for s in shapes])
        rows.append({"row": number, "in_axes": in_axes, "out_axes": out_axes,
                     "A": shapes[0], "v": shapes[1], "shape": tuple(out.shape),
                     "prims": core.primitives(eqns), "eqns": eqns})
    return rows


def format_mv_calls() -> str:
    """The eight calls without their results, for predicting."""
    lines = ["row  in_axes      out_axes  A          v"]
    for number, (in_axes, out_axes, shapes) in enumerate(MV_CALLS, start=1):
        lines.append(f"{number:<4} {str(in_axes):<12} {out_axes:<9} {str(shapes[0]):<10} "
                     f"{shapes[1]}")
    return "\n".join(lines)


def format_mv_table(rows) -> str:
    lines = ["row  in_axes      out_axes  A          v        result   equations"]
    for r in rows:
        lines.append(f"{r['row']:<4} {str(r['in_axes']):<12} {r['out_axes']:<9} "
                     f"{str(r['A']):<10} {str(r['v']):<8} {str(r['shape']):<8} "
                     f"{', '.join(r['prims'])}")
    return "\n".join(lines)


def dot(a, b):
    return a @ b


# dot(a, b) with a (6,) and b (6, 4): (in_axes, stacked shapes). The lesson shows the method on
# other calls (a (8,), b (8, 5), batched (0, None) and (0, 0)), never on these: a self-check
# whose answer was printed earlier checks nothing. The batch comes before the contracting axis
# in some calls and after it in others.
DOT_CALLS = (
    ((None, 0), ((6,), (32, 6, 4))),
    ((0, 1), ((32, 6), (6, 32, 4))),
    ((1, None), ((6, 32), (6, 4))),
    ((None, 2), ((6,), (6, 4, 32))),
)


def format_dot_calls() -> str:
    lines = ["call  in_axes      a          b"]
    for number, (in_axes, shapes) in enumerate(DOT_CALLS, start=1):
        lines.append(f"{number:<5} {str(in_axes):<12} {str(shapes[0]):<10} {shapes[1]}")
    return "\n".join(lines)


def dot_numbers(number: int):
    """The ``dimension_numbers`` of the one dot_general of DOT_CALLS[number - 1], batched."""
    in_axes, shapes = DOT_CALLS[number - 1]
    eqns = core.summarize_fn(jax.vmap(dot, in_axes=in_axes), *[jnp.ones(s) for s in shapes])
    return next(e.param("dimension_numbers") for e in eqns if e.primitive == "dot_general")


# (per-example reduction axis or None for "all", in_axes, stacked shape); per example x is (6, 2).
# The lessons sum axis 0 of (3, 5) examples batched at 0 and at 1; these are other calls.
REDUCE_CALLS = (
    (1, 0, (4, 6, 2)),
    (0, 2, (6, 2, 4)),
    (1, 1, (6, 4, 2)),
    (1, 2, (6, 2, 4)),
    (None, 1, (6, 4, 2)),
)


def format_reduce_calls() -> str:
    lines = ["call  per example               in_axes  stacked x"]
    for number, (axis, in_axes, shape) in enumerate(REDUCE_CALLS, start=1):
        lines.append(f"{number:<5} {f'jnp.sum(x, axis={axis})':<25} {in_axes:<8} {shape}")
    return "\n".join(lines)


def reduce_axes(number: int):
    """The ``axes`` of the reduce_sum of REDUCE_CALLS[number - 1], batched."""
    axis, in_axes, shape = REDUCE_CALLS[number - 1]
    eqns = core.summarize_fn(jax.vmap(lambda x: jnp.sum(x, axis=axis), in_axes=in_axes),
                             jnp.ones(shape))
    return next(e.param("axes") for e in eqns if e.primitive == "reduce_sum")


watch_matchaxis = core.watch_matchaxis


# Where rules move axes and widen unmapped operands: one function per rule, batched over B = 8
# examples with the stacked shapes given.
# (label, the primitive whose rule is asked, function, in_axes, out_axes, stacked shapes)
B = 8


def _grad_two_uses(x, w):
    """A gradient that adds up two uses of w, one batched and one not: add_any meets both."""
    return jax.grad(lambda w: jnp.sum(w * x) + jnp.sum(jnp.sin(w)))(w)


def _scan_unmapped_carry(x):
    """A running sum whose initial carry (zeros) is not batched, over rows of a batched x."""
    return jax.lax.scan(lambda c, row: (c + row, c), jnp.zeros(3), x)[0]


def _cond_batched_predicate(p, x, w):
    return jax.lax.cond(p > 0, lambda a, b: a + b, lambda a, b: a - b, x, w)


RULE_CASES = (
    ("w * x", "mul", lambda w, x: w * x, (None, 0), 0, ((1000,), (B, 1000))),
    ("concatenate([w, x])", "concatenate", lambda w, x: jnp.concatenate([w, x]),
     (None, 0), 0, ((5,), (B, 3))),
    ("concatenate([a, b]), both at 1", "concatenate",
     lambda a, b: jnp.concatenate([a, b]), 1, 1, ((3, B), (2, B))),
    ("where(x > 0, x, w)", "select_n", lambda x, w: jnp.where(x > 0, x, w),
     (0, None), 0, ((B, 3), (3,))),
    ("grad: w * x and sin(w)", "add_any", _grad_two_uses, (0, None), 0, ((B, 3), (3,))),
    ("scan, unmapped carry", "scan", _scan_unmapped_carry, 0, 0, ((B, 4, 3),)),
    ("cond, batched predicate", "cond", _cond_batched_predicate, (0, 0, None), 0,
     ((B,), (B, 3), (3,))),
)


def widened_to_batch(eqns, size=B) -> list[tuple]:
    """``(in_shape, out_shape)`` of each broadcast that gives an operand a batch axis of ``size``."""
    return [(i, o) for i, o in core.widening_broadcasts(eqns)
            if len(o) == len(i) + 1 and _count(o) == _count(i) * size]


def _count(shape) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def rule_costs() -> list[dict]:
    """Every case of RULE_CASES traced on this JAX: its equations (sub-programs included), the
    transposes, the size-1 broadcasts and the broadcasts that widen an operand to the batch."""
    rows = []
    for label, prim, fn, in_axes, out_axes, shapes in RULE_CASES:
        rule = core.rule_function(core.primitive_named(prim)).__name__
        g = jax.vmap(fn, in_axes=in_axes, out_axes=out_axes)
        eqns = core.summarize_fn(g, *[jnp.ones(s) for s in shapes], recursive=True)
        rows.append({"label": label, "primitive": prim, "rule": rule, "eqns": eqns, "prims": core.primitives(eqns),
                     "transposes": core.primitives(eqns).count("transpose"),
                     "size1": [(e.in_shapes[0], e.out_shapes[0]) for e in eqns
                               if e.primitive == "broadcast_in_dim" and 1 in e.out_shapes[0]
                               and _count(e.out_shapes[0]) == _count(e.in_shapes[0])],
                     "widened": widened_to_batch(eqns)})
    return rows


def format_rule_costs(rows) -> str:
    lines = [f"{'function (B = 8)':32} {'rule':26} eqns  transposes  widened to the batch"]
    for r in rows:
        widened = ", ".join(f"{i}->{o}" for i, o in r["widened"]) or "-"
        lines.append(f"{r['label']:32} {r['rule']:26} {len(r['eqns']):<5} {r['transposes']:<11} {widened}")
    return "\n".join(lines)

__all__ = ["DOT_CALLS", "MV_CALLS", "REDUCE_CALLS", "RULE_CASES", "dot", "dot_numbers",
           "format_dot_calls", "format_mv_calls", "format_mv_table", "format_reduce_calls",
           "format_rule_costs", "mv", "mv_table", "reduce_axes", "rule_costs", "watch_matchaxis",
           "widened_to_batch"]
