"""Small per-example programs as plain data, and the JAX functions they stand for.

A program is ``{"inputs": ((name, shape), ...), "steps": ((out, op, *operands), ...), "outputs":
(name, ...)}``: each step names its result, an operation from `OPS` and its operands (names of
earlier values, then an int where the operation takes one). `as_function` turns it into the
per-example function of JAX operations it describes, which ``jax.vmap`` batches like any other.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax


def _select(a, b, c):
    return lax.select(a > 0, b, c)


def _spread(a, k):
    return jnp.broadcast_to(a[..., None], tuple(a.shape) + (k,))


def _accumulate(a, b):
    return lax.scan(lambda carry, _: (carry + b, None), a, None, length=2)[0]


def _cond(a, b):
    return lax.cond(jnp.sum(a) > 0, lambda: b * 2.0, lambda: b - 1.0)


# op -> (per-example function, the number of its operands that are values; the rest are ints)
OPS = {
    "sin": (jnp.sin, 1),
    "mul": (lambda a, b: a * b, 2),
    "sum": (lambda a, k: jnp.sum(a, axis=k), 1),
    "matmul": (lambda a, b: a @ b, 2),
    "concat": (lambda a, b, k: jnp.concatenate([a, b], axis=k), 2),
    "select": (_select, 3),
    "spread": (_spread, 1),
    "dot": (lambda a, b: a @ b, 2),
    "accumulate": (_accumulate, 2),
    "cond": (_cond, 2),
}


def run(program, *args) -> dict:
    """Every value of ``program`` on one example's ``args``: ``{name: array}``."""
    values = {name: a for (name, _), a in zip(program["inputs"], args)}
    for out, op, *operands in program["steps"]:
        fn, n = OPS[op]
        values[out] = fn(*(values[v] for v in operands[:n]), *operands[n:])
    return values


def as_function(program):
    """The per-example function ``program`` describes: its inputs in, its outputs out (a tuple
    when there are several, the last step when it names none)."""
    outputs = tuple(program.get("outputs") or (program["steps"][-1][0],))

    def fn(*args):
        values = run(program, *args)
        outs = tuple(values[name] for name in outputs)
        return outs if len(outs) > 1 else outs[0]
    return fn


def example_shapes(program) -> dict:
    """The per-example shape of every value of ``program`` (traced, nothing runs)."""
    structs = [jax.ShapeDtypeStruct(tuple(shape), jnp.float32) for _, shape in program["inputs"]]
    shapes = jax.eval_shape(lambda *xs: run(program, *xs), *structs)
    return {name: tuple(int(d) for d in s.shape) for name, s in shapes.items()}
