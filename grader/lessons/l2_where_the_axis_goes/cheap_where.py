"""Exercise 3, ``cheap_where(pred, x, y)``: jnp.where's values, and a batched program in which no
unmapped operand is widened to the full batch, at any vmap level.

``select_n``'s batching rule (behind jnp.where and lax.select), unless the operands' batch dims
already agree, broadcasts every unmapped operand (an unmapped scalar predicate aside) to the full
batch; the broadcasting rule gives it a size-1 axis instead. The answer reaches the same
values through primitives that broadcast. Widening is read with the same definition as
``widened`` (`widened.widenings`), through jit programs too, on every level of the case's vmaps.
"""
from __future__ import annotations

import numpy as np

from ...exercise import Delegating, Delegation, Exercise, describe, fresh_cases
from ...feedback import Finding
from ...wire import pack, unpack
from .kit import observe
from .widened import widenings


def _layout(rng, mapped: bool, shape, size):
    """An in_axes entry and the shape it stacks to, for one operand at one level."""
    if not mapped:
        return None, tuple(shape)
    axis = int(rng.integers(-(len(shape) + 1), len(shape) + 1))
    return axis, observe.stacked_shape(shape, axis, size)


# Which of (pred, x, y) each level maps, innermost level first: every case mixes a mapped and
# an unmapped operand somewhere (where jnp.where would widen).
KINDS = (
    ((True, True, False),),
    ((True, False, True),),
    ((False, True, False),),
    ((True, False, False),),
    ((True, True, False), (False, True, True)),
    ((False, True, True), (True, False, True)),
)


def _case(rng, kind) -> dict:
    example = tuple(int(d) for d in rng.choice([2, 3, 4, 5], size=int(rng.integers(1, 3)),
                                               replace=False))
    sizes = [int(s) for s in rng.choice(range(6, 10), size=len(kind), replace=False)]
    shapes, levels = [example] * 3, []
    for maps, size in zip(kind, sizes):             # innermost first: build outwards
        axes = []
        for k in range(3):
            a, shapes[k] = _layout(rng, maps[k], shapes[k], size)
            axes.append(a)
        levels.insert(0, tuple(axes))
    return {"shapes": tuple(shapes), "levels": tuple(levels), "example": example,
            "sizes": tuple(reversed(sizes)), "_seed": int(rng.integers(0, 2 ** 31))}


VISIBLE = (
    {"shapes": ((7, 3), (7, 3), (3,)), "levels": ((0, 0, None),), "example": (3,), "sizes": (7,),
     "_seed": 1},
    {"shapes": ((2, 3), (2, 7, 3), (2, 3)), "levels": ((None, 1, None),), "example": (2, 3),
     "sizes": (7,), "_seed": 2},
    {"shapes": ((6, 4, 7), (4,), (4,)), "levels": ((0, None, None), (-1, None, None)),
     "example": (4,), "sizes": (6, 7), "_seed": 3},
)


def cases(rng, hidden: bool) -> list[dict]:
    visible = [dict(c) for c in VISIBLE]
    if not hidden:
        return visible
    return fresh_cases(lambda i: _case(rng, KINDS[i % len(KINDS)]), visible, len(KINDS))


def canonical(a, case, k) -> np.ndarray:
    """Operand ``k`` laid out as (each level's members, outermost first, *example)."""
    for level, (axes, size) in enumerate(zip(case["levels"], case["sizes"])):
        rest = a.ndim - level
        if axes[k] is None:
            a = np.repeat(np.expand_dims(a, level), size, axis=level)
        else:
            a = np.moveaxis(a, level + axes[k] % rest, level)
    return a


def expect(case) -> dict:
    args = observe.where_args(case)
    p, x, y = (canonical(a, case, k) for k, a in enumerate(args))
    return pack(np.where(p, x, y).astype(np.float32))


def compare(case, expected, got) -> Finding | None:
    where, want = describe(case), unpack(expected)
    mine = unpack(got)
    if mine.shape != want.shape or not np.allclose(mine, want, rtol=1e-5, atol=1e-5):
        same = mine.shape == want.shape
        return Finding(where, f"jnp.where's values, shape {want.shape}",
                       f"shape {mine.shape}" + (" (values differ)" if same else ""),
                       "your where does not give jnp.where's values: where pred is True the "
                       "result is x, elsewhere y" + ("." if same else
                                                     ", with the shape they broadcast to."))
    found = widenings(got["graph"], case["levels"], case["sizes"], recursive=True)
    if found:
        path, level, deps = found[0]
        names = [("pred", "x", "y")[i] for i in deps]
        which = " and ".join(names) or "a constant"
        prim = _primitive(got["graph"], path)
        return Finding(where, "no unmapped operand widened to the full batch",
                       f"{prim} widens {which}",
                       f"{which} {'is' if len(names) <= 1 else 'are'} not mapped by the vmap "
                       f"of size {case['sizes'][level]}, and your program copies "
                       f"{'it' if len(names) <= 1 else 'them'} out to that size ({prim}): that is "
                       f"how select_n's rule meets an unmapped operand. Reach the same values "
                       f"with primitives whose rule gives an unmapped operand a size-1 axis.")
    return None


def _primitive(graph, path) -> str:
    eqns, prim = graph["eqns"], "?"
    for k in path:
        prim, _, _, sub = eqns[k]
        eqns = (sub or {}).get("eqns", [])
    return prim


# A delegating answer, which the judge must send to a human (tests/lessons/test_contract.py): the
# course has nothing of its own to borrow here: this one shows that the reading catches the import.
DELEGATING = Delegating("""\
import grader.lessons.l2_where_the_axis_goes.kit.programs as _course
def cheap_where(pred, x, y):
    p = pred.astype(x.dtype)
    return x * p + y * (1 - p)
""", works=False)

CHEAP_WHERE = Exercise("l2_cheap_where", 3, ("cheap_where",), observe.cheap_where, cases, expect,
                       compare, name="check_cheap_where",
                       failure_hint="cheap_where(pred, x, y) should return an array of x's shape: "
                                    "x where pred is True, y elsewhere.",
                                    delegation=Delegation(examples=(DELEGATING,)))
check_cheap_where = CHEAP_WHERE.checker()

__all__ = ["CHEAP_WHERE", "check_cheap_where"]
