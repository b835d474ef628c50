"""Exercise 1: ``per_example_grads(loss, params, batch, axes)``: every example's gradient, with
no Python loop, the parameters unmapped, the data mapped where ``axes`` says."""
from __future__ import annotations

import jax
import numpy as np

from ...core.jaxprs import Eqn
from ...exercise import Delegating, Delegation, Exercise, describe, fresh_cases
from ...feedback import Finding
from ...wire import Failure, pack, unpack
from .kit import models, observe

VISIBLE = (
    {"model": "linear", "d": 4, "k": 3, "B": 5, "axes": {"x": 0, "y": 0, "weight": 0},
     "_seed": 1},
    {"model": "two_layer", "d": 3, "k": 2, "B": 6, "axes": {"x": 1, "y": 0, "temperature": None},
     "_seed": 2},
)


def _axis(rng, rank: int, shared: bool):
    """A batch axis for a data entry of ``rank`` (stacked rank ``rank + 1``), or None."""
    if shared:
        return None
    return int(rng.integers(-(rank + 1), rank + 1))


def _case(rng, want_shared: bool, want_moved: bool) -> dict | None:
    model = str(rng.choice(list(models.LOSSES)))
    d, k, size = (int(v) for v in rng.choice(np.arange(2, 10), size=3, replace=False))
    shapes = models.data_shapes(model, d, k)
    shared = str(rng.choice(list(shapes))) if want_shared else None
    axes = {n: _axis(rng, len(s), n == shared) for n, s in shapes.items()}
    moved = any(a % (len(shapes[n]) + 1) != 0 for n, a in axes.items() if a is not None)
    if want_moved and not moved:
        return None                           # asked for a batch axis off the front: draw again
    return {"model": model, "d": d, "k": k, "B": size, "axes": axes,
            "_seed": int(rng.integers(2**31))}


def cases(rng, hidden: bool) -> list[dict]:
    if not hidden:
        return [dict(c) for c in VISIBLE]
    # Every draw asks for a shared entry and for a batch axis that is not the leading one: the
    # lesson's in_axes=(None, 0, 0) is right for neither.
    wants = [(True, False), (False, True), (True, True), (False, False)]
    return fresh_cases(lambda i: _case(rng, *wants[i]), VISIBLE, len(wants))


def expect(case) -> dict:
    """Each example's gradient by a loop of jax.grad, stacked with the batch first."""
    params, batch = models.draw(case)
    grad = jax.jit(jax.grad(models.LOSSES[case["model"]]))      # compiled once, run per example
    per = [grad(params, models.example(batch, case["axes"], i)) for i in range(case["B"])]
    return {n: pack(np.stack([np.asarray(g[n]) for g in per])) for n in params}


def _close(a, b) -> bool:
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=1e-4, atol=1e-5))


def _values_hint(case, name, want, mine) -> str:
    size = case["B"]
    if mine.shape == want.shape[1:]:
        return (f"{name} has one example's shape {mine.shape}: that is a gradient of the whole "
                f"batch's loss. Each example's gradient is asked for, stacked: {want.shape}.")
    if sorted(mine.shape) == sorted(want.shape):
        return (f"{name} has shape {mine.shape}: the batch of {size} goes first, {want.shape} "
                f"(out_axes=0, vmap's default).")
    if mine.shape == want.shape:
        moved = {n: a for n, a in case["axes"].items() if a is not None and a != 0}
        shared = [n for n, a in case["axes"].items() if a is None]
        return ("the values differ from a loop of jax.grad over the examples. In this case "
                + (f"{', '.join(f'{n} is batched along axis {a}' for n, a in moved.items())}"
                   if moved else "every entry is batched along axis 0")
                + (f" and {', '.join(shared)} is shared by every example" if shared else "")
                + ": vmap must map each entry where axes says (in_axes for the batch dict).")
    return f"{name} should have shape {want.shape} (the batch first, then the parameter's shape)."


def compare(case, exp, got) -> Finding | None:
    where = describe(case)
    names, mine_names = sorted(exp), sorted(got["grads"])
    if names != mine_names:
        return Finding(where, f"a dict with params' keys {names}", f"keys {mine_names}",
                       "Return the gradient with the structure of params (jax.grad of the loss "
                       "with respect to params gives it), with a batch axis in front.")
    for name in names:
        want, mine = unpack(exp[name]), unpack(got["grads"][name])
        if not _close(mine, want):
            return Finding(where, f"{name}: each example's gradient, shape {want.shape}",
                           f"shape {mine.shape}" + (" (values differ)" if mine.shape == want.shape
                                                    else ""), _values_hint(case, name, want, mine))
    eqns = [Eqn.from_plain(e) for e in got["eqns"]]
    count = observe.counted(eqns)
    if got["grown"] != count:
        return Finding(where, "a program that does not grow with the batch",
                       f"{count} equations for B={case['B']}, {got['grown']} for a longer batch",
                       "Your program grows with the number of examples: a Python loop (or a "
                       "comprehension) over them. Let vmap batch the gradient of one example.")
    if case["B"] not in got["batch_sizes"]:
        return Finding(where, f"a vmap over the {case['B']} examples",
                       f"vmap mapped {got['batch_sizes'] or 'nothing'}",
                       "No vmap batched your gradient over the examples: write the gradient of "
                       "ONE example's loss (jax.grad) and map it over the batch with jax.vmap.")
    if got["params_mapped"]:
        return Finding(where, "params unmapped (in_axes None)", "params mapped by your vmap",
                       "Your vmap maps the parameters: a copy of them per example. They are "
                       "shared by every example: give them in_axes=None, and only the data is "
                       "mapped (the gradient still comes out per example).")
    return None


def failure_hint(case, failure: Failure) -> str:
    shared = [n for n, a in case["axes"].items() if a is None]
    moved = {n: a for n, a in case["axes"].items() if a not in (None, 0)}
    text = failure.error
    if "vmap" in text and ("axis" in text or "size" in text or "rank" in text):
        return ("vmap refused your axes. Here axes is " + str(case["axes"])
                + (f": {', '.join(shared)} is shared (None, not mapped)" if shared else "")
                + (f"; {', '.join(f'{n} is batched along {a}' for n, a in moved.items())}"
                   if moved else "")
                + ". The batch dict's in_axes can be that dict itself, and params get None.")
    return ("per_example_grads(loss, params, batch, axes) should return the gradient of "
            "loss(params, example) with respect to params for every example, batch first.")


# A delegating answer, which the judge must send to a human (tests/lessons/test_contract.py): a
# real threat: it earns full marks where nothing reads it.
DELEGATING = Delegating("""\
import jax
exec("def per_example_grads(loss, params, batch, axes):\\n"
     "    return jax.vmap(jax.grad(loss), in_axes=(None, axes))(params, batch)\\n")
""")

PER_EXAMPLE = Exercise("l4_per_example_grads", 3, ("per_example_grads",),
                       observe.per_example_grads, cases, expect, compare,
                       name="check_per_example_grads", failure_hint=failure_hint,
                       delegation=Delegation(examples=(DELEGATING,)))
check_per_example_grads = PER_EXAMPLE.checker()

__all__ = ["PER_EXAMPLE", "check_per_example_grads"]
