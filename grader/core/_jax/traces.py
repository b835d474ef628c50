"""Adapters for how a primitive reaches a trace: the current trace, the functions behind JAX's
decorated helpers, the transpose-rule tables. Part of the one package that imports ``jax._src``.
"""
from __future__ import annotations

import ast
import functools
import inspect
import textwrap

from jax._src import core as jcore
from jax._src.interpreters import ad
from jax._src.interpreters import batching as B

from . import current_trace  # noqa: F401  (the one adapter, in __init__.py; the kit uses it too)

Tracer = jcore.Tracer
EvalTrace = jcore.EvalTrace
Primitive = jcore.Primitive
set_current_trace = jcore.set_current_trace

# BatchTrace's entry points: one per kind of thing a bind can hand it (process_call until 0.11.0).
ENTRY_POINTS = ("process_primitive", "process_custom_jvp_call", "process_custom_vjp_call",
                "process_call", "process_map")


def jaxpr_trace_class():
    """The trace ``jax.make_jaxpr`` makes current: its ``process_primitive`` records an equation."""
    from jax._src.interpreters import partial_eval as pe
    return pe.DynamicJaxprTrace


def bind_dispatcher():
    """The method of ``Primitive`` that hands the current trace to ``bind_with_trace``.

    ``bind`` itself on most releases; ``bind`` delegated to ``_true_bind`` in between."""
    for name in ("bind", "_true_bind"):
        fn = getattr(jcore.Primitive, name, None)
        if fn is not None and "bind_with_trace(" in inspect.getsource(fn):
            return fn
    raise LookupError("no method of Primitive calls bind_with_trace")


def unwrap(fn):
    """The plain function behind ``fn``: through ``functools.partial`` (``lu.transformation2``
    keeps the decorated generator as its first argument), ``__wrapped__``, and the closure of the
    collapsed layout's wrapper around an old-style rule (its free variable ``batcher``)."""
    for _ in range(8):
        if isinstance(fn, functools.partial):
            inner = fn.func
            if getattr(inner, "__name__", "").startswith("transformation") and fn.args:
                inner = fn.args[0]
            fn = inner
        elif hasattr(fn, "__wrapped__"):
            fn = fn.__wrapped__
        elif "batcher" in getattr(getattr(fn, "__code__", None), "co_freevars", ()):
            fn = fn.__closure__[fn.__code__.co_freevars.index("batcher")].cell_contents
        else:
            return fn
    return fn


def reads_axis_data(rule) -> bool | None:
    """Whether a rule function's body reads its ``axis_data`` parameter; ``None`` when it takes
    none (an old-style rule, behind the compatibility wrapper of the one-table layout)."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(unwrap(rule)))).body[0]
    if not isinstance(tree, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    if "axis_data" not in [a.arg for a in tree.args.posonlyargs + tree.args.args]:
        return None
    return any(isinstance(node, ast.Name) and node.id == "axis_data"
               for stmt in tree.body for node in ast.walk(stmt))


def batching_function(name: str):
    """A function of JAX's batching module by name, unwrapped (``_batch_inner``, ``from_elt``...)."""
    return unwrap(getattr(B, name))


def transpose_tables() -> dict[str, dict]:
    """The transpose-rule tables this release has (``fancy_transposes`` from 0.8)."""
    return {name: getattr(ad, name) for name in ("primitive_transposes", "fancy_transposes")
            if isinstance(getattr(ad, name, None), dict)}


def add_any(x, y):
    """``add_any`` (``add_jaxvals_p``), the primitive that accumulates gradients."""
    from jax._src import ad_util
    return ad_util.add_jaxvals_p.bind(x, y)


def lax_function(name: str):
    """A private function of ``jax._src.lax.lax`` by name (a transpose rule, ``_unbroadcast``)."""
    from jax._src.lax import lax as lax_internal
    return getattr(lax_internal, name)


def axis_env_sizes() -> dict:
    """The named axes the current axis environment holds, with their sizes (collectives read it)."""
    env = jcore.get_axis_env()
    return dict(env.axis_sizes)
