"""Lesson 1's self-checks: predictions one ``make_jaxpr`` or one print would reveal, so they give
feedback and no points. Each expected answer is computed now, on the installed JAX."""
from __future__ import annotations

import jax
import jax.numpy as jnp

from ... import core
from ...feedback import Finding, Result, selfcheck


def _judge(name, expected, answer, hint) -> Result:
    """``hint`` is a string, or a function of the answer naming what it got wrong."""
    if answer is None:                 # as released: nothing to judge yet
        return selfcheck(name, 0, [], note="not answered yet", complete=False)
    if answer == expected:
        return selfcheck(name, 1, [], note="Right. Now confirm it by running the call yourself.")
    text = hint(answer) if callable(hint) else hint
    return selfcheck(name, 1, [Finding("your prediction", repr(expected), repr(answer), text)])


def _parts(answer, count: int):
    """``answer`` as a tuple of ``count`` parts with shapes as tuples of ints, or None."""
    if not isinstance(answer, (tuple, list)) or len(answer) != count:
        return None
    try:
        return tuple(tuple(int(d) for d in a) if isinstance(a, (tuple, list)) else a
                     for a in answer)
    except (TypeError, ValueError):
        return None


def _tracer_hint(expected):
    bd, shape, val = expected

    def hint(answer):
        got = _parts(answer, 3)
        if got is None:
            return "Write a tuple (batch_dim, x.shape, x.val.shape), shapes as tuples of ints."
        gbd, gshape, gval = got
        if gbd != bd:
            if gbd == -1:
                return (f"-1 is the in_axes you passed; the tracer stores it normalised, as a "
                        f"non-negative index into x.val: {bd}.")
            return f"batch_dim is the axis of x.val that is mapped: in_axes=-1 of {val} is {bd}."
        if gshape != shape:
            if gshape == val:
                return (f"{gshape} is the value underneath (x.val.shape); x.shape is what f sees, "
                        f"without the batch axis: {shape}.")
            return f"x.shape is the passed array {val} without its mapped axis: {shape}."
        if gval == shape:
            return (f"{gval} is what f sees (x.shape); x.val is the whole batch, the array you "
                    f"passed: {val}.")
        return f"x.val is the whole batch, the array you passed, of shape {val}."
    return hint


def selfcheck_tracer(answer) -> Result:
    """(batch_dim, x.shape, x.val.shape) inside ``jax.vmap(f, in_axes=-1)`` over a (2, 3, 4) array."""
    _, (view,) = core.observe(lambda x: x, -1, jnp.zeros((2, 3, 4)))
    expected = (view.batch_dim, view.shape, view.val_shape)
    return _judge("selfcheck_tracer", expected, answer, _tracer_hint(expected))


ROUTES = ("not at all", "shortcut", "rule")


def sin_route() -> str:
    """How ``lax.sin`` of a closed-over constant meets vmap on this JAX: ``"not at all"`` (it never
    reaches process_primitive), ``"shortcut"`` (it does, and no rule is consulted) or ``"rule"``."""
    c = jnp.ones(3)
    steps = core.trace_routes(jax.vmap(lambda x: jax.lax.add(x, jax.lax.sin(c))), jnp.ones((4, 3)))
    return next((s.route for s in steps if s.primitive == "sin"), "not at all")


def selfcheck_route(answer) -> Result:
    """One of ROUTES: what ``lax.sin(c)``, ``c`` closed over, does inside a vmapped function."""
    route, (table, _) = sin_route(), core.rule_for(jax.lax.sin_p)

    def hint(answer):
        if answer not in ROUTES:
            return f"Answer one of {', '.join(map(repr, ROUTES))}."
        if answer == "not at all":
            return ("c is no tracer, yet bind dispatches on the current trace, not on its inputs: "
                    "inside the vmapped function that is the BatchTrace, so sin(c) reaches "
                    "process_primitive, with in_dims (None,).")
        if route == "rule":
            return (f"sin(c) does reach process_primitive with in_dims (None,), and there the "
                    f"first question is whether the primitive's rule sits in "
                    f"fancy_primitive_batchers, before the all-unmapped shortcut: on your JAX "
                    f"sin's rule is in {table}, so it is called (and returns an unmapped result).")
        return (f"sin(c) does reach process_primitive with in_dims (None,); its rule sits in "
                f"{table}, which process_primitive consults only after the all-unmapped "
                f"shortcut, so no rule is called.")
    return _judge("selfcheck_route", route, answer, hint)


def _reduce_hint(expected, final_shape, batch_axis, axis, stacked):
    axes, out_shape = expected

    def hint(answer):
        got = _parts(answer, 2)
        if got is None or not isinstance(got[0], tuple):
            return "Write a tuple (axes, out_shape), both tuples of ints."
        gaxes, gshape = got
        if gaxes != axes:
            if axis < batch_axis and gaxes == (axis + 1,):
                return (f"you moved the example's axis {axis} up by one, but it comes before the "
                        f"batch axis ({batch_axis} of the stacked {stacked}), so it keeps its "
                        f"number: axes={axes}. Only axes at or after the batch dim move up.")
            if batch_axis in gaxes:
                return (f"axis {batch_axis} of the stacked {stacked} is the batch axis, and the "
                        f"batch axis is never reduced: the example's axis {axis} is "
                        f"{'still ' if axes[0] == axis else ''}axis {axes[0]} there.")
            if axis < batch_axis:
                return (f"the example's axis {axis} comes before the batch axis ({batch_axis} of "
                        f"the stacked {stacked}), so it keeps its number: axes={axes}, not "
                        f"{gaxes}. Only axes at or after the batch dim move up by one.")
            return (f"the example's axis {axis} is at or after the batch axis ({batch_axis} of "
                    f"the stacked {stacked}), so it moves up by one: axes={axes}, not {gaxes}.")
        if gshape == final_shape and gshape != out_shape:
            return (f"{gshape} is the shape vmap returns, after it moves the batch axis to the "
                    f"front (out_axes=0); the reduce_sum equation's own output keeps the batch "
                    f"axis where the reduction leaves it: {out_shape}.")
        return (f"reduce_sum of the stacked {stacked} over axes {axes} keeps the other axes in "
                f"order, the batch axis among them: {out_shape}, not {gshape}.")
    return hint


def selfcheck_reduce_axes(answer) -> Result:
    """(axes, output shape) of the reduce_sum in ``vmap(lambda x: jnp.sum(x, axis=1), in_axes=2)``."""
    axis, in_axes, stacked = 1, 2, (3, 4, 5)          # the question as the exercise asks it
    fn = jax.vmap(lambda x: jnp.sum(x, axis=axis), in_axes=in_axes)
    eqns = core.summarize_fn(fn, jnp.zeros(stacked))
    red = next(e for e in eqns if e.primitive == "reduce_sum")
    expected = (red.param("axes"), red.out_shapes[0])
    final = tuple(jax.eval_shape(fn, jnp.zeros(stacked)).shape)
    return _judge("selfcheck_reduce_axes", expected, answer,
                  _reduce_hint(expected, final, in_axes, axis, stacked))


layout = core.layout      # "split" or "collapsed": the notebook's L1.layout()

__all__ = ["ROUTES", "layout", "selfcheck_reduce_axes", "selfcheck_route", "selfcheck_tracer",
           "sin_route"]
