"""The live measures of lesson 3's facts (`history.HISTORY`'s lesson-3 block): programs inside
programs under vmap. One small function per fact, as in `measures`; each asks the installed JAX."""
from __future__ import annotations

import inspect
from collections.abc import Callable

import jax
import jax.numpy as jnp
from jax import lax

from . import B, open_jaxpr
from .programs import platform_cond, rule_named, while_lowering


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


def _map_shape(batch_size: int, rows: int = 10) -> str:
    """What ``lax.map(sin, xs, batch_size)`` builds on ``rows`` examples, in a few words."""
    try:
        jaxpr = jax.make_jaxpr(lambda xs: lax.map(jnp.sin, xs, batch_size=batch_size))(
            jnp.ones((rows, 2)))
    except Exception as err:                  # batch_size=0 divides by it on older releases
        return f"raises {type(err).__name__}"
    eqns = open_jaxpr(jaxpr).eqns
    names = [e.primitive.name for e in eqns]
    if "scan" not in names:
        return "vmap(f) alone" if names.count("sin") == 1 else ", ".join(names)
    trips = next(e.params["length"] for e in eqns if e.primitive.name == "scan")
    head = "a scan of 0 trips" if trips == 0 else "a scan over chunks"
    tail = ", then vmap(f) of the rest, concatenated" if "concatenate" in names else ", no remainder"
    return head + tail


def _map_remainder_sizes() -> str:
    """The rows the remainder's vmap(f) gets when batch_size divides len(xs) (none if absent)."""
    jaxpr = jax.make_jaxpr(lambda xs: lax.map(jnp.sin, xs, batch_size=5))(jnp.ones((10, 2)))
    outer = [e for e in open_jaxpr(jaxpr).eqns if e.primitive.name == "sin"]
    return f"vmap(f) of {outer[0].outvars[0].aval.shape[0]} rows, concatenated" if outer else "none"


# ---- corrections of the first review: where the rules differ from "batch_jaxpr at axis 0" ----

def _rule_calls(name: str) -> str:
    """Which of batch_jaxpr / batch_jaxpr_axes ``name``'s batching rule calls, in its source."""
    source = inspect.getsource(rule_named(name))
    return ", ".join(n for n in ("batch_jaxpr", "batch_jaxpr_axes") if f"batching.{n}(" in source)


def _while_const_moved():
    """Whether a const batched on axis 1 is transposed before the while (False: in its body)."""
    def f(k, n):
        return lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * k),
                              (0, jnp.ones(3)))[1]
    names = _names(jax.vmap(f, in_axes=(1, 0)), jnp.ones((3, 4)), jnp.arange(4))
    return "transpose" in names[:names.index("while")]


def _while_carry_axis_rank1_pred():
    """The axis of the batched carry when an outer vmap meets a predicate batched by an inner
    one (the outer level sees an unbatched predicate of rank 1)."""
    def f(n, s):
        return lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * 2.0), (0, s))[1]
    outer = jax.vmap(jax.vmap(f, in_axes=(0, None)), in_axes=(None, 0))
    eqn = next(e for e in open_jaxpr(jax.make_jaxpr(outer)(jnp.arange(3), jnp.ones(5))).eqns
               if e.primitive.name == "while")
    return list(eqn.outvars[-1].aval.shape).index(5)


def _while_ordered_effect():
    """vmap of a while whose predicate has an ordered effect, on limits [1, 3] (right: [1, 3])."""
    def f(n):
        def cond(c):
            jax.debug.callback(lambda v: None, c, ordered=True)
            return c < n
        return lax.while_loop(cond, lambda c: c + 1, 0)
    try:
        return str([int(v) for v in jax.vmap(f)(jnp.array([1, 3]))])
    except Exception as err:
        return f"raises {type(err).__name__}"


def _select_n_count() -> str:
    """select_n equations in vmap of a lax.switch with a batched index, for a few shapes."""
    counts = {}
    for k, n, m in ((2, 2, 1), (3, 3, 1), (3, 2, 2), (4, 1, 3)):
        def sw(i, *ops, k=k, m=m):
            return lax.switch(i, [lambda *o, j=j: tuple(sum(o) * (j + 1) + q for q in range(m))
                                  for j in range(k)], *ops)
        jaxpr = jax.make_jaxpr(jax.vmap(sw))(jnp.zeros(5, jnp.int32), *[jnp.ones((5, 3))] * n)
        counts[(k, n, m)] = [e.primitive.name for e in open_jaxpr(jaxpr).eqns].count("select_n")
    if all(c == k * n + m for (k, n, m), c in counts.items()):
        return "branches x operands + outputs"
    return str(counts)


def _platform_cond_batched_index() -> str:
    try:
        names = _names(jax.vmap(platform_cond), jnp.zeros(4, jnp.int32), jnp.ones(4))
    except Exception as err:
        return f"raises {type(err).__name__}"
    return "cond" if "cond" in names else "select_n" if "select_n" in names else ", ".join(names)


def _scan_ref_xs() -> str:
    """vmap of a scan over a Ref (jax.new_ref) batched on axis 2, and on its leading axis."""
    if not hasattr(jax, "new_ref"):
        return "no jax.new_ref"

    def f(x):
        return lax.scan(lambda c, rx: (c + rx[...], ()), jnp.zeros(3), jax.new_ref(x))[0]
    try:
        jax.make_jaxpr(jax.vmap(f, in_axes=2))(jnp.ones((6, 3, 4)))
    except Exception:
        return "fails"
    try:
        jax.make_jaxpr(jax.vmap(f, in_axes=0))(jnp.ones((4, 6, 3)))
        return "batched in place, on any axis"
    except Exception as err:
        return f"batched in place; its leading axis raises {type(err).__name__}"


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
    "map_divisible_remainder": _map_remainder_sizes,
    "map_batch_over_length": lambda: _map_shape(batch_size=16),
    "map_batch_size_zero": lambda: _map_shape(batch_size=0),
    "cond_rule_calls": lambda: _rule_calls("cond"),
    "while_rule_calls": lambda: _rule_calls("while"),
    "scan_rule_calls": lambda: _rule_calls("scan"),
    "while_batched_const_moved": _while_const_moved,
    "while_carry_axis_rank1_pred": _while_carry_axis_rank1_pred,
    "while_ordered_effect_batched": _while_ordered_effect,
    "cond_select_n_count": _select_n_count,
    "platform_cond_batched_index": _platform_cond_batched_index,
    "jit_rule_ragged": lambda: "ragged" in inspect.getsource(rule_named("jit")),
    "jnp_clip_jit_eqn": lambda: "jit" in _names(jax.vmap(jnp.clip), jnp.ones((4, 3))),
    "scan_ref_xs": _scan_ref_xs,
}
