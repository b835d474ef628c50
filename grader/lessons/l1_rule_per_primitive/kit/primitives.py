"""The primitives the exercises batch: each runs and traces, and vmap refuses it without a rule.

``make_primitives()`` builds them fresh, so a rule installed by one check never leaks into
another. A student's rule is handed its primitive first, as JAX's ``vectorized_batcher`` is:
``rule(prim, vals, dims, **params)`` for the ordinary table (`install`), and
``rule(prim, axis_data, vals, dims, **params)`` for the table whose rules get the axis being
mapped (`install_collective`).
"""
from __future__ import annotations

import types
from functools import partial

import jax
import numpy as np

from ....core import _jax


def _moments(x, *, axis):
    mean = np.mean(x, axis=axis)
    return [mean.astype(np.float32), (x - np.expand_dims(mean, axis)).astype(np.float32)]


def _stack2(x, y, *, axis):
    return np.stack([x, y], axis=axis).astype(np.float32)


def _axis_of(shape, axis, extra=0) -> int:
    """``axis`` checked as an axis of a value of ``len(shape) + extra`` axes (non-negative)."""
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)) or \
            not 0 <= int(axis) < len(shape) + extra:
        raise TypeError(f"axis={axis!r} is not a non-negative axis of an operand of shape "
                        f"{tuple(shape)}" + (" (one more for the new axis)" if extra else ""))
    return int(axis)


def _moments_shapes(shape, *, axis):
    a = _axis_of(shape, axis)
    return [tuple(d for i, d in enumerate(shape) if i != a), tuple(shape)]


def _stack2_shape(xs, ys, *, axis):
    if tuple(xs) != tuple(ys):
        raise TypeError(f"stack2 needs two operands of the same shape (it broadcasts nothing, not "
                        f"even an axis of size 1), got shapes {tuple(xs)} and {tuple(ys)}")
    a = _axis_of(xs, axis, extra=1)
    return tuple(xs[:a]) + (2,) + tuple(xs[a:])


def _unbound(x, *, axis_name):
    raise NameError(f"prefix: unbound axis name {axis_name!r}: no vmap with that axis_name is "
                    f"mapping this value here")


def _same_shape(shape, *, axis_name):
    del axis_name
    return tuple(shape)


def _primitive(name, reference, shape_rule, multiple_results=False):
    """A primitive with an implementation (numpy) and an abstract eval, and no batching rule."""
    prim = _jax.new_primitive(name)
    prim.multiple_results = multiple_results

    def impl(*xs, **params):
        xs = [np.asarray(x) for x in xs]
        shape_rule(*(x.shape for x in xs), **params)   # the same contract eagerly as when traced
        out = reference(*xs, **params)
        return [jax.device_put(o) for o in out] if multiple_results else jax.device_put(out)

    def abstract_eval(*avals, **params):
        shapes = shape_rule(*(tuple(a.shape) for a in avals), **params)
        dtype = avals[0].dtype
        if multiple_results:
            return [_jax.ShapedArray(tuple(s), dtype) for s in shapes]
        return _jax.ShapedArray(tuple(shapes), dtype)

    prim.def_impl(impl)
    prim.def_abstract_eval(abstract_eval)
    return prim


# What one example computes, per primitive: the meaning a batching rule must keep. (prefix has
# no meaning outside a vmap that names its axis: it is a collective.)
REFERENCES = {"moments": _moments, "stack2": _stack2}
_MADE = {"moments": (_moments, _moments_shapes, True), "stack2": (_stack2, _stack2_shape, False),
         "prefix": (_unbound, _same_shape, False)}


def make_primitives() -> types.SimpleNamespace:
    """Fresh ``moments_p``, ``stack2_p`` and ``prefix_p``; vmap refuses them all.

    - ``moments_p.bind(x, axis=a)``: two outputs, ``[mean, centred]``: the mean of x along axis
      ``a`` (that axis removed) and ``x - mean`` (x's shape). ``a`` is a non-negative axis of x.
    - ``stack2_p.bind(x, y, axis=a)``: x and y stacked along a new axis at position ``a``
      (``0 <= a <= x.ndim``); x and y must have exactly the same shape: it broadcasts nothing.
    - ``prefix_p.bind(x, axis_name=n)``: a collective over the vmap whose ``axis_name`` is ``n``:
      member ``k`` of that axis gets the sum of x over members ``0 .. k``. Outside such a vmap
      it raises NameError.
    """
    return types.SimpleNamespace(**{f"{name}_p": _primitive(name, *made)
                                    for name, made in _MADE.items()})


def install(prim, rule) -> None:
    """Install a student's ``rule(prim, vals, dims, **params)`` for ``prim`` on any JAX release,
    with the primitive filled in, as ``defvectorized`` does for ``vectorized_batcher``."""
    _jax.register_rule(prim, partial(rule, prim))


def install_collective(prim, rule) -> None:
    """Install ``rule(prim, axis_data, vals, dims, **params)`` in the table whose rules get the
    axis being mapped: called first, even when no input is mapped."""
    _jax.register_fancy_rule(prim, partial(rule, prim))


def uninstall(prim) -> None:
    """Remove whichever rule ``install`` or ``install_collective`` gave ``prim``."""
    _jax.unregister_rules(prim)
