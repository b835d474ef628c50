"""Lesson 1's self-checks: predictions one ``make_jaxpr`` or one print would reveal, so they give
feedback and no points. Each expected answer is computed now, on the installed JAX."""
from __future__ import annotations

import jax
import jax.numpy as jnp

from ... import core
from ...feedback import Finding, Result, selfcheck
from .kit import install, make_primitives, uninstall


def _judge(name, expected, answer, hint) -> Result:
    """``hint`` is a string, or a function of the answer naming what it got wrong."""
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


def sin_route() -> str:
    """The route ``lax.sin`` of an unmapped argument takes through process_primitive on this JAX."""
    steps = core.trace_routes(jax.vmap(lambda x, y: jax.lax.add(x, jax.lax.sin(y)),
                                       in_axes=(0, None)), jnp.ones((4, 3)), jnp.ones(3))
    return next(s.route for s in steps if s.primitive == "sin")


def selfcheck_route(answer) -> Result:
    """"shortcut" or "rule": what ``lax.sin`` of an unmapped input does under vmap on this JAX."""
    layout, route = core.layout(), sin_route()

    def hint(answer):
        if answer not in ("shortcut", "rule"):
            return 'Answer "shortcut" or "rule".'
        if route == "rule":
            return (f'You said "{answer}", but your JAX\'s tables are {layout}: every rule sits in '
                    f"the one table that process_primitive consults before the all-unmapped "
                    f"shortcut, so sin's rule is called and returns an unmapped result.")
        return (f'You said "{answer}", but your JAX\'s tables are {layout}: sin\'s rule sits in '
                f"primitive_batchers, which process_primitive consults only after the "
                f"all-unmapped shortcut, so no rule is called.")
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


def selfcheck_rowmax_equation(answer, rule) -> Result:
    """(name, input shape, output shape) of the rowmax equation in ``vmap(rowmax)`` of a (4, 3, 5)."""
    name = "selfcheck_rowmax_equation"
    prim = make_primitives().rowmax_p
    install(prim, rule)
    stacked = (4, 3, 5)                                 # the question as the exercise asks it
    try:
        eqns = core.summarize_fn(jax.vmap(prim.bind), jnp.zeros(stacked), recursive=True)
        final = tuple(jax.eval_shape(jax.vmap(prim.bind), jnp.zeros(stacked)).shape)
    except Exception as err:  # the student's rule is the thing being asked about
        return selfcheck(name, 1, [Finding("your rule", "a batched rowmax",
                                           f"{type(err).__name__}: {err}"[:300],
                                           "make check_rowmax_rule pass first.")])
    finally:
        uninstall(prim)
    mine = [(e.primitive, e.in_shapes[0], e.out_shapes[0]) for e in eqns if e.primitive == "rowmax"]
    if len(mine) != 1:
        return selfcheck(name, 1, [Finding("your rule", "one rowmax equation", f"{len(mine)}",
                                           "a rule should bind rowmax once, on the whole batch.")])
    return _judge(name, mine[0], answer, _rowmax_hint(mine[0], stacked, final))


def _rowmax_hint(expected, stacked, final):
    name, in_shape, out_shape = expected

    def hint(answer):
        got = _parts(answer, 3)
        if got is None:
            return "Write a tuple (primitive name, input shape, output shape)."
        gname, gin, gout = got
        if gname != name:
            return f"the equation's primitive is named {name!r} (prim.name), not {gname!r}."
        if gin != in_shape:
            if gin == stacked:
                return (f"{stacked} is the batch as vmap holds it; your rule binds rowmax on "
                        f"what it made of it, {in_shape}: rowmax only takes a rank-2 matrix.")
            return (f"with your rule, rowmax is bound on {in_shape}: read the rowmax line of the "
                    f"batched jaxpr, not the shape you pass to vmap.")
        if gout == final and final != out_shape:
            return (f"{final} is the result vmap returns, after your rule unfolds it; the rowmax "
                    f"equation itself gives {out_shape}.")
        return f"rowmax of an {in_shape} matrix gives one value per row: {out_shape}."
    return hint


layout = core.layout      # "split" or "collapsed": the notebook's L1.layout()

__all__ = ["layout", "selfcheck_reduce_axes", "selfcheck_route", "selfcheck_rowmax_equation",
           "selfcheck_tracer", "sin_route"]
