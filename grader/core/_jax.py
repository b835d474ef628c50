"""The one place that imports ``jax._src``.

Every name JAX has moved, renamed or re-shaped between 0.4.36 and today is resolved here, so the
rest of the course can be written against one vocabulary. Each helper says which releases it covers.
"""
from __future__ import annotations

import dataclasses
import inspect

import jax
from jax._src import core as jcore
from jax._src.interpreters import batching as B

batching = B
BatchTracer = B.BatchTracer
BatchTrace = B.BatchTrace
Primitive = jcore.Primitive
ShapedArray = jcore.ShapedArray
Jaxpr = jcore.Jaxpr
ClosedJaxpr = jcore.ClosedJaxpr
Literal = jcore.Literal
mapped_aval = jcore.mapped_aval
no_axis_name = jcore.no_axis_name

# Names of the module-level rule tables across releases (see shared/jax-versions.md).
TABLE_NAMES = ("primitive_batchers", "fancy_primitive_batchers",
               "axis_primitive_batchers", "spmd_axis_primitive_batchers")

JAX_VERSION = tuple(int(p) for p in jax.__version__.split(".")[:3] if p.isdigit())


def new_primitive(name: str) -> jcore.Primitive:
    return jcore.Primitive(name)


def is_batch_tracer(x) -> bool:
    return isinstance(x, B.BatchTracer)


def is_tracer(x) -> bool:
    return isinstance(x, jcore.Tracer)


def batch_info(trace, tracer):
    """(value, batch_dim) of ``tracer`` as ``trace`` sees it; unmapped is ``None`` everywhere."""
    val, dim = trace.to_batch_info(tracer)
    return val, (None if dim is None else dim)


def axis_data(size, name=no_axis_name):
    """An ``AxisData`` for any release: it grew from 3 fields (0.4.36) to 4 (0.6+)."""
    fields = dataclasses.fields(B.AxisData)
    extra = [None] * (len(fields) - 2)
    return B.AxisData(name, size, *extra)


def matchaxis_signature() -> tuple[str, ...]:
    return tuple(inspect.signature(B.matchaxis).parameters)


def call_matchaxis(src, dst, x, size, sum_match=False, name=no_axis_name):
    """JAX's own ``matchaxis`` under whichever of its three signatures is installed."""
    params = matchaxis_signature()
    if params[0] == "axis_data":            # 0.10.0 and later
        return B.matchaxis(axis_data(size, name), src, dst, x, sum_match)
    if "mesh_axis" in params:               # 0.5.3 .. 0.9.x
        return B.matchaxis(name, size, None, src, dst, x, sum_match)
    return B.matchaxis(name, size, src, dst, x, sum_match)  # 0.4.36 .. 0.5.2


def spec_match_error() -> type:
    return B.SpecMatchError
