"""Exercise 4: ``vmap_jacobian(f, x)``, the (m, n) jacobian of f: R^n -> R^m built from vmap and
jvp or vjp, whichever maps over fewer directions, graded on its values, on the size of the axis
its vmap maps and on its equation count."""
from __future__ import annotations

import jax
import numpy as np

from ...core.jaxprs import Eqn, summarize_fn
from ...exercise import Delegating, Delegation, Exercise, describe, fresh_cases
from ...feedback import Finding
from ...wire import pack, unpack
from .kit import functions, observe

VISIBLE = ({"f": "tanh_layer", "n": 3, "m": 12, "_seed": 1},
           {"f": "sin_features", "n": 12, "m": 3, "_seed": 2})
GROW = 3                                      # the observer's second trace: n and m this much larger


def _case(rng, tall: bool) -> dict:
    small, large = int(rng.integers(2, 6)), int(rng.integers(9, 31))
    n, m = (small, large) if tall else (large, small)
    return {"f": str(rng.choice(functions.NAMES)), "n": n, "m": m,
            "_seed": int(rng.integers(2**31))}


def cases(rng, hidden: bool) -> list[dict]:
    if not hidden:
        return [dict(c) for c in VISIBLE]
    # Every draw holds tall and wide functions: jacfwd's way is right for one, jacrev's for the
    # other, and a transcription of either is wrong for half of them.
    return fresh_cases(lambda i: _case(rng, tall=i % 2 == 0), VISIBLE, 4)


def _reference(case):
    """JAX's own jacobian of the case's function by the cheaper mode, and its equation count."""
    f, x = functions.make(case), functions.point(case)
    jac = (jax.jacfwd if case["n"] < case["m"] else jax.jacrev)(f)
    return np.asarray(jax.jit(jac)(x)), observe.counted(summarize_fn(jac, x, recursive=True))


def expect(case) -> dict:
    value, count = _reference(case)
    return {**pack(value), "count": count}


def slack(count: int) -> int:
    """How many equations more than JAX's own program an answer may hold (its basis built
    another way, a transpose of the result)."""
    return max(6, count // 4)


def _close(a, b) -> bool:
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=1e-4, atol=1e-5))


def _mode_hint(case, sizes) -> str:
    n, m = case["n"], case["m"]
    if n < m:
        return (f"this f is tall: {m} outputs from {n} inputs. Your vmap maps over {sizes}; "
                f"mapping the {m} output cotangents through vjp (jacrev's way) does {m} backward "
                f"passes, mapping the {n} input tangents through jvp (jacfwd's way) does {n}.")
    return (f"this f is wide: {m} outputs from {n} inputs. Your vmap maps over {sizes}; mapping "
            f"the {n} input tangents through jvp (jacfwd's way) does {n} forward passes, mapping "
            f"the {m} output cotangents through vjp (jacrev's way) does {m}.")


def compare(case, exp, got) -> Finding | None:
    where, n, m = describe(case), case["n"], case["m"]
    want, mine = unpack(exp), unpack(got)
    if not _close(mine, want):
        hint = (f"rows are outputs and columns inputs: ({m}, {n}); yours is the transpose"
                if _close(mine, want.T) else
                f"the jacobian of f: R^{n} -> R^{m} has shape ({m}, {n}), J[i, j] = d f_i / d x_j")
        return Finding(where, f"the jacobian, shape {want.shape}", f"shape {mine.shape}"
                       + (" (values differ)" if mine.shape == want.shape else ""), hint + ".")
    eqns = [Eqn.from_plain(e) for e in got["eqns"]]
    count, sizes = observe.counted(eqns), got["batch_sizes"]
    if got["grown"] != count:
        return Finding(where, "a program that does not grow with n and m",
                       f"{count} equations, {got['grown']} for n and m {GROW} larger",
                       "Your program grows with the number of directions: a Python loop over "
                       "the basis. One vmap of jvp (or of vjp's pullback) over the whole basis "
                       "is one program, whatever its size.")
    if not sizes:
        return Finding(where, "a vmap over a basis", "no vmap",
                       "Build the jacobian from jax.vmap: of jvp over the input basis (columns) "
                       "or of vjp's pullback over the output basis (rows).")
    if sizes != [min(n, m)]:
        return Finding(where, f"a vmap over the {min(n, m)} directions of the smaller side",
                       f"vmaps over {sizes}", _mode_hint(case, sizes))
    most = exp["count"] + slack(exp["count"])
    if count > most:
        return Finding(where, f"at most {most} equations (JAX's own program has {exp['count']})",
                       f"{count} equations",
                       "Your program does more than one batched pass: compute f's jvp (or vjp) "
                       "once, under one vmap over the basis, and nothing else.")
    return None


# A delegating answer, which the judge must send to a human (tests/lessons/test_contract.py): a
# real threat: it earns full marks where nothing reads it.
DELEGATING = Delegating("""\
import jax
def vmap_jacobian(f, x):
    tall = x.shape[0] < jax.eval_shape(f, x).shape[0]
    return (jax.jacfwd if tall else jax.jacrev)(f)(x)
""")

VMAP_JACOBIAN = Exercise(
    "l4_vmap_jacobian", 3, ("vmap_jacobian",), observe.jacobian, cases, expect, compare,
    name="check_vmap_jacobian",
    failure_hint="vmap_jacobian(f, x) should return the (m, n) jacobian of f at x.",
    # JAX's own jacobians (and the helpers inside them) are the thing to build. Strict: an answer
    # built from vjp, jvp and vmap makes JAX run none of them, so any call while it is observed
    # (through a wrapper of JAX's that calls jax.jacfwd by name, as jax.experimental.sparse's
    # does) is the answer's.
    delegation=Delegation(examples=(DELEGATING,),
                          names=("jacfwd", "jacrev", "jacobian", "hessian", "_std_basis",
                                 "_jacfwd_unravel", "_jacrev_unravel"),
                          calls=("jax._src.api:jacfwd", "jax._src.api:jacrev",
                                 "jax._src.api:jacobian", "jax._src.api:hessian"),
                          strict=True))
check_vmap_jacobian = VMAP_JACOBIAN.checker()

__all__ = ["VMAP_JACOBIAN", "check_vmap_jacobian"]
