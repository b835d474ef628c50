"""Exercise 3: ``pairwise(x, y, order="ij")`` by nested vmaps, as one dot_general."""
from __future__ import annotations

import numpy as np

from ... import core
from ...core.jaxprs import Eqn
from ...exercise import Exercise, describe, fresh_cases
from ...feedback import Finding
from ...wire import pack, unpack
from .kit import observe

VISIBLE = ({"n": 3, "m": 5, "d": 4, "order": "ij", "_seed": 1},
           {"n": 3, "m": 5, "d": 4, "order": "ji", "_seed": 2})


def _case(rng, order: str) -> dict:
    n, m, d = (int(v) for v in rng.choice(np.arange(2, 12), size=3, replace=False))
    return {"n": n, "m": m, "d": d, "order": order, "_seed": int(rng.integers(2**31))}


def cases(rng, hidden: bool) -> list[dict]:
    if not hidden:
        return [dict(c) for c in VISIBLE]
    return fresh_cases(lambda i: _case(rng, "ij" if i % 2 == 0 else "ji"), VISIBLE, 4)


def expect(case) -> dict:
    x, y = observe.pair_inputs(case)
    s = x @ y.T
    return pack(s if case["order"] == "ij" else s.T)


def _close(a, b, tol=1e-4) -> bool:
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=tol, atol=tol))


def _operand(case, shape) -> str:
    """Which argument an array of ``shape`` (per-row or stacked) comes from: x, y, or a copy."""
    n, m, d = case["n"], case["m"], case["d"]
    names = [name for name, rows in (("x", n), ("y", m)) if tuple(shape[-2:]) == (rows, d)]
    return names[0] if len(names) == 1 else "an operand"


def compare(case, exp, got) -> Finding | None:
    where, order = describe(case), case["order"]
    want, mine = unpack(exp), unpack(got)
    first = "x" if order == "ij" else "y"
    if not _close(mine, want):
        if _close(mine, want.T):
            hint = (f"That is the other order: with order={order!r} the result's first axis runs "
                    f"over {first}, shape {want.shape}; yours is the transpose, {mine.shape}.")
        else:
            hint = (f"S[i, j] = x[i] . y[j] (order 'ij'), S[j, i] = y[j] . x[i] (order 'ji'): the "
                    f"outer vmap makes the result's first axis, here over {first}, "
                    f"{want.shape}; yours has shape {mine.shape}.")
        return Finding(where, f"scores of shape {want.shape}", f"shape {mine.shape}"
                       + (" (values differ)" if mine.shape == want.shape else ""), hint)
    if not got["vmapped"]:
        return Finding(where, "nested jax.vmaps of a one-pair dot", "no vmap: the grid was "
                       "written by hand", "Write the dot of ONE pair of (d,) vectors and let two "
                       "nested vmaps make the grid; vmap folds every pair into one dot_general.")
    if "dot_general" not in got.get("batched", []) and any(
            e[0] == "dot_general" for e in got["eqns"]):
        batched = ", ".join(sorted(set(got.get("batched", [])))) or "nothing"
        return Finding(where, "the dot batched by your vmaps", f"vmap batched only {batched}",
                       "The dot that makes the grid must be the one-pair dot your vmaps batch; "
                       "yours is computed outside them (an einsum or a matrix product of the "
                       "whole arrays). Put a @ b of two (d,) vectors inside the nested vmaps.")
    eqns = [Eqn.from_plain(e) for e in got["eqns"]]
    prims, widened = core.primitives(eqns), core.widening_broadcasts(eqns)
    if widened:
        ins, outs = widened[0]
        return Finding(where, "no operand widened to the batch size",
                       f"broadcast_in_dim {ins} -> {outs}",
                       f"broadcast_in_dim {ins} -> {outs} copies {_operand(case, ins)} once per "
                       f"row of the other: the argument that does not vary in a vmap should get "
                       f"in_axes=None; it is never copied per example.")
    count = prims.count("dot_general")
    if count != 1:
        return Finding(where, "exactly one dot_general", f"{count}: {prims}",
                       f"your grid is built from {', '.join(sorted(set(prims)))} with no "
                       f"dot_general: the pair function should be a dot (a @ b), and two nested "
                       f"vmaps fold every pair into one dot_general." if count == 0 else
                       f"your program holds {count} dot_generals: one dot_general covers all "
                       f"pairs; do not loop or call per row.")
    if "transpose" in prims:
        dot = next(e for e in eqns if e.primitive == "dot_general")
        return Finding(where, "no transpose", str(prims),
                       f"your dot_general gives {dot.out_shapes[0]} and a transpose turns it into "
                       f"{want.shape}: dot_general lays out the left operand's free axis first, "
                       f"so for order={order!r}, where {first} indexes the result's first axis, "
                       f"make {first} the LEFT operand of the dot. Swapping the nesting order "
                       f"alone leaves the batch axes in the wrong order.")
    return None


PAIRWISE = Exercise("l2_pairwise", 2, ("pairwise",), observe.pairwise, cases, expect, compare,
                    name="check_pairwise",
                    failure_hint="pairwise(x, y, order='ij') should return the (n, m) or (m, n) "
                                 "scores.")
check_pairwise = PAIRWISE.checker()

__all__ = ["PAIRWISE", "check_pairwise"]
