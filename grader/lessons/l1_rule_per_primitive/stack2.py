"""Exercise 3, ``stack2_rule``: a binary primitive that broadcasts nothing, with an ``axis``
parameter naming where it inserts a new axis.

An unmapped operand must be widened to the full batch (a size-1 axis breaks the contract): the
size-1 trick is broadcast_batcher's, for primitives that broadcast. The batch stays where the
operands agree: the rule moves no operand whose batch axis is already where the other's is, and
widens an unmapped one at that same place; the inserted axis is renumbered around the batch axis
and the output's batch dim follows from where the new axis went. JAX's concatenate rule (everything
to the front) is a correct rule, and moves what need not move.
"""
from __future__ import annotations

from dataclasses import replace

from ...exercise import Delegating, Exercise, fresh_cases
from . import draw
from . import rule_cases as R
from .kit import observe

# One hidden case of each kind, every one with the batch off the front: there a rule that moves
# everything to the front (JAX's concatenate rule, transcribed) moves what need not move, so each
# draw shows it. Scalar examples and a batch at the front come in the unconstrained cases.
KINDS = ("x unmapped", "y unmapped", "agree", "disagree")


def _case(rng, nested: bool, kind: str | None) -> dict | None:
    rank = int(rng.integers(0, 3))
    base = draw.shape(rng, rank)
    axis = int(rng.integers(0, rank + 1))
    ax = [draw.axis(rng, rank + 1), draw.axis(rng, rank + 1)]
    if kind in ("x unmapped", "y unmapped"):
        ax[KINDS.index(kind)] = None
        if rank == 0 or max(a for a in ax if a is not None) % (rank + 1) == 0:
            return None                     # the batch at the front: nothing to keep in place
    elif kind == "agree":
        ax[1] = ax[0] % (rank + 1) - (rank + 1) * int(rng.random() < 0.5)
        if rank == 0 or ax[0] % (rank + 1) == 0:
            return None
    elif kind == "disagree" and (rank == 0 or ax[0] % (rank + 1) == ax[1] % (rank + 1)
                                 or 0 in (ax[0] % (rank + 1), ax[1] % (rank + 1))):
        return None                         # one at the front: moving both to it moves only one
    elif kind is None and rng.random() < 0.3:
        ax[int(rng.integers(0, 2))] = None
    size, outer_size = R.sizes(rng)
    shapes = R.stacked([base, base], ax, size)
    outer = R.outer_axes(rng, shapes, True) if nested else None
    return {"prim": "stack2", "shapes": R.stacked([base, base], ax, size, outer, outer_size),
            "in_axes": tuple(ax), "outer_axes": outer, "params": (("axis", axis),),
            "_seed": int(rng.integers(0, 2 ** 31))}


VISIBLE = (
    R.visible("stack2", ((6, 3), (6, 3)), (0, 0), (("axis", 0),)),
    R.visible("stack2", ((3, 7), (3,)), (1, None), (("axis", 1),), seed=1),
    R.visible("stack2", ((2, 4, 7), (2, 4, 7)), (2, -1), (("axis", 1),), seed=2),
    R.visible("stack2", ((4, 2), (4, 6, 2)), (None, 1), (("axis", 2),), seed=3),
    R.visible("stack2", ((6, 4), (4, 6)), (0, 1), (("axis", 0),), seed=4),
)


def cases(rng, hidden: bool) -> list[dict]:
    visible = [dict(c) for c in VISIBLE]
    if not hidden:
        return visible
    kinds = [*KINDS, None, None, None, None]
    return fresh_cases(lambda i: _case(rng, nested=i >= 6, kind=kinds[i % len(kinds)]),
                       visible, 8)


def _kind(case) -> str:
    d = R.dims(case)
    if None in d:
        return KINDS[d.index(None)]
    return "agree" if d[0] == d[1] else "disagree"


def _moves_hint(case, moved) -> str | None:
    kind = _kind(case)
    if not moved or (kind == "disagree" and len(moved) == 1):
        return None
    d = [x for x in R.dims(case) if x is not None]
    if kind == "disagree":
        return (f"your rule moved both operands ({len(moved)} transposes before stack2); their "
                f"batch axes disagree, so one move brings one to the other's place, and the "
                f"other can stay.")
    why = ("one operand is unmapped, so the mapped one's batch axis (at "
           f"{d[0]}) can stay where it is and the unmapped one be widened at that place"
           if kind != "agree" else
           f"both operands arrive with their batch axis at {d[0]}, so neither needs to move")
    return (f"your rule moved a batch axis ({moved[0]}) before binding: {why}. Renumber the "
            f"new axis around the batch axis instead, as a rule that keeps agreeing batch axes "
            f"in place does.")


def _dims_hint(case, got) -> str | None:
    calls = got.get("calls") or []
    if not calls or not calls[0]["out_shapes"]:
        return None
    call, size = calls[0], R.batch_size(case)
    (shape,), (dim,) = call["out_shapes"], call["out_dims"] or [None]
    at = [j for j, s in enumerate(shape or ()) if s == size]
    if len(at) == 1 and dim != at[0]:
        return (f"the value your rule returned has shape {shape}, with the batch (size {size}) at "
                f"axis {at[0]}, and you gave its batch dim as {dim}: where the new axis of 2 went "
                f"decides whether the batch moved up by one.")
    axis = dict(case["params"])["axis"]
    return (f"your result has the right size but not the loop's values: check the axis you "
            f"bound. One example's new axis goes at {axis} of the example's result; in the "
            f"batched operands the example's axes at or after the batch axis are shifted by one.")


def compare(case, expected, got):
    (want,), outs = expected["outs"], got["outs"]
    flat = case["outer_axes"] is None
    if len(outs) == 1 and R.close(outs[0], want):
        if not flat:
            return None
        hint = R.structure_hint(case, got) or _moves_hint(case, R.moves_before(case, got))
        return draw.finding(case, "one stack2 equation, no needless move",
                            [str(e) for e in R.mine(case, got)] + [str(e) for e in R.moves_before(
                                case, got)], hint) if hint else None
    hint = _dims_hint(case, got) if flat and len(R.mine(case, got)) == 1 else None
    shape = tuple(outs[0]["shape"]) if outs else None
    return draw.finding(case, f"shape {tuple(want['shape'])} with the loop's values",
                        f"shape {shape}", hint or (
                            "your result differs from a loop over examples. Under an outer vmap "
                            "your rule runs once per level: check it on a flat batch first "
                            "(L1.install, then jax.vmap), with each operand unmapped in turn."))


def failure_hint(case, failure) -> str:
    err = failure.error
    if "stack2 needs two operands of the same shape" in err:
        d = R.dims(case) if case["outer_axes"] is None else None
        if d and None in d:
            i = d.index(None)
            return (f"operand {i} is unmapped here (dims[{i}] is None) and reached stack2 with a "
                    f"shape the other operand does not have: stack2 broadcasts nothing, not even "
                    f"an axis of size 1, so the size-1 trick of broadcasting rules does not apply. "
                    f"It has to arrive with the batch at its full size.")
        return ("the two operands reached stack2 with different shapes: stack2 broadcasts "
                "nothing, so both must carry the batch, at full size and at the same axis.")
    if "is not a non-negative axis" in err:
        return ("the axis you passed to stack2_p.bind is not a place for a new axis in the "
                "operands you bound (0 up to their rank): they have one more axis than an example.")
    return R.failure_hint(case, failure)


# A delegating answer, which the judge must send to a human (tests/lessons/test_contract.py): JAX
# has no rule that batches stack2 right: this one shows that the reading catches the act.
DELEGATING = Delegating(R.JAX_RULE + "stack2_rule = _jax_rule(_b.broadcast_batcher)\n", works=False)

STACK2 = Exercise("stack2_rule", 3, ("stack2_rule",), observe.rule, cases, R.expect, compare,
                  failure_hint=failure_hint, delegation=replace(R.DELEGATION, examples=(DELEGATING,)))
check_stack2_rule = STACK2.checker()

__all__ = ["STACK2", "check_stack2_rule"]
