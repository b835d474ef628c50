"""The live measures of lesson 4's facts (vmap meets autodiff), one small function each.

Kept apart from ``measures.py`` so that lessons adding facts in parallel touch different files;
``measures.MEASURES`` takes these in, and ``history.HISTORY`` holds their recorded rows.
"""
from __future__ import annotations

import functools
import inspect
from collections.abc import Callable

import jax
import jax.numpy as jnp
from jax import lax

from . import B, primitive_name
from .autodiff import is_custom_call

_CUSTOM = ("process_primitive", "process_custom_jvp_call", "process_custom_vjp_call")


def _reached(fn, *args) -> list[tuple[str, str]]:
    """``(BatchTrace method, primitive)`` of every call of the three methods while ``fn`` runs."""
    seen, saved = [], {m: getattr(B.BatchTrace, m) for m in _CUSTOM}

    def wrap(method, original):
        @functools.wraps(original)
        def run(self, prim, *rest, **kwargs):
            seen.append((method, primitive_name(prim)))
            return original(self, prim, *rest, **kwargs)
        return run

    for method, original in saved.items():
        setattr(B.BatchTrace, method, wrap(method, original))
    try:
        fn(*args)
    finally:
        for method, original in saved.items():
            setattr(B.BatchTrace, method, original)
    return seen


def _custom_sin(**defvjp):
    @jax.custom_vjp
    def f(x):
        return lax.sin(x)
    f.defvjp(lambda x: (lax.sin(x), x), lambda x, ct: (lax.cos(x) * ct,), **defvjp)
    return f


def _route(fn) -> str:
    """Where the custom call of ``fn`` (vmapped over three values) lands: the method that met a
    custom rule's primitive, and that primitive."""
    hits = [f"{m} ({p})" for m, p in _reached(fn, jnp.arange(3.0)) if is_custom_call(p)]
    return hits[0] if hits else "never reaches the BatchTrace"


def _custom_jvp_route():
    @jax.custom_jvp
    def f(x):
        return lax.sin(x)
    f.defjvp(lambda p, t: (lax.sin(p[0]), lax.cos(p[0]) * t[0]))
    return _route(jax.vmap(f))


def _custom_vjp_route():
    return _route(jax.vmap(_custom_sin()))


def _custom_vjp_under_jit_route():
    return _route(jax.vmap(jax.jit(_custom_sin())))


def _custom_vjp3_route():
    """With JAX's opt-in implementation of custom_vjp switched on (and back off afterwards)."""
    try:
        before = jax.config.jax_custom_vjp3
    except AttributeError:
        return "no such option"
    jax.config.update("jax_custom_vjp3", True)
    try:
        return _route(jax.vmap(_custom_sin()))
    finally:
        jax.config.update("jax_custom_vjp3", before)


def _custom_vjp_generic_batching_route():
    if "generic_batching" not in inspect.signature(jax.custom_vjp.defvjp).parameters:
        return "no such option"
    return _route(jax.vmap(_custom_sin(generic_batching=True)))


# How each case uses the pair's shared output (``s``, unbatched inside the vmap) and its per-example
# one (``e``): left unmapped at the exit, broadcast at the exit by the default out_axes=0, or used
# inside the vmapped function against a batched value.
SHARED_OUTPUT_USES = ("out_axes=None", "out_axes=0", "used inside the vmap")


def _shared_loss(use: str, pair, xs):
    if use == "out_axes=None":
        return lambda w: (lambda s, e: s + jnp.sum(e))(
            *jax.vmap(pair, in_axes=(None, 0), out_axes=(None, 0))(w, xs))
    if use == "out_axes=0":
        return lambda w: (lambda s, e: jnp.sum(s) + jnp.sum(e))(*jax.vmap(pair, in_axes=(None, 0))(w, xs))
    return lambda w: jnp.sum(jax.vmap(lambda w, x: (lambda s, e: s * e)(*pair(w, x)), in_axes=(None, 0))(w, xs))


def shared_custom_vjp_output_cases() -> dict[str, str]:
    """A custom_vjp with one output that does not depend on the example (unbatched inside the vmap)
    and one per example, used in each of SHARED_OUTPUT_USES: is the shared output's cotangent
    counted once, once per example, or refused? The right gradient and the shared output's part of
    it come from the same function without the custom rule."""
    @jax.custom_vjp
    def two(w, x):
        return w * 2.0, w * x
    two.defvjp(lambda w, x: ((w * 2.0, w * x), x),
               lambda x, cts: (2.0 * cts[0] + cts[1] * x, cts[1] * 0.0))
    plain = lambda w, x: (w * 2.0, w * x)
    frozen = lambda w, x: (w * 2.0, lax.stop_gradient(w * x))     # only the shared output's part
    xs, w = jnp.arange(1.0, 4.0), 1.5
    out = {}
    for use in SHARED_OUTPUT_USES:
        try:
            got = float(jax.grad(_shared_loss(use, two, xs))(w))
        except ValueError:
            out[use] = "raises ValueError"
            continue
        once = float(jax.grad(_shared_loss(use, plain, xs))(w))
        per_example = once + (xs.shape[0] - 1) * float(jax.grad(_shared_loss(use, frozen, xs))(w))
        out[use] = {once: "counts its cotangent once", per_example: "counts its cotangent once per example"
                    }.get(got, f"gives {got}")
    return out


def _shared_custom_vjp_output():
    """One answer where every use agrees, else each use's."""
    cases = shared_custom_vjp_output_cases()
    answers = set(cases.values())
    return answers.pop() if len(answers) == 1 else "; ".join(f"{u}: {a}" for u, a in cases.items())


def _custom_vmap_grad():
    @jax.custom_batching.custom_vmap
    def h(x):
        return lax.sin(x)
    h.def_vmap(lambda size, batched, x: (lax.sin(x), batched[0]))
    try:
        jax.grad(lambda x: h(x).sum())(jnp.ones(3))
    except Exception as err:                  # the kind is the answer
        return type(err).__name__
    return "no error"


def _custom_vmap_rule_unmapped():
    """Whether a custom_vmap rule runs for a call whose inputs are all unmapped."""
    called = []

    @jax.custom_batching.custom_vmap
    def h(x):
        return lax.sin(x)
    h.def_vmap(lambda size, batched, x: called.append(1) or (lax.sin(x), batched[0]))
    jax.vmap(lambda x, y: x + h(y), in_axes=(0, None))(jnp.ones((2, 3)), jnp.ones(3))
    return bool(called)


def _custom_vmap_doc_custom_vjp() -> bool:
    return "jax.custom_vjp" in (jax.custom_batching.custom_vmap.__doc__ or "")


MEASURES: dict[str, Callable[[], object]] = {
    "custom_jvp_route": _custom_jvp_route,
    "custom_vjp_route": _custom_vjp_route,
    "custom_vjp_under_jit_route": _custom_vjp_under_jit_route,
    "shared_custom_vjp_output": _shared_custom_vjp_output,
    "custom_vmap_grad_error": _custom_vmap_grad,
    "custom_vmap_rule_when_unmapped": _custom_vmap_rule_unmapped,
    "custom_vjp3_route": _custom_vjp3_route,
    "custom_vjp_generic_batching_route": _custom_vjp_generic_batching_route,
    "custom_vmap_doc_custom_vjp": _custom_vmap_doc_custom_vjp,
}
