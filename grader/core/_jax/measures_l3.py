"""The live measures of lesson 3's facts (`history.HISTORY`'s lesson-3 block): programs inside
programs under vmap. One small function per fact, as in `measures`; each asks the installed JAX."""
from __future__ import annotations

import inspect
from typing import Callable

import jax
import jax.numpy as jnp
from jax import lax

from . import B, open_jaxpr
from .programs import rule_named, while_lowering


def _names(fn, *args) -> list[str]:
    """Primitive names of the top-level equations of ``fn``'s jaxpr (pjit spelled jit)."""
    return [{"pjit": "jit"}.get(e.primitive.name, e.primitive.name)
            for e in open_jaxpr(jax.make_jaxpr(fn)(*args)).eqns]


def _jit_rule_calls():
    source = inspect.getsource(rule_named("jit"))
    found = [n for n in ("batch_jaxpr2", "batch_jaxpr_axes", "batch_jaxpr") if f"{n}(" in source]
    return found[0] if found else "none"


def _cond_batched_predicate():
    def f(p, x):
        return lax.cond(p, lambda v: jnp.sin(v), lambda v: jnp.cos(v), x)
    names = _names(jax.vmap(f), jnp.ones(3, bool), jnp.ones((3, 2)))
    if "cond" in names:
        return "cond"
    both = "sin" in names and "cos" in names
    return "select_n, both branches inlined" if "select_n" in names and both else ", ".join(names)


def _while_batched_select():
    def f(n):
        return lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * 2.0), (0, 1.0))
    eqn = next(e for e in open_jaxpr(jax.make_jaxpr(jax.vmap(f))(jnp.arange(3))).eqns
               if e.primitive.name == "while")
    body = open_jaxpr(eqn.params["body_jaxpr"])
    in_body = "select_n" in [e.primitive.name for e in body.eqns]
    lowering = inspect.getsource(while_lowering())
    if in_body:
        return "in the batched body (select_n)"
    return ("in its lowering (_pred_bcast_select_hlo)" if "_pred_bcast_select_hlo" in lowering
            else "nowhere found")


def _scan_batched_const_moved():
    def f(k, xs):
        return lax.scan(lambda c, x: (c + x * k, ()), jnp.zeros(3), xs)[0]
    names = _names(jax.vmap(f, in_axes=(1, None)), jnp.ones((3, 4)), jnp.ones((6, 3)))
    return names.index("transpose") < names.index("scan") if "transpose" in names else False


def _map_batch_size():
    names = _names(lambda xs: lax.map(jnp.sin, xs, batch_size=3), jnp.ones((10, 2)))
    if names.count("scan") == 1 and "concatenate" in names and names.count("sin") == 1:
        return "a scan over vmap(f) of chunks, vmap(f) of the remainder"
    return ", ".join(names)


MEASURES_L3: dict[str, Callable[[], object]] = {
    "jit_rule_calls": _jit_rule_calls,
    "batch_jaxpr2_cached": lambda: hasattr(B._batch_jaxpr2, "cache_info"),
    "jit_inline_true_eqn":
        lambda: "jit" in _names(jax.jit(lambda v: lax.sin(v), inline=True), jnp.ones(3)),
    "jnp_sin_jit_eqn": lambda: "jit" in _names(jnp.sin, jnp.ones(3)),
    "cond_batched_predicate": _cond_batched_predicate,
    "while_batched_select": _while_batched_select,
    "scan_batched_const_moved": _scan_batched_const_moved,
    "map_batch_size": _map_batch_size,
}
