"""Exercise 2: ``clipped_scale(w, x)``, a ``jax.custom_vjp`` whose backward rule clips the
cotangent, correct under vmap: its rule is written for one example, and reduces over the axes
``w`` was broadcast along, never over a batch it cannot see."""
from __future__ import annotations

import numpy as np

from ...exercise import Delegating, Delegation, Exercise, describe, fresh_cases
from ...feedback import Finding
from ...wire import Failure, pack, unpack
from .kit import observe

CLIP = 1.0
VISIBLE = (
    {"w_shape": (3, 4), "x_shape": (3, 4), "in_axes": (None, 0), "B": 5, "_seed": 1},
    {"w_shape": (4,), "x_shape": (3, 4), "in_axes": (None, 0), "B": 2, "_seed": 2},
    {"w_shape": (), "x_shape": (2, 3), "in_axes": (0, 0), "B": 4, "_seed": 3},
)


def _axis(rng, rank: int, shared: bool):
    """An in_axes entry for an argument of ``rank`` per example, or None (shared)."""
    return None if shared else int(rng.integers(-(rank + 1), rank + 1))


def _case(rng, x_rank: int | None = None, w_rank: int | None = None,
          w_shared: bool | None = None) -> dict:
    x_rank = int(rng.integers(1, 4)) if x_rank is None else x_rank
    sizes = rng.choice(np.arange(2, 7), size=x_rank + 1, replace=False)
    x_shape, size = tuple(int(d) for d in sizes[:-1]), int(sizes[-1])
    w_rank = int(rng.integers(0, x_rank + 1)) if w_rank is None else w_rank
    w_shared = bool(rng.random() < 0.5) if w_shared is None else w_shared
    x_shared = not w_shared and bool(rng.random() < 0.3)
    return {"w_shape": x_shape[x_rank - w_rank:], "x_shape": x_shape,
            "in_axes": (_axis(rng, w_rank, w_shared), _axis(rng, x_rank, x_shared)), "B": size,
            "_seed": int(rng.integers(2**31))}


def cases(rng, hidden: bool) -> list[dict]:
    if not hidden:
        return [dict(c) for c in VISIBLE]
    # Every draw holds a shared w broadcast over two axes of a rank-3 x (its cotangent is summed
    # by the rule over both, and by vmap over the batch), a w with x's own shape, a scalar w,
    # and whatever else comes.
    fixed = [dict(x_rank=3, w_rank=1, w_shared=True), dict(x_rank=2, w_rank=2), dict(w_rank=0),
             {}, {}]
    return fresh_cases(lambda i: _case(rng, **fixed[i]), VISIBLE, len(fixed))


def _lead(case) -> tuple[int, ...]:
    return tuple(range(len(case["x_shape"]) - len(case["w_shape"])))


def _example(a, axis, i):
    return a if axis is None else np.take(a, i, axis=axis)


def _stack(parts, axis):
    return np.sum(parts, axis=0) if axis is None else np.stack(parts, axis=axis)


def expect(case) -> dict:
    """The forward value and both gradients, per example and of the batched program, by hand."""
    w, x, c = observe.scale_inputs(case)
    (wa, xa), size = case["in_axes"], case["B"]
    ws = [_example(w, wa, i) for i in range(size)]
    xs = [_example(x, xa, i) for i in range(size)]
    gs = [np.clip(c[i], -CLIP, CLIP) for i in range(size)]
    gw = [np.sum(g * xi, axis=_lead(case)) for g, xi in zip(gs, xs)]
    gx = [g * wi for g, wi in zip(gs, ws)]
    f32 = lambda a: np.asarray(a, np.float32)                # noqa: E731
    return {"forward": pack(f32(np.stack([wi * xi for wi, xi in zip(ws, xs)]))),
            "per_example": [pack(f32(np.stack(gw))), pack(f32(np.stack(gx)))],
            "summed": [pack(f32(_stack(gw, wa))), pack(f32(_stack(gx, xa)))]}


def _close(a, b) -> bool:
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=1e-4, atol=1e-4))


def _unclipped(case, which: str, mine) -> bool:
    """Whether ``mine`` is the per-example gradient ``which`` without the clip."""
    w, x, c = observe.scale_inputs(case)
    (wa, xa), size = case["in_axes"], case["B"]
    if which == "w":
        want = [np.sum(c[i] * _example(x, xa, i), axis=_lead(case)) for i in range(size)]
    else:
        want = [c[i] * _example(w, wa, i) for i in range(size)]
    return _close(mine, np.stack(want))


def _gradient_hint(case, which, part, want, mine) -> str:
    if part == "per_example" and _unclipped(case, which, mine):
        return (f"that is the gradient without the clip: your backward rule must clip the "
                f"incoming cotangent g to [-{CLIP}, {CLIP}] before using it.")
    if which == "w" and part == "summed":
        return ("each example's cotangent of w is right, but not their total: w is shared by "
                "the batch here, and vmap sums its per-example cotangents itself "
                "(batch_custom_vjp_bwd); your rule sees ONE example and must not sum over a "
                "batch.")
    if which == "w":
        return (f"w {case['w_shape']} is broadcast against x {case['x_shape']} in one example, "
                f"so its cotangent is clip(g) * x summed over the axes w was broadcast along "
                f"(the transpose of a broadcast is a sum), shape {case['w_shape']}.")
    return f"x's cotangent is clip(g) * w, broadcast to x's shape {case['x_shape']}."


def compare(case, exp, got) -> Finding | None:
    where = describe(case)
    if not got["custom_vjp"]:
        return Finding(where, "a jax.custom_vjp function", "an ordinary function",
                       "Only a custom VJP can change the gradient: decorate clipped_scale with "
                       "jax.custom_vjp and give it fwd and bwd with defvjp.")
    want, mine = unpack(exp["forward"]), unpack(got["forward"])
    if not _close(mine, want):
        return Finding(where, f"w * x per example, shape {want.shape}", f"shape {mine.shape}",
                       "The forward value is w * x (w broadcasting against x), unchanged.")
    for part, label in (("per_example", "vmap of grad"), ("summed", "grad of vmap")):
        for which, want_p, got_p in zip("wx", exp[part], got[part]):
            want, mine = unpack(want_p), unpack(got_p)
            if not _close(mine, want):
                return Finding(where, f"{label}: the cotangent of {which}, shape {want.shape}",
                               f"shape {mine.shape}" + (" (values differ)" if mine.shape ==
                                                        want.shape else ""),
                               _gradient_hint(case, which, part, want, mine))
    return None


def failure_hint(case, failure: Failure) -> str:
    if "bwd" in failure.error or "shape" in failure.error:
        return (f"Your backward rule returned a cotangent of the wrong shape: one per primal "
                f"input, each of that input's shape in ONE example (w {case['w_shape']}, x "
                f"{case['x_shape']}). Sum clip(g) * x over the axes w was broadcast along.")
    return ("clipped_scale(w, x) should return w * x, with a custom_vjp whose bwd returns "
            "(cotangent of w, cotangent of x).")


# A delegating answer, which the judge must send to a human (tests/lessons/test_contract.py): a
# real threat: it earns full marks where nothing reads it.
DELEGATING = Delegating("""\
import jax, jax.numpy as jnp
exec("clipped_scale = jax.custom_vjp(lambda w, x: w * x)\\n"
     "clipped_scale.defvjp(lambda w, x: (w * x, (w, x)), lambda r, g: (jnp.sum(jnp.clip(g, -1, 1)"
     " * r[1], axis=tuple(range(r[1].ndim - r[0].ndim))), jnp.clip(g, -1, 1) * r[0]))\\n")
""")

# JAX's own autodiff inside the backward rule does the reduction over the broadcast axes that the
# exercise asks the rule to do (red team, round 14: ``jax.vjp(lambda a, b: a * b, w, x)[1](clip(g))``
# earned 3/3 unread).
BY_AUTODIFF = Delegating("""\
import jax, jax.numpy as jnp
clipped_scale = jax.custom_vjp(lambda w, x: w * x)
clipped_scale.defvjp(lambda w, x: (w * x, (w, x)),
                     lambda r, g: jax.vjp(lambda a, b: a * b, *r)[1](jnp.clip(g, -1.0, 1.0)))
""")
AUTODIFF = ("vjp", "linear_transpose", "grad", "value_and_grad", "jacrev", "jacfwd", "jacobian",
            "hessian", "backward_pass", "backward_pass3", "UndefinedPrimal",
            "primitive_transposes", "get_primitive_transpose",
            # forward mode does the sum too, over a basis (read-only review, round 16)
            "jvp", "linearize", "JVPTrace")
# Every route JAX has to a transposition runs its backward pass (backward_pass; backward_pass3
# where a release has it; red team, round 15: backward_pass called straight from jax._src, past
# the names). Run from inside the answer's rule, it counts, whatever JAX function led there; an
# honest backward rule transposes nothing. (The transpose table's rules themselves are read by
# name: JAX fetches them without naming the table, so a watch on them could not tell the
# checker's own gradients from an answer's.)
# Forward mode the same way (jvp or linearize over a basis of w's directions, then a dot with the
# clipped cotangent, sums over the broadcast axes without naming them): ad's own jvp and
# linearize, which every public route calls by name, so another exercise's honest jax.jvp (the
# jacobian's) is JAX's call, not an answer's.
TRANSPOSES = ("jax._src.interpreters.ad:backward_pass", "jax._src.interpreters.ad:backward_pass3",
              "jax._src.interpreters.ad:jvp", "jax._src.interpreters.ad:linearize")

CLIPPED_SCALE = Exercise("l4_clipped_scale", 3, ("clipped_scale",), observe.clipped_scale, cases,
                         expect, compare, name="check_clipped_scale", failure_hint=failure_hint,
                         delegation=Delegation(examples=(DELEGATING, BY_AUTODIFF),
                                               names=AUTODIFF, calls=TRANSPOSES, within=True))
check_clipped_scale = CLIPPED_SCALE.checker()

__all__ = ["CLIPPED_SCALE", "check_clipped_scale"]
