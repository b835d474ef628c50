"""The one place that imports ``jax._src``, and the one place that knows how releases differ.

This module holds the adapters: every name JAX has moved, renamed or re-shaped since 0.4.36 is
resolved here, so the rest of the course is written against one vocabulary, and the public
``jax.extend`` names are preferred where they exist. ``history`` holds what was measured release
by release and how to measure it on the installed JAX. Nothing outside this package spells a
release.
"""
from __future__ import annotations

import dataclasses
import inspect

import jax
import jax.extend.core as _xcore
from jax._src import core as jcore
from jax._src.interpreters import batching as B

batching = B
BatchTracer = B.BatchTracer
BatchTrace = B.BatchTrace
ShapedArray = jcore.ShapedArray
mapped_aval = jcore.mapped_aval
no_axis_name = jcore.no_axis_name

# 0.11 merged ClosedJaxpr into Jaxpr (a Jaxpr carries its consts); 0.12 dropped
# jax._src.core.ClosedJaxpr. jax.extend.core names both on every release (one class from 0.11).
JAXPR_TYPES = tuple({_xcore.Jaxpr, _xcore.ClosedJaxpr})

# The batching module's name, for code outside the core that asks whether a function is its own.
BATCHING_MODULE = B.__name__
# Names of the module-level rule tables across releases, in lookup order.
TABLE_NAMES = ("primitive_batchers", "fancy_primitive_batchers",
               "axis_primitive_batchers", "spmd_axis_primitive_batchers")

def rule_tables() -> dict[str, dict]:
    """``{"module.table": table}`` for each of JAX's batching rule tables this release has."""
    return {f"{B.__name__}.{name}": getattr(B, name) for name in TABLE_NAMES
            if isinstance(getattr(B, name, None), dict)}


def backend_started() -> bool:
    """Whether this process has an XLA backend yet: the judge's zygote must fork before it does
    (a backend owns threads a forked child would not have)."""
    from jax._src import xla_bridge
    return bool(getattr(xla_bridge, "_backends", None))


# Primitive names that changed: the structures the course compares use the newest name.
RENAMES = {"pjit": "jit"}

# How printed jaxprs differ between releases without differing in meaning: (pattern, replacement)
# in the order core.text.normalize applies them.
PRINT_DRIFT: tuple[tuple[str, str], ...] = (
    (r"np\.(?:int|uint)\d+\((-?\d+)\)", r"\1"),            # numpy 2 scalar reprs in params
    (r"(\d(?:\.\d*)?(?:e[+-]?\d+)?):[a-z]+\d*\[\]", r"\1"),   # literals printed with their type
    (r"\n?\s*(?:out_)?sharding=None\n?", "\n"),                # sharding params
    *((rf"\b{old}\[", f"{new}[") for old, new in RENAMES.items()),
)


def release(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split(".")[:3] if p.isdigit())


JAX_VERSION = release(jax.__version__)


# ---- adapters ------------------------------------------------------------------------------------

def new_primitive(name: str):
    return _xcore.Primitive(name)


def as_fun(closed):
    """A closed jaxpr as a function of its flat inputs (``jax.extend.core.jaxpr_as_fun``)."""
    return _xcore.jaxpr_as_fun(closed)


def is_batch_tracer(x) -> bool:
    return isinstance(x, B.BatchTracer)


def is_tracer(x) -> bool:
    return isinstance(x, jcore.Tracer)


def is_literal(atom) -> bool:
    """A constant written into a jaxpr equation, rather than a variable."""
    return isinstance(atom, getattr(_xcore, "Literal", jcore.Literal))


def is_jaxpr(x) -> bool:
    return isinstance(x, JAXPR_TYPES)


def open_jaxpr(j):
    """The object holding ``eqns``: a ClosedJaxpr's inner Jaxpr, or a (0.11+) Jaxpr itself."""
    inner = getattr(j, "jaxpr", j)
    return inner if hasattr(inner, "eqns") else j


def primitive_name(prim) -> str:
    """A primitive's name under its newest spelling (``pjit`` is ``jit`` from 0.7.0)."""
    return RENAMES.get(prim.name, prim.name)


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
    if params[0] == "axis_data":
        return B.matchaxis(axis_data(size, name), src, dst, x, sum_match)
    if "mesh_axis" in params:
        return B.matchaxis(name, size, None, src, dst, x, sum_match)
    return B.matchaxis(name, size, src, dst, x, sum_match)


def matchaxis_arguments(args, kwargs) -> tuple:
    """``(src, dst, sum_match)`` of one call of ``matchaxis``: named alike in every signature."""
    bound = inspect.signature(B.matchaxis).bind(*args, **kwargs)
    bound.apply_defaults()
    a = bound.arguments
    return a["src"], a["dst"], bool(a["sum_match"])


def spec_match_error() -> type:
    return B.SpecMatchError




def register_rule(prim, rule) -> None:
    """Install an old-style rule ``rule(vals, dims, **params) -> (out, out_dim)`` on any release.

    Assigning to ``primitive_batchers`` works everywhere: a dict in the split layout, a proxy
    that wraps the rule into the one remaining table in the collapsed layout."""
    B.primitive_batchers[prim] = rule


def unregister_rule(prim) -> None:
    """Undo `register_rule`: deleting through ``primitive_batchers`` works on every layout."""
    del B.primitive_batchers[prim]


def register_fancy_rule(prim, rule) -> None:
    """Install ``rule(axis_data, vals, dims, **params) -> (out, out_dim)`` in the table whose rules
    get the axis being mapped (``fancy_primitive_batchers``, a dict on every release from
    0.4.36); process_primitive consults it first, so it runs even when no input is mapped."""
    B.fancy_primitive_batchers[prim] = rule


def unregister_rules(prim) -> None:
    """Remove every rule ``prim`` has in a real rule table (`register_rule`'s or
    `register_fancy_rule`'s); a primitive with none is left as it is."""
    for table in (B.primitive_batchers, B.fancy_primitive_batchers):
        if isinstance(table, dict):
            table.pop(prim, None)


def current_trace():
    """The trace a ``bind`` made now dispatches to (``core.trace_ctx.trace``): inside a vmapped
    function its BatchTrace, whose ``parent_trace`` is the trace around that vmap."""
    return jcore.trace_ctx.trace


def error_meaning(message: str) -> str | None:
    """What a JAX error message about a batching rule's result means, across its wordings."""
    if "out of range" in message or "out of bounds" in message:
        return "axis out of range"
    if "batch dim should be int" in message or "must be an int" in message:
        return "batch dim not an int"
    return None
