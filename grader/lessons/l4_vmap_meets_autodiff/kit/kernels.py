"""Two "kernels" vmap cannot batch: primitives with an implementation, a shape rule and a
lowering (so they run eagerly, trace and compile), but no batching rule, as a foreign kernel
(an FFI call, a hand-written GPU kernel) arrives.

Both take any number of leading axes and treat each position along them as its own problem,
which is what a ``custom_vmap`` rule can tell vmap and vmap cannot find out by itself:

- ``cummax(x)``: the running maximum along the last axis; shape ``(..., n) -> (..., n)``.
- ``running_max(x, floor)``: the running maximum along the last axis, starting from ``floor``;
  ``floor`` has exactly ``x``'s leading axes (``x.shape[:-1]``): the kernel does not broadcast.
"""
from __future__ import annotations

import jax
import numpy as np
from jax import lax
from jax.interpreters import mlir

from ....core import _jax


def _cummax_shape(shape):
    if len(shape) < 1:
        raise TypeError(f"cummax takes an array of rank 1 or more, got shape {shape}")
    return shape


def _running_max_shape(x_shape, floor_shape):
    if len(x_shape) < 1 or tuple(floor_shape) != tuple(x_shape[:-1]):
        raise TypeError(f"running_max takes x of shape (..., n) and floor of x's leading shape "
                        f"x.shape[:-1]; got x {tuple(x_shape)} and floor {tuple(floor_shape)} "
                        f"(the kernel does not broadcast)")
    return x_shape


def _cummax_np(x):
    return np.maximum.accumulate(x, axis=-1).astype(x.dtype)


def _running_max_np(x, floor):
    return np.maximum.accumulate(np.maximum(x, floor[..., None]), axis=-1).astype(x.dtype)


def _cummax_lax(x):
    return lax.cummax(x, axis=x.ndim - 1)


def _running_max_lax(x, floor):
    return lax.cummax(lax.max(x, lax.broadcast_in_dim(floor, x.shape, tuple(range(floor.ndim)))),
                      axis=x.ndim - 1)


def _kernel(name, shape_rule, numpy_impl, lax_impl):
    prim = _jax.new_primitive(name)

    def impl(*xs):
        xs = [np.asarray(x) for x in xs]
        shape_rule(*(x.shape for x in xs))       # the same contract eagerly as when traced
        return jax.device_put(numpy_impl(*xs))

    def abstract_eval(*avals):
        return _jax.ShapedArray(tuple(shape_rule(*(tuple(a.shape) for a in avals))),
                                avals[0].dtype)

    prim.def_impl(impl)
    prim.def_abstract_eval(abstract_eval)
    mlir.register_lowering(prim, mlir.lower_fun(lax_impl, multiple_results=False))
    return prim


cummax_p = _kernel("cummax", _cummax_shape, _cummax_np, _cummax_lax)
running_max_p = _kernel("running_max", _running_max_shape, _running_max_np, _running_max_lax)


def cummax(x):
    """The running maximum of ``x`` along its last axis (any leading axes); no batching rule."""
    return cummax_p.bind(x)


def running_max(x, floor):
    """The running maximum of ``x`` along its last axis, starting from ``floor`` (shape
    ``x.shape[:-1]``, no broadcasting); no batching rule."""
    return running_max_p.bind(x, floor)


# What each kernel computes, in numpy: the meaning a rule must keep (the trusted side uses it).
REFERENCES = {"cummax": _cummax_np, "running_max": _running_max_np}
