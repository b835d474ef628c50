"""The four primitives the exercises batch: each runs and traces, and vmap refuses it.

``make_primitives()`` builds them fresh, so a rule installed by one check never leaks into
another. A student's rule is handed its primitive first (``rule(prim, vals, dims, **params)``),
as JAX's ``vectorized_batcher`` is.
"""
from __future__ import annotations

import types
from functools import partial

import jax
import numpy as np

from ....core import _jax


def _softsign(x):
    return (x / (1 + np.abs(x))).astype(np.float32)


def _scaled_diff(x, y, *, scale):
    return (np.float32(scale) * (x - y)).astype(np.float32)


def _sumsq(x, *, axes):
    return np.sum(x * x, axis=tuple(int(a) for a in axes)).astype(np.float32)


def _rowmax(x):
    return np.max(x, axis=1).astype(np.float32)


def _same_shape(shape):
    return shape


def _broadcast_shape(xs, ys, *, scale):
    del scale
    if len(xs) != len(ys):
        raise TypeError(f"scaled_diff needs operands of the same rank (it broadcasts only size-1 "
                        f"axes, numpy-style), got shapes {xs} and {ys}")
    for a, b in zip(xs, ys):
        if a != b and 1 not in (a, b):
            raise TypeError(f"scaled_diff got incompatible shapes {xs} and {ys}: each axis must "
                            f"agree or be 1 in one operand")
    return tuple(max(a, b) if 1 in (a, b) else a for a, b in zip(xs, ys))


def _reduced_shape(shape, *, axes):
    try:
        picked = [int(a) for a in axes]
    except TypeError:
        picked = None
    if picked is None or len(set(picked)) != len(picked) or \
            any(not 0 <= a < len(shape) for a in picked):
        raise TypeError(f"sumsq: axes={axes!r} do not name distinct axes of an operand of "
                        f"shape {shape}")
    return tuple(d for i, d in enumerate(shape) if i not in picked)


def _row_shape(shape):
    if len(shape) != 2:
        raise TypeError(f"rowmax takes a (rows, cols) matrix, got an operand of shape {shape}")
    return shape[:1]


def _primitive(name, reference, shape_rule):
    """A primitive with an implementation (numpy) and an abstract eval, and no batching rule."""
    prim = _jax.new_primitive(name)

    def impl(*xs, **params):
        xs = [np.asarray(x) for x in xs]
        shape_rule(*(x.shape for x in xs), **params)   # the same contract eagerly as when traced
        return jax.device_put(reference(*xs, **params))

    def abstract_eval(*avals, **params):
        shape = shape_rule(*(tuple(a.shape) for a in avals), **params)
        return _jax.ShapedArray(tuple(shape), avals[0].dtype)

    prim.def_impl(impl)
    prim.def_abstract_eval(abstract_eval)
    return prim


# What one example computes, per primitive: the meaning a batching rule must keep.
REFERENCES = {"softsign": _softsign, "scaled_diff": _scaled_diff, "sumsq": _sumsq,
              "rowmax": _rowmax}
_SHAPES = {"softsign": _same_shape, "scaled_diff": _broadcast_shape, "sumsq": _reduced_shape,
           "rowmax": _row_shape}


def make_primitives() -> types.SimpleNamespace:
    """Fresh ``softsign_p``, ``scaled_diff_p``, ``sumsq_p`` and ``rowmax_p``; vmap refuses them all.

    - ``softsign_p.bind(x)``: x / (1 + |x|), elementwise, any shape.
    - ``scaled_diff_p.bind(x, y, scale=s)``: s * (x - y); x and y have the same rank and every axis
      agrees or is 1 in one of them (numpy broadcasting, but no rank promotion).
    - ``sumsq_p.bind(x, axes=(...))``: the sum of x*x over ``axes`` (non-negative, distinct).
    - ``rowmax_p.bind(m)``: the maximum of each row of a rank-2 ``m``; shape (rows, cols) -> (rows,).
    """
    return types.SimpleNamespace(**{f"{name}_p": _primitive(name, REFERENCES[name], _SHAPES[name])
                                    for name in REFERENCES})


def install(prim, rule) -> None:
    """Install a student's ``rule(prim, vals, dims, **params)`` for ``prim`` on any JAX release,
    with the primitive filled in, as ``defvectorized`` does for ``vectorized_batcher``."""
    _jax.register_rule(prim, partial(rule, prim))


def uninstall(prim) -> None:
    _jax.unregister_rule(prim)
