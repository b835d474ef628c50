"""Exercise 2, ``moments_rule``: a primitive with two outputs of different ranks and an ``axis``
parameter that counts the axes of one example.

Bound on the batched operand, the axis must be renumbered around the batch axis; then each output
has its own batch dim: the mean loses the reduced axis (so its batch moves down when that axis
came before it), the centred value keeps every axis. A copy of JAX's reduction rule gets the
second wrong, an elementwise rule gets both wrong.
"""
from __future__ import annotations

from dataclasses import replace

from ...exercise import Delegating, Exercise, fresh_cases
from . import draw
from . import rule_cases as R
from .kit import observe


def _case(rng, nested: bool, before: bool | None) -> dict | None:
    """``before``: the reduced axis comes before the batch axis (True), at or after it (False)."""
    rank = int(rng.integers(1, 4))
    base = draw.shape(rng, rank)
    axis = int(rng.integers(0, rank))
    d = draw.axis(rng, rank + 1)
    if before is not None and (axis < d % (rank + 1)) != before:
        return None
    size, outer_size = R.sizes(rng)
    outer = R.outer_axes(rng, R.stacked([base], (d,), size), False) if nested else None
    return {"prim": "moments", "shapes": R.stacked([base], (d,), size, outer, outer_size),
            "in_axes": (d,), "outer_axes": outer, "params": (("axis", axis),),
            "_seed": int(rng.integers(0, 2 ** 31))}


VISIBLE = (
    R.visible("moments", ((6, 3, 5),), (0,), (("axis", 0),)),
    R.visible("moments", ((3, 7, 5),), (1,), (("axis", 1),), seed=1),
    R.visible("moments", ((2, 3, 8),), (-1,), (("axis", 0),), seed=2),
)


def cases(rng, hidden: bool) -> list[dict]:
    visible = [dict(c) for c in VISIBLE]
    if not hidden:
        return visible
    # Two flat cases with the reduced axis before the batch, two at or after it, two nested.
    kinds = [True, True, False, False, None, None, True, False]
    return fresh_cases(lambda i: _case(rng, nested=i >= 6, before=kinds[i % len(kinds)]),
                       visible, 8)


def _batch_at(case, eqn) -> int | None:
    size = R.batch_size(case)
    at = [k for k, s in enumerate(eqn.in_shapes[0]) if s == size]
    return at[0] if len(at) == 1 else None


def _axis_hint(case, got) -> str | None:
    """The axis the rule bound, against where the example's axis sits in the bound operand."""
    (eqn,), bound = R.mine(case, got), got.get("bound") or [{}]
    p, asked, mine = _batch_at(case, eqn), dict(case["params"])["axis"], bound[0].get("axis")
    if p is None or mine is None:
        return None
    right = asked if asked < p else asked + 1
    if mine == right:
        return None
    if mine == asked:
        return (f"you bound moments with axis={mine}, the example's axis as given, on an operand "
                f"of shape {eqn.in_shapes[0]} whose batch axis is at {p}: there the example's "
                f"axes {'at or after' if asked >= p else 'before'} the batch axis "
                f"{'are shifted by one' if asked >= p else 'keep their numbers'}, and the axis "
                f"you bound is {'the batch axis' if mine == p else 'another of the example axes'}.")
    return (f"you bound moments with axis={mine} on an operand of shape {eqn.in_shapes[0]} whose "
            f"batch axis is at {p}: that is not the example's axis {asked} as it sits in that "
            f"operand. Count the example's axes around the batch axis.")


def _dims_hint(case, got) -> str | None:
    """Which output's batch dim does not name the batch axis of what the rule returned."""
    calls = got.get("calls") or []
    if not calls:
        return None
    call = calls[0]
    if not call.get("lists") or len(call["out_dims"]) != 2:
        return ("moments has two outputs: return both, with one batch dim each: "
                "([mean, centred], [mean_dim, centred_dim]).")
    size = R.batch_size(case)
    for k, (name, shape, dim) in enumerate(zip(("mean", "centred"), call["out_shapes"],
                                               call["out_dims"])):
        at = [j for j, s in enumerate(shape or ()) if s == size]
        if len(at) == 1 and dim != at[0]:
            why = ("it lost the reduced axis, so count what is left in front of the batch" if k == 0
                   else "it keeps every axis of the operand you bound")
            return (f"output {k} ({name}) has shape {shape} with the batch (size {size}) at axis "
                    f"{at[0]}, and you gave its batch dim as {dim}: {why}.")
    return None


def compare(case, expected, got):
    outs, want = got["outs"], expected["outs"]
    flat = case["outer_axes"] is None
    if len(outs) != 2:
        return draw.finding(case, "two outputs", f"{len(outs)}",
                            "moments_p has two outputs, [mean, centred]; the batched call must "
                            "give both.")
    if all(R.close(g, w) for g, w in zip(outs, want)):
        if not flat:
            return None
        hint = R.structure_hint(case, got)
        if hint:
            return draw.finding(case, "one moments equation", "another program", hint)
        moved = R.moves_before(case, got)
        if moved:
            return draw.finding(
                case, "no transpose before the moments equation", str(moved[0]),
                f"your rule moved the batch axis ({moved[0]}) before binding. moments takes "
                f"the axis it reduces as a parameter, so the batch can stay where it arrives, "
                f"as JAX's own reduction rules leave it: renumber the axis instead, and work out "
                f"where each output's batch ends up.")
        return None
    hint = None
    if flat and len(R.mine(case, got)) == 1:
        hint = _axis_hint(case, got) or _dims_hint(case, got)
    k = next(k for k, (g, w) in enumerate(zip(outs, want)) if not R.close(g, w))
    hint = hint or (f"output {k} differs from a loop over examples. Under an outer vmap your rule "
                    f"runs once per level: check it on a flat batch first (L1.install, then "
                    f"jax.vmap) with the batch axis before and after the reduced axis.")
    return draw.finding(case, f"output {k}: shape {tuple(want[k]['shape'])} with the loop's "
                              f"values", f"shape {tuple(outs[k]['shape'])}", hint)


def failure_hint(case, failure) -> str:
    err = failure.error
    if "zip" in err or "not iterable" in err or "unpack" in err or "must support iteration" in err:
        return ("moments has two outputs (multiple_results): a rule returns a list of outputs and "
                "a list of their batch dims, ([mean, centred], [mean_dim, centred_dim]).")
    if "is not a non-negative axis" in err:
        return ("the axis you passed to moments_p.bind is not an axis of the operand you bound: "
                "the batched operand has one more axis than an example.")
    return R.failure_hint(case, failure)


# A delegating answer, which the judge must send to a human (tests/lessons/test_contract.py): JAX
# has no rule that batches moments right: this one shows that the reading catches the act.
DELEGATING = Delegating(R.JAX_RULE + "moments_rule = _jax_rule(_b.reducer_batcher)\n", works=False)

MOMENTS = Exercise("moments_rule", 3, ("moments_rule",), observe.rule, cases, R.expect, compare,
                   failure_hint=failure_hint, delegation=replace(R.DELEGATION, examples=(DELEGATING,)))
check_moments_rule = MOMENTS.checker()

__all__ = ["MOMENTS", "check_moments_rule"]
