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


def compare(case, exp, got) -> Finding | None:
    where = describe(case)
    want, mine = unpack(exp), unpack(got)
    if not _close(mine, want):
        hint = ("That is the other order: with order='ji' the result's first axis runs over y."
                if _close(mine, want.T) else
                "S[i, j] = x[i] . y[j]: the outer vmap makes the result's first axis.")
        return Finding(where, f"scores of shape {want.shape}", f"shape {mine.shape}"
                       + (" (values differ)" if mine.shape == want.shape else ""), hint)
    if not got["vmapped"]:
        return Finding(where, "nested jax.vmaps of a one-pair dot", "no vmap: the grid was "
                       "written by hand", "Write the dot of ONE pair of (d,) vectors and let two "
                       "nested vmaps make the grid; vmap folds every pair into one dot_general.")
    eqns = [Eqn.from_plain(e) for e in got["eqns"]]
    prims, widened = core.primitives(eqns), core.widening_broadcasts(eqns)
    count = prims.count("dot_general")
    if count != 1:
        return Finding(where, "exactly one dot_general", f"{count}: {prims}",
                       "Let vmap do the pairing: the pair function should be a dot (a @ b), and "
                       "two nested vmaps fold every pair into one dot_general." if count == 0 else
                       "One dot_general covers all pairs; do not loop or call per row.")
    if "transpose" in prims:
        return Finding(where, "no transpose", str(prims),
                       "dot_general lays out the left operand's free axis first. Swapping the "
                       "nesting order alone leaves the batch axes in the wrong order and vmap "
                       "transposes at the end; make the array that indexes the result's first "
                       "axis the LEFT operand of the dot.")
    if widened:
        return Finding(where, "no operand widened to the batch size",
                       f"broadcast_in_dim {widened[0][0]} -> {widened[0][1]}",
                       "The argument that does not vary in a vmap should get in_axes=None; it is "
                       "never copied per example.")
    return None


PAIRWISE = Exercise("l2_pairwise", 2, ("pairwise",), observe.pairwise, cases, expect, compare,
                    name="check_pairwise",
                    failure_hint="pairwise(x, y, order='ij') should return the (n, m) or (m, n) "
                                 "scores.")
check_pairwise = PAIRWISE.checker()

__all__ = ["PAIRWISE", "check_pairwise"]
