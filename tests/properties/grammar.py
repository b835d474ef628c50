"""A small grammar of per-example functions, and the loop that states what vmapping one means.

An expression is a nested tuple over the function's arguments and closed-over constants; every node
keeps the per-example shape ``S`` of the arguments (so any two nodes combine; only the second operand
of a binary operation may be a constant of lower rank, which it broadcasts), and an axis
parameter is an integer taken modulo the rank when the function is built. The nodes cover the
rule shapes the lessons teach: vectorized (``sin``), broadcasting (``mul`` with a constant),
reductions, ``dot_general``, ``concatenate`` and slicing, ``select_n``, ``cumsum``, ``reshape``,
``cond`` and ``scan``, and a ``jit`` around a subexpression.

``looped(f, in_axes, out_axes)`` is the contract itself: call ``f`` once per example and stack the
results, ``stack([f(x) for x in xs])`` with the axes where ``in_axes`` and ``out_axes`` put them.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from hypothesis import strategies as st
from jax import lax

# Where a predicate cuts: not 0, which many expressions equal exactly on paper (a centred sum,
# x - x) but only up to rounding in floats, and rounding differs between a batch and one example.
THRESHOLD = 0.25

UNARY = {"sin": jnp.sin, "cos": jnp.cos, "tanh": jnp.tanh, "neg": jnp.negative, "abs": jnp.abs}
BINARY = {"add": jnp.add, "sub": jnp.subtract, "mul": jnp.multiply, "max": jnp.maximum}


def _constant(seed: int, shape) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-1, 1, shape).astype(np.float32)


def leaves(n_args: int):
    """An argument, or a constant of the full per-example shape that the function closes over."""
    return st.one_of(st.tuples(st.just("arg"), st.integers(0, n_args - 1)),
                     st.tuples(st.just("const"), st.integers(0, 2 ** 16), st.just("full")))


# A constant of lower rank, broadcast by a binary operation (the operand a rule gives a size-1 axis).
SMALL_CONSTANTS = st.tuples(st.just("const"), st.integers(0, 2 ** 16), st.sampled_from(["last", "scalar"]))


def node_strategies(children) -> dict:
    """One strategy per node kind, each over the subexpressions ``children``."""
    axis = st.integers(0, 2)
    return {
        "unary": st.tuples(st.just("unary"), st.sampled_from(sorted(UNARY)), children),
        "binary": st.tuples(st.just("binary"), st.sampled_from(sorted(BINARY)), children,
                            st.one_of(children, SMALL_CONSTANTS)),
        "centre": st.tuples(st.just("centre"), axis, children),                 # e - mean(e, axis)
        "cumsum": st.tuples(st.just("cumsum"), axis, children),
        "flip": st.tuples(st.just("flip"), axis, children),
        "matmul": st.tuples(st.just("matmul"), st.integers(0, 2 ** 16), children),  # e @ W, W closed over
        "where": st.tuples(st.just("where"), children, children, children),
        "splice": st.tuples(st.just("splice"), axis, children, children),       # concatenate of halves
        "reverse_flat": st.tuples(st.just("reverse_flat"), children),           # reshape, flip, reshape
        "cond": st.tuples(st.just("cond"), children, children, children),       # predicate from a sum
        "scan": st.tuples(st.just("scan"), children),                           # running sum over rows
        "jit": st.tuples(st.just("jit"), children),
    }


def expressions(n_args: int, root: str | None = None):
    """Expressions of up to six leaves; with ``root``, ones whose outermost node is of that kind."""
    anything = st.recursive(leaves(n_args), lambda c: st.one_of(*node_strategies(c).values()),
                            max_leaves=6)
    return anything if root is None else node_strategies(anything)[root]


def build(expr, shape):
    """The per-example function ``f(*args)`` an expression stands for, for arguments of ``shape``
    (built once: a ``jit`` node is one jitted function, reused by every call)."""
    rank = len(shape)

    def make(e):
        kind, *rest = e
        if kind == "arg":
            return lambda args: args[rest[0]]
        if kind == "const":
            value = _constant(rest[0], {"full": shape, "last": shape[-1:], "scalar": ()}[rest[1]])
            return lambda args: jnp.asarray(value)
        subs = [make(r) for r in rest if isinstance(r, tuple)]
        knob = rest[0] if not isinstance(rest[0], tuple) else None
        return NODES[kind](knob, subs, shape, rank)

    f = make(expr)
    return lambda *args: f(args)


def _splice(axis, cut, length):
    def run(a, b):
        return jnp.concatenate([lax.slice_in_dim(a, 0, cut, axis=axis),
                                lax.slice_in_dim(b, cut, length, axis=axis)], axis=axis)
    return run


def _scan(shape):
    def step(carry, row):
        return carry + row, carry + row
    return lambda xs: lax.scan(step, jnp.zeros(shape[1:], jnp.float32), xs)[1]


def _jit(sub):
    jitted = jax.jit(lambda *args: sub(args))
    return lambda args: jitted(*args)


# node -> (knob, sub-functions, per-example shape, rank) -> function of the argument tuple
NODES = {
    "unary": lambda k, s, shape, r: lambda a: UNARY[k](s[0](a)),
    "binary": lambda k, s, shape, r: lambda a: BINARY[k](s[0](a), s[1](a)),
    "centre": lambda k, s, shape, r: lambda a: s[0](a) - jnp.mean(s[0](a), axis=k % r, keepdims=True),
    "cumsum": lambda k, s, shape, r: lambda a: lax.cumsum(s[0](a), axis=k % r),
    "flip": lambda k, s, shape, r: lambda a: jnp.flip(s[0](a), axis=k % r),
    "matmul": lambda k, s, shape, r: (lambda w: lambda a: s[0](a) @ w)(
        jnp.asarray(_constant(k, (shape[-1], shape[-1])))),
    "where": lambda k, s, shape, r: lambda a: jnp.where(s[0](a) > THRESHOLD, s[1](a), s[2](a)),
    "splice": lambda k, s, shape, r: (lambda run: lambda a: run(s[0](a), s[1](a)))(
        _splice(k % r, shape[k % r] // 2, shape[k % r])),
    "reverse_flat": lambda k, s, shape, r: lambda a: s[0](a).reshape(-1)[::-1].reshape(shape),
    "cond": lambda k, s, shape, r: lambda a: lax.cond(jnp.sum(s[0](a)) > THRESHOLD, jnp.add, jnp.subtract,
                                                      s[1](a), s[2](a)),
    "scan": lambda k, s, shape, r: (lambda run: lambda a: run(s[0](a)))(_scan(shape)),
    "jit": lambda k, s, shape, r: _jit(s[0]),
}


def looped(f, in_axes, out_axes):
    """``f`` mapped by the contract's definition: one call per example, results stacked."""
    def run(*args):
        axes = [None if a is None else a % np.ndim(x) for a, x in zip(in_axes, args)]
        size = next(np.shape(x)[a] for x, a in zip(args, axes) if a is not None)
        outs = [np.asarray(f(*[x if a is None else np.take(x, i, axis=a) for x, a in zip(args, axes)]))
                for i in range(size)]
        return np.stack(outs, axis=out_axes % (outs[0].ndim + 1))
    return run


@st.composite
def cases(draw, root: str | None = None, depth: int | None = None):
    """A vmap to check: a function (its outermost node of kind ``root``, if given), per-example
    shape, data, and ``depth`` nested layers of axis specs (one or two, if not given)."""
    n_args = draw(st.integers(1, 2))
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    expr = draw(expressions(n_args, root))
    scalar_out = draw(st.booleans())
    layers, ranks = [], [len(shape)] * n_args        # each argument's rank as this layer sees it
    out_rank = 0 if scalar_out else len(shape)
    for _ in range(depth or draw(st.integers(1, 2))):
        size = draw(st.integers(1, 3))
        in_axes = [draw(st.one_of(st.none(), st.integers(-(r + 1), r))) for r in ranks]
        if all(a is None for a in in_axes):
            in_axes[0] = 0
        out_axes = draw(st.integers(-(out_rank + 1), out_rank))
        layers.append((size, tuple(in_axes), out_axes))
        ranks = [r + (a is not None) for r, a in zip(ranks, in_axes)]
        out_rank += 1
    seed = draw(st.integers(0, 2 ** 16))
    return {"expr": expr, "shape": shape, "n_args": n_args, "scalar_out": scalar_out,
            "layers": layers, "seed": seed, "jit": draw(st.booleans())}


def arguments(case) -> list[np.ndarray]:
    """The stacked arguments: each one's per-example shape, with every layer's batch axis inserted."""
    rng = np.random.default_rng(case["seed"])
    shapes = [list(case["shape"]) for _ in range(case["n_args"])]
    for size, in_axes, _ in case["layers"]:
        for shp, a in zip(shapes, in_axes):
            if a is not None:
                shp.insert(a % (len(shp) + 1), size)
    return [rng.uniform(-1, 1, shp).astype(np.float32) for shp in shapes]


def per_example(case):
    f = build(case["expr"], case["shape"])
    return (lambda *a: jnp.sum(f(*a))) if case["scalar_out"] else f


def mapped(case, vmap):
    """The case's function wrapped in its layers with ``vmap`` (jax.vmap, or `looped`)."""
    g = per_example(case)
    for _, in_axes, out_axes in case["layers"]:
        g = vmap(g, in_axes, out_axes)
    return g
