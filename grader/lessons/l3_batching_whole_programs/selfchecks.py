"""Lesson 3's self-check: predict, for four calls of one function, whether vmap keeps its cond.
Ungraded: it shows a verdict and never raises; only the calls answered so far are checked."""
from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax

from ... import core
from ...feedback import Finding, Result, selfcheck


def pick(p, a, w):
    return lax.cond(p, lambda a, w: jnp.sin(a) * w, lambda a, w: a + w, a, w)


# in_axes of pick(p, a, w) with p a bool, a and w (3,) vectors (stacked: batch of 6 in front)
KEEP_CALLS = ((None, 0, None), (0, None, None), (None, None, 0), (0, 0, 0))


def format_keep_calls() -> str:
    return "\n".join(f"call {n}: vmap(pick, in_axes={axes})"
                     for n, axes in enumerate(KEEP_CALLS, start=1))


def kept(number: int) -> str:
    """'cond' or 'select_n': what the batched program of call ``number`` holds, traced now."""
    axes = KEEP_CALLS[number - 1]
    args = [jnp.ones(6, bool) if axes[0] == 0 else True,
            *(jnp.ones((6, 3)) if ax == 0 else jnp.ones(3) for ax in axes[1:])]
    prims = core.primitives(core.summarize_fn(jax.vmap(pick, in_axes=axes), *args))
    return "cond" if "cond" in prims else "select_n"


def selfcheck_keep_cond(answer) -> Result:
    """``answer = {call: "cond" or "select_n"}`` for KEEP_CALLS."""
    given = {n: v for n, v in dict(answer or {}).items() if v is not None}
    findings = []
    for number in sorted(given, key=str):
        if number not in range(1, len(KEEP_CALLS) + 1):
            findings.append(Finding(f"call {number}", "a call number 1..4", str(number), ""))
            continue
        want, axes = kept(number), KEEP_CALLS[number - 1]
        if given[number] != want:
            why = ("the predicate p is batched (in_axes[0] = 0): examples may take different "
                   "branches, so both run and select_n picks" if axes[0] == 0 else
                   "the predicate p is not batched: whatever the operands, one branch for all "
                   "examples, and the cond stays")
            findings.append(Finding(f"call {number}: vmap(pick, in_axes={axes})", want,
                                    str(given[number]), why + "."))
    missing = [n for n in range(1, len(KEEP_CALLS) + 1) if n not in given]
    return selfcheck("selfcheck_keep_cond", len(given), findings,
                     f"not answered yet: {missing}" if missing else "", complete=not missing)


__all__ = ["KEEP_CALLS", "format_keep_calls", "kept", "pick", "selfcheck_keep_cond"]
