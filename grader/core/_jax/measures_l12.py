"""Live measures of the facts lessons 1 and 2 and the appendix added (history.py's block of that name).

One small function per fact, as in ``measures.py``; each leaves JAX's tables and methods as it found them.
"""
from __future__ import annotations

import inspect
from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np

from . import B, ShapedArray, new_primitive, register_rule, traces, unregister_rule


def _bind_dispatcher():
    return traces.bind_dispatcher().__name__


def _numpy_out_dim():
    """What a BatchTracer becomes when an old-style rule answers ``np.int64`` for its out dim."""
    prim = new_primitive("numpy_out_dim")
    prim.def_impl(lambda v: v)
    prim.def_abstract_eval(lambda v: ShapedArray(v.shape, v.dtype))
    register_rule(prim, lambda vals, dims, **params: (prim.bind(*vals, **params), np.int64(dims[0])))
    seen = []

    def f(x):
        try:
            y = prim.bind(x)
        except Exception:                      # refused when the tracer is made
            seen.append("BatchTracer() refuses it")
            return x
        try:
            seen.append("its aval is None" if y.aval is None else "its aval is fine")
        except Exception:                      # refused when the aval is read
            seen.append("reading its aval raises")
        return x

    try:
        jax.vmap(f)(jnp.ones((2, 3)))
    finally:
        unregister_rule(prim)
    return seen[0]


def _batch_dim_hijax():
    """Whether a BatchTracer lets a hijax type (``HiType``) read its own kind of batch spec."""
    tracer = B.BatchTracer
    static = inspect.getattr_static(tracer, "aval")
    code = inspect.getsource(tracer.__init__)
    if isinstance(static, property):
        code += inspect.getsource(static.fget)
    return "HiType" in code


# The rules that moved from primitive_batchers into fancy_primitive_batchers before the collapse.
MOVED_RULES = ("add_any", "broadcast_in_dim", "conv_general_dilated", "dot_general", "reshape")


def _rule_source(name: str) -> str:
    for table in (getattr(B, t, None) for t in ("primitive_batchers", "fancy_primitive_batchers")):
        for prim, rule in (table.items() if isinstance(table, dict) else ()):
            if prim.name == name:
                return inspect.getsource(traces.unwrap(rule))
    raise LookupError(f"no batching rule for {name!r}")


def _moved_rules_use_sharding():
    """Which of the moved rules read ``axis_data`` to give the new batch axis its sharding."""
    uses = [n for n in MOVED_RULES
            if any(p in _rule_source(n) for p in ("get_sharding_for_vmap", "explicit_mesh_axis"))]
    return ", ".join(uses) or "none"


# Every rule in primitive_batchers on 0.4.36 that sits in fancy_primitive_batchers on 0.8.1, the
# last release with two tables (read in a fresh process on each, after one warm-up vmap).
MOVED_BEFORE_COLLAPSE = ("add_any", "addupdate", "broadcast_in_dim", "conv_general_dilated",
                         "convert_element_type", "dot_general", "reshape", "scatter", "scatter-add",
                         "scatter-max", "scatter-min", "scatter-mul", "scatter-sub", "select_n", "swap")


def _moved_rules_read_axis_data():
    """Each moved rule that sits in the fancy table on this release reads axis_data in its body
    (vacuously true before the first moved)."""
    jax.vmap(lambda x: jnp.sum(jnp.tanh(x)))(jnp.ones((2, 2)))    # the first vmap imports more rules
    fancy = B.fancy_primitive_batchers
    there = {p.name: rule for p, rule in fancy.items() if p.name in MOVED_BEFORE_COLLAPSE}
    return all(traces.reads_axis_data(rule) for rule in there.values())


def _jnp_sin_wrapper():
    """How ``jnp.sin`` is wrapped: the ``inline`` parameter of the jit equation vmap batches."""
    seen, original = [], B.BatchTrace.process_primitive

    def spy(self, p, tracers, params, *rest):
        if p.name in ("jit", "pjit"):
            seen.append(params.get("inline"))
        return original(self, p, tracers, params, *rest)

    B.BatchTrace.process_primitive = spy
    try:
        jax.vmap(jnp.sin)(jnp.ones(2))
    finally:
        B.BatchTrace.process_primitive = original
    inline = seen[0]
    return "jit(inline=True)" if inline is True else f"jit(inline={type(inline).__name__}.{inline.name})"


def _matchaxis_named_refusal():
    """What matchaxis raises for a batched value with ``dst=None`` when the axis has a name."""
    from . import call_matchaxis
    try:
        call_matchaxis(0, None, jnp.ones((2, 3)), 2, False, "i")
    except Exception as err:                   # the kind is the answer
        return type(err).__name__
    return "no error"


def _jitted_custom_vjp_entry():
    """Which entry point a custom_vjp inside a jit reaches when vmap's jit rule batches the program."""
    @jax.custom_vjp
    def clip_grad(x):
        return x
    clip_grad.defvjp(lambda x: (x, None), lambda _, g: (jnp.clip(g, -1.0, 1.0),))
    seen = []
    originals = {m: getattr(B.BatchTrace, m) for m in traces.ENTRY_POINTS if m in vars(B.BatchTrace)}

    def spy(method, original):
        def entry(self, prim, *args, **kwargs):
            seen.append((prim.name, method))
            return original(self, prim, *args, **kwargs)
        return entry

    for method, original in originals.items():
        setattr(B.BatchTrace, method, spy(method, original))
    try:
        jax.vmap(jax.jit(clip_grad))(jnp.ones(3))
    finally:
        for method, original in originals.items():
            setattr(B.BatchTrace, method, original)
    name, method = next((n, m) for n, m in seen if n.startswith("custom_vjp"))
    return f"{name}, through {method}"


def _tracer_slots():
    return ", ".join(traces.Tracer.__slots__)


MEASURES_L12: dict[str, Callable[[], object]] = {
    "bind_takes_current_trace": _bind_dispatcher,
    "rule_numpy_int_out_dim": _numpy_out_dim,
    "batch_dim_hijax": _batch_dim_hijax,
    "moved_rules_use_sharding": _moved_rules_use_sharding,
    "jnp_sin_wrapper": _jnp_sin_wrapper,
    "moved_rules_read_axis_data": _moved_rules_read_axis_data,
    "matchaxis_named_refusal": _matchaxis_named_refusal,
    "tracer_inherited_slots": _tracer_slots,
    "jitted_custom_vjp_entry": _jitted_custom_vjp_entry,
}
