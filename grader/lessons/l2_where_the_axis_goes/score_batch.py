"""Exercise 4: ``score_batch(w, xs)`` with ``jax.vmap``, never materialising w per example."""
from __future__ import annotations

import numpy as np

from ...core.jaxprs import Eqn
from ...exercise import Exercise, describe, fresh_cases
from ...feedback import Finding
from ...wire import pack, unpack
from .kit import observe

VISIBLE = ({"d": 100, "k": None, "B": 8, "_seed": 3}, {"d": 60, "k": 5, "B": 8, "_seed": 4})


def _case(rng, with_k: bool) -> dict:
    d, B, k = int(rng.integers(20, 200)), int(rng.integers(3, 17)), int(rng.integers(2, 9))
    return {"d": d, "k": k if with_k else None, "B": B, "_seed": int(rng.integers(2**31))}


def cases(rng, hidden: bool) -> list[dict]:
    if not hidden:
        return [dict(c) for c in VISIBLE]
    return fresh_cases(lambda i: _case(rng, with_k=i % 2 == 1), VISIBLE, 4)


def expect(case) -> dict:
    w, xs = observe.score_inputs(case)
    return pack(np.tanh(xs @ w))


def _close(a, b, tol=1e-4) -> bool:
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=tol, atol=tol))


def _materialised(case, eqns):
    """The first equation whose output is as large as a per-example copy of w."""
    w_size = case["d"] * (case["k"] or 1)
    for e in eqns:
        for shape in e.out_shapes:
            if case["B"] in shape and int(np.prod(shape)) >= case["B"] * w_size:
                return e.primitive, e.in_shapes, shape
    return None


def _values_hint(case, want, mine) -> str:
    """What the scores got wrong: their layout, a missing tanh, or the numbers themselves."""
    if mine.shape != want.shape:
        if sorted(mine.shape) == sorted(want.shape):
            return (f"your scores have shape {mine.shape}: the batch of {case['B']} goes first, "
                    f"{want.shape}.")
        return (f"one score per row x of xs is tanh(x @ w): {want.shape} for B={case['B']}"
                f"{'' if case['k'] is None else ' and k=' + str(case['k'])}; yours have shape "
                f"{mine.shape}.")
    w, xs = observe.score_inputs(case)
    if _close(mine, xs @ w):
        return "your scores are x @ w without the tanh: each row x of xs scores as tanh(x @ w)."
    return "the numbers differ from tanh(x @ w) for each row x of xs (the batch axis first)."


def compare(case, exp, got) -> Finding | None:
    where = describe(case)
    want, mine = unpack(exp), unpack(got)
    if not _close(mine, want):
        return Finding(where, f"tanh(x @ w) per example, shape {want.shape}",
                       f"shape {mine.shape}" + (" (values differ)" if mine.shape == want.shape
                                                else ""), _values_hint(case, want, mine))
    found = _materialised(case, [Eqn.from_plain(e) for e in got["eqns"]])
    if found is not None:
        prim, ins, shape = found
        hint = (f"broadcast_in_dim {ins[0]} -> {shape} copies w once per example: you broadcast "
                f"w to the batch yourself; pass it with in_axes=None instead and it stays the "
                f"size it is." if prim == "broadcast_in_dim" else
                f"{prim} {ins} -> {shape} is an elementwise product of w with each example: it "
                f"builds a copy of w's size per example before summing; a dot (x @ w) contracts "
                f"directly, and dot_general takes the unmapped w as it is.")
        return Finding(where, "no equation with an output of B x w.size elements",
                       f"{prim} {ins} -> {shape}", hint)
    batched = got.get("batched", [])
    if not got["vmapped"]:
        return Finding(where, "a jax.vmap over the examples", "no vmap: the batch was written by "
                       "hand", "The exercise is to let vmap batch the one-example score: write "
                       "tanh(x @ w) for one x and map it over xs with w unmapped (in_axes=None).")
    if "dot_general" not in batched:
        return Finding(where, "x @ w inside the vmap", f"vmap batched only {sorted(set(batched))}",
                       f"your vmap batched only {', '.join(sorted(set(batched)))}: the dot "
                       f"x @ w was written by hand on the whole batch, outside it. Put the dot "
                       f"in the one-example function you vmap, with w unmapped (in_axes=None).")
    return None


SCORE_BATCH = Exercise("l2_score_batch", 2, ("score_batch",), observe.score_batch, cases, expect,
                       compare, name="check_score_batch",
                       failure_hint="score_batch(w, xs) should return one score (or k scores) per "
                                    "row of xs.")
check_score_batch = SCORE_BATCH.checker()

__all__ = ["SCORE_BATCH", "check_score_batch"]
