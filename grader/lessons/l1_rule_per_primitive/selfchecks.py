"""Lesson 1's self-checks: predictions one ``make_jaxpr`` or one print would reveal, so they give
feedback and no points. Each expected answer is computed now, on the installed JAX."""
from __future__ import annotations

import jax
import jax.numpy as jnp

from ... import core
from ...feedback import Finding, Result, selfcheck
from .kit import install, make_primitives, uninstall


def _judge(name, expected, answer, hint) -> Result:
    if answer == expected:
        return selfcheck(name, 1, [], note="Right. Now confirm it by running the call yourself.")
    return selfcheck(name, 1, [Finding("your prediction", repr(expected), repr(answer), hint)])


def selfcheck_tracer(answer) -> Result:
    """(batch_dim, x.shape, x.val.shape) inside ``jax.vmap(f, in_axes=-1)`` over a (2, 3, 4) array."""
    _, (view,) = core.observe(lambda x: x, -1, jnp.zeros((2, 3, 4)))
    expected = (view.batch_dim, view.shape, view.val_shape)
    return _judge("selfcheck_tracer", expected, answer,
                  "in_axes=-1 names the last axis, and the tracer stores it normalised (as a "
                  "non-negative index); x.shape is the value's shape without that axis.")


def sin_route() -> str:
    """The route ``lax.sin`` of an unmapped argument takes through process_primitive on this JAX."""
    steps = core.trace_routes(jax.vmap(lambda x, y: jax.lax.add(x, jax.lax.sin(y)),
                                       in_axes=(0, None)), jnp.ones((4, 3)), jnp.ones(3))
    return next(s.route for s in steps if s.primitive == "sin")


def selfcheck_route(answer) -> Result:
    """"shortcut" or "rule": what ``lax.sin`` of an unmapped input does under vmap on this JAX."""
    layout = core.layout()
    hint = (f"your JAX's tables are {layout}: " +
            ("every rule sits in the one table that process_primitive consults before the "
             "all-unmapped shortcut, so sin's rule is called and returns an unmapped result."
             if layout == "collapsed" else
             "sin's rule sits in primitive_batchers, which process_primitive consults only after "
             "the all-unmapped shortcut, so no rule is called."))
    return _judge("selfcheck_route", sin_route(), answer, hint)


def selfcheck_reduce_axes(answer) -> Result:
    """(axes, output shape) of the reduce_sum in ``vmap(lambda x: jnp.sum(x, axis=1), in_axes=2)``."""
    eqns = core.summarize_fn(jax.vmap(lambda x: jnp.sum(x, axis=1), in_axes=2),
                             jnp.zeros((3, 4, 5)))
    red = next(e for e in eqns if e.primitive == "reduce_sum")
    expected = (red.param("axes"), red.out_shapes[0])
    return _judge("selfcheck_reduce_axes", expected, answer,
                  "only axes at or after the batch dim move up by one; an axis before it "
                  "keeps its number. The batch axis survives the reduction.")


def selfcheck_rowmax_equation(answer, rule) -> Result:
    """(name, input shape, output shape) of the rowmax equation in ``vmap(rowmax)`` of a (4, 3, 5)."""
    name = "selfcheck_rowmax_equation"
    prim = make_primitives().rowmax_p
    install(prim, rule)
    try:
        eqns = core.summarize_fn(jax.vmap(prim.bind), jnp.zeros((4, 3, 5)), recursive=True)
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
    return _judge(name, mine[0], answer,
                  "print jax.make_jaxpr(jax.vmap(P.rowmax_p.bind))(x) and read the rowmax line.")


layout = core.layout      # "split" or "collapsed": the notebook's L1.layout()

__all__ = ["layout", "selfcheck_reduce_axes", "selfcheck_route", "selfcheck_rowmax_equation",
           "selfcheck_tracer", "sin_route"]
