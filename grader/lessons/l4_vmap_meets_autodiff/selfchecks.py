"""Lesson 4's self-check: which ``BatchTrace`` method meets a custom rule's call, for six calls.
Ungraded (running the calls with `core.reached` answers it): it shows a verdict and never raises.
Only the calls answered so far are checked, so a student can predict one at a time."""
from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
from jax import lax

from ... import core
from ...feedback import Finding, Result, selfcheck

METHODS = ("process_primitive", "process_custom_jvp_call", "process_custom_vjp_call", "none")


@functools.lru_cache(maxsize=1)
def _functions():
    """A custom_jvp, a custom_vjp and a custom_vmap version of sin."""
    @jax.custom_jvp
    def f_jvp(x):
        return lax.sin(x)
    f_jvp.defjvp(lambda p, t: (lax.sin(p[0]), lax.cos(p[0]) * t[0]))

    @jax.custom_vjp
    def g_vjp(x):
        return lax.sin(x)
    g_vjp.defvjp(lambda x: (lax.sin(x), x), lambda x, ct: (lax.cos(x) * ct,))

    @jax.custom_batching.custom_vmap
    def h_vmap(x):
        return lax.sin(x)
    h_vmap.def_vmap(lambda size, batched, x: (lax.sin(x), batched[0]))
    return f_jvp, g_vjp, h_vmap


def _calls() -> dict:
    f_jvp, g_vjp, h_vmap = _functions()
    xs = jnp.arange(3.0)
    return {
        1: ("jax.vmap(f_jvp)(xs)", lambda: jax.vmap(f_jvp)(xs)),
        2: ("jax.vmap(g_vjp)(xs)", lambda: jax.vmap(g_vjp)(xs)),
        3: ("jax.vmap(jax.grad(g_vjp))(xs)", lambda: jax.vmap(jax.grad(g_vjp))(xs)),
        4: ("jax.grad(lambda w: jnp.sum(jax.vmap(g_vjp)(w * xs)))(1.0)",
            lambda: jax.grad(lambda w: jnp.sum(jax.vmap(g_vjp)(w * xs)))(1.0)),
        5: ("jax.vmap(h_vmap)(xs)", lambda: jax.vmap(h_vmap)(xs)),
        6: ("jax.vmap(jax.jit(f_jvp))(xs)", lambda: jax.vmap(jax.jit(f_jvp))(xs)),
    }


def format_route_calls() -> str:
    """The six calls, one a line, as the exercise prints them."""
    return "\n".join(f"{n}: {text}" for n, (text, _) in _calls().items())


def route(thunk) -> str:
    """The BatchTrace method that met the custom call of ``thunk()``, or "none"."""
    hits = [r.method for r in core.reached(thunk) if core.is_custom_call(r.primitive)]
    return hits[0] if hits else "none"


def routes() -> dict[int, str]:
    """Each call's answer, measured on the installed JAX."""
    return {n: route(thunk) for n, (_, thunk) in _calls().items()}


HINTS = {
    "process_custom_jvp_call": "a custom_jvp call binds custom_jvp_call, whose bind hands it to "
                               "the trace's process_custom_jvp_call, never to process_primitive",
    "process_custom_vjp_call": "a custom_vjp call met by a vmap goes to process_custom_vjp_call "
                               "(JAX's default custom_vjp), which batches fun, fwd and bwd "
                               "(batch_custom_vjp_bwd)",
    "process_primitive": "custom_vmap_call is an ordinary primitive: its batching rule (which "
                         "calls your rule) sits in the rule table, so process_primitive runs it",
    "none": "grad is inside the vmap: grad's own trace meets the custom_vjp call first and runs "
            "fwd and bwd, so the vmap only ever sees their primitives",
}


def _hint(number: int, text: str, want: str) -> str:
    extra = (" (inside a jit too: the vmap batches the jit's program, whose custom_jvp_call "
             "equation is bound again on the BatchTrace)" if number == 6 else "")
    return f"{text}: {HINTS[want]}{extra}."


def selfcheck_routes(predictions) -> Result:
    """Compare predicted ``{call: method}`` (one of METHODS) with what the installed JAX does."""
    calls, live = _calls(), routes()
    predictions = {n: v for n, v in dict(predictions or {}).items() if v is not None}
    findings = []
    for number, guess in sorted(predictions.items(), key=lambda item: str(item[0])):
        if number not in calls:
            findings.append(Finding(f"call {number!r}", "a call number 1..6", repr(number), ""))
        elif guess not in METHODS:
            findings.append(Finding(f"call {number}", f"one of {', '.join(METHODS)}", repr(guess),
                                    "Name the BatchTrace method, or 'none' if no vmap meets "
                                    "the custom call."))
        elif guess != live[number]:
            findings.append(Finding(f"call {number}: {calls[number][0]}", live[number], guess,
                                    _hint(number, calls[number][0], live[number])))
    missing = [n for n in calls if n not in predictions]
    return selfcheck("selfcheck_routes", len(predictions), findings,
                     f"not answered yet: {missing}" if missing else "", complete=not missing)


__all__ = ["METHODS", "format_route_calls", "route", "routes", "selfcheck_routes"]
