"""Exercise 3: ``floored_cummax(x, floor)``, a ``custom_vmap`` function around the kit's
``running_max`` kernel (which vmap cannot batch), with a rule that calls the kernel once on the
whole batch: for every pattern of batched arguments, and under a vmap of the vmap."""
from __future__ import annotations

import numpy as np

from ...core.jaxprs import Eqn, computed_by, fed_by_inputs, primitives
from ...exercise import Delegating, Delegation, Exercise, describe, fresh_cases
from ...feedback import Finding
from ...wire import Failure, pack, unpack
from .kit import kernels, observe

VISIBLE = (
    {"n": 5, "B": 3, "batched": (True, True), "x_axis": 0, "outer": None, "_seed": 1},
    {"n": 4, "B": 3, "batched": (False, True), "x_axis": 0, "outer": None, "_seed": 2},
    {"n": 6, "B": 2, "batched": (True, False), "x_axis": 1, "outer": None, "_seed": 3},
    {"n": 3, "B": 4, "batched": (True, True), "x_axis": 0, "outer": 2, "_seed": 4},
)
PATTERNS = ((True, True), (False, True), (True, False))
LOOPS = ("scan", "while")


def _case(rng, batched=None, outer: bool | None = None) -> dict:
    n, size, lead = (int(v) for v in rng.choice(np.arange(2, 8), size=3, replace=False))
    batched = PATTERNS[int(rng.integers(len(PATTERNS)))] if batched is None else batched
    outer = bool(rng.random() < 0.5) if outer is None else outer
    x_axis = int(rng.integers(-2, 2)) if batched[0] else 0      # an unbatched x has no batch axis
    return {"n": n, "B": size, "batched": batched, "x_axis": x_axis,
            "outer": lead if outer else None, "_seed": int(rng.integers(2**31))}


def cases(rng, hidden: bool) -> list[dict]:
    if not hidden:
        return [dict(c) for c in VISIBLE]
    # Every draw holds each argument unbatched once, and a vmap of the vmap.
    fixed = [dict(batched=(False, True)), dict(batched=(True, False)),
             dict(batched=(True, True), outer=True), {}]
    return fresh_cases(lambda i: _case(rng, **fixed[i]), VISIBLE, len(fixed))


def _one(x, floor):
    return kernels.REFERENCES["running_max"](np.asarray(x), np.asarray(floor))


def expect(case) -> dict:
    """Each example's running maximum, by the kernel's own numpy, stacked as vmap stacks."""
    x, floor = observe.floor_inputs(case)
    bx, bf = case["batched"]
    rng = np.random.default_rng(case["_seed"] + 1)
    one_x, one_floor = rng.standard_normal(case["n"]).astype(np.float32), np.float32(0.25)

    def inner(x, floor):
        xs = np.moveaxis(x, case["x_axis"], 0) if bx else np.broadcast_to(x, (case["B"],) + x.shape)
        fs = floor if bf else np.broadcast_to(floor, (case["B"],))
        return np.stack([_one(a, b) for a, b in zip(xs, fs)])

    out = (np.stack([inner(a, b) for a, b in zip(x, floor)]) if case["outer"] else inner(x, floor))
    return {"single": pack(_one(one_x, one_floor)), "out": pack(out.astype(np.float32))}


def _close(a, b) -> bool:
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=1e-5, atol=1e-6))


def _pattern(case) -> str:
    bx, bf = case["batched"]
    return (f"x {'batched' if bx else 'unbatched'}, floor {'batched' if bf else 'unbatched'}"
            + (f", inside a vmap over {case['outer']}" if case["outer"] else ""))


def compare(case, exp, got) -> Finding | None:
    where = describe(case)
    if not got["custom_vmap"]:
        return Finding(where, "a jax.custom_batching.custom_vmap function", "an ordinary function",
                       "vmap cannot batch running_max: wrap floored_cummax in "
                       "jax.custom_batching.custom_vmap and give it a rule with def_vmap.")
    mine = unpack(got["single"])
    if not _close(mine, unpack(exp["single"])):
        return Finding(where, "running_max(x, floor) for one example", f"shape {mine.shape}",
                       "Unbatched, floored_cummax(x, floor) is running_max(x, floor).")
    want, mine = unpack(exp["out"]), unpack(got["out"])
    if not _close(mine, want):
        hint = (f"{_pattern(case)}: the rule gets each batched argument with its batch axis "
                f"FIRST (custom_vmap moves it there) and each unbatched one as it is; the kernel "
                f"needs both with the batch, so an unbatched argument must be broadcast to "
                f"axis_size, and the result is batched: {want.shape}.")
        return Finding(where, f"shape {want.shape}", f"shape {mine.shape}"
                       + (" (values differ)" if mine.shape == want.shape else ""), hint)
    prims = primitives([Eqn.from_plain(e) for e in got["eqns"]])
    loops = [p for p in prims if p in LOOPS]
    if loops:
        return Finding(where, "one kernel call on the whole batch", f"a {loops[0]} loop",
                       "Your batched program loops over the examples (lax.map, scan or a "
                       "sequential_vmap): the kernel takes any leading axes, so one call on the "
                       "whole batch does it.")
    calls = prims.count("running_max")
    if calls != 1:
        return Finding(where, "exactly one running_max in the batched program", f"{calls}",
                       "The kernel must do the work, once, on the whole batch: call it (through "
                       "floored_cummax itself) once in the rule, not once per example"
                       if calls else "The kernel must do the work: floored_cummax is "
                       "running_max(x, floor), and its rule calls it on the batch.")
    if not computed_by(got["flow"], "running_max"):
        # red team, round 14: the kernel called once for show, the result computed beside it
        return Finding(where, "the batched result computed by the running_max call",
                       "a result computed beside it (the kernel's own result unused)",
                       "Your rule calls the kernel but returns something else: return what "
                       "floored_cummax gives on the batch (moved or reshaped at most), so that "
                       "the kernel does the work.")
    if not fed_by_inputs(got["flow"], "running_max"):
        # red team, round 15: the answer computed by lax.cummax, then passed through the kernel
        # (on a running maximum it changes nothing), so the kernel's output was "the result"
        return Finding(where, "the kernel given the examples themselves (moved or broadcast)",
                       "the kernel given values computed before it",
                       "Your rule computes the answer before the kernel and hands the kernel "
                       "that: give running_max x and floor as they come (broadcast where "
                       "unbatched), and let it do the work.")
    return None


def failure_hint(case, failure: Failure) -> str:
    text = failure.error
    if "Batching rule for 'running_max'" in text:
        return (f"{_pattern(case)}: a vmap reached running_max itself. With a vmap around the "
                f"vmap, the outer one batches your rule's own code: call floored_cummax (the "
                f"custom_vmap function) in the rule, and the outer vmap uses your rule too.")
    if "running_max takes" in text:
        return (f"{_pattern(case)}: the kernel does not broadcast; floor must have x's leading "
                f"shape. Broadcast an unbatched argument to the batch (axis_size in front).")
    if "custom vmap rule" in text or "do not match" in text:
        return ("Your rule must return (out, out_batched), with out_batched a bool for the one "
                "output: True whenever out carries the batch.")
    return ("floored_cummax(x, floor) is running_max(x, floor), with a custom_vmap rule that "
            "returns (the batched result, True).")


# A delegating answer, which the judge must send to a human (tests/lessons/test_contract.py): a
# real threat: it earns full marks where nothing reads it.
DELEGATING = Delegating("""\
import jax, jax.numpy as jnp
exec("floored_cummax = jax.custom_batching.custom_vmap(lambda x, floor: L4.running_max(x, floor))\\n"
     "floored_cummax.def_vmap(lambda n, b, x, f: (floored_cummax(x if b[0] else jnp.broadcast_to("
     "x, (n,) + x.shape), f if b[1] else jnp.broadcast_to(f, (n,) + f.shape)), True))\\n")
""")

FLOORED_CUMMAX = Exercise("l4_floored_cummax", 3, ("floored_cummax",), observe.floored_cummax,
                          cases, expect, compare, name="check_floored_cummax",
                          failure_hint=failure_hint,
                          # a loop over the examples is what the rule replaces
                          delegation=Delegation(examples=(DELEGATING,),
                          names=("sequential_vmap",)))
check_floored_cummax = FLOORED_CUMMAX.checker()

__all__ = ["FLOORED_CUMMAX", "check_floored_cummax"]
