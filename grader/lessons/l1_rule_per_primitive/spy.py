"""Exercise 1, the spy: report what each argument looks like at the spy's own vmap level."""
from __future__ import annotations

from ... import core
from ...exercise import Exercise, fresh_cases
from . import draw
from .kit import observe


def _spy_case(rng, nested, unmapped=False):
    """Shapes and in_axes of 1-3 arguments (with ``unmapped``, at least one of them None); with
    ``nested``, outer axes too, and every argument the inner vmap leaves alone is outer-mapped."""
    n = int(rng.integers(2 if unmapped else 1, 4))
    size, outer_size = int(rng.integers(2, 6)), int(rng.integers(2, 6))
    while True:
        inner = [None if rng.random() < 0.3 else 0 for _ in range(n)]
        if unmapped:
            inner[int(rng.integers(0, n))] = None
        if any(a is not None for a in inner):
            break
    shapes, inner_axes = [], []
    for a in inner:
        base = draw.shape(rng, int(rng.integers(0, 3)))
        level = base
        if a is not None:
            a = draw.axis(rng, len(base) + 1)
            level = draw.insert(base, a, size)
        inner_axes.append(a)
        shapes.append(level)
    outer_axes = None
    if nested:
        # An argument the inner vmap leaves alone is mapped by the outer one: the trap to report.
        outer_axes = [draw.axis(rng, len(s) + 1) if (a is None or rng.random() < 0.8) else None
                      for s, a in zip(shapes, inner_axes)]
        if all(o is None for o in outer_axes):
            outer_axes[0] = 0
        shapes = [s if o is None else draw.insert(s, o, outer_size)
                  for s, o in zip(shapes, outer_axes)]
        outer_axes = tuple(outer_axes)
    return {"shapes": tuple(shapes), "in_axes": tuple(inner_axes), "outer_axes": outer_axes}


VISIBLE = (
    {"shapes": ((3, 7, 5), (5,)), "in_axes": (1, None), "outer_axes": None},
    {"shapes": ((7, 3, 5), (5,)), "in_axes": (0, None), "outer_axes": None},
    {"shapes": ((2, 3, 4), (4, 6)), "in_axes": (-1, 0), "outer_axes": None},
    {"shapes": ((6, 4, 3), (6, 5)), "in_axes": (-1, None), "outer_axes": (0, 0)},
)


def cases(rng, hidden: bool) -> list[dict]:
    if not hidden:
        return [dict(c) for c in VISIBLE]
    # Two cases of each kind are sure to hold an argument the spy's own vmap leaves alone.
    return fresh_cases(lambda i: _spy_case(rng, nested=i >= 6, unmapped=i in (0, 1, 6, 7)),
                       VISIBLE, 10)


def expect(case) -> list[tuple]:
    """What JAX says each argument looked like at the spy's own (innermost) vmap level."""
    layers = None if case["outer_axes"] is None else [case["outer_axes"]]
    _, views = core.observe(observe.watched, case["in_axes"], *observe.zeros(case["shapes"]),
                            layers=layers)
    report = []
    for view, axis in zip(views, case["in_axes"]):
        if axis is None:   # not in this vmap: whatever arrived, concrete or an outer tracer
            report.append((None, view.shape, view.shape))
        else:
            level = view.levels[0]
            report.append((level.batch_dim, level.shape, level.val_shape))
    return report


def _hint(case, i, exp, got) -> str:
    """The first of (batch_dim, seen shape, value shape) the spy got wrong for argument ``i``."""
    axis = case["in_axes"][i]
    nested = case["outer_axes"] is not None
    (ebd, eseen, eval_), (gbd, gseen, gval) = exp, got
    arg = f"argument {i} (in_axes {axis}, shape {case['shapes'][i]})"
    if gbd != ebd:
        if axis is None and nested:
            return (f"{arg} is not in your vmap at all, since its in_axes entry is None: it "
                    f"arrives as it was outside, here a tracer of the OUTER vmap (you reported its "
                    f"batch dim {gbd}). Report (None, shape, shape) for it: the in_axes you were "
                    f"given says which arguments your vmap maps.")
        if axis is not None and gbd == axis:
            return (f"{arg}: you reported batch_dim {gbd}, the in_axes entry as written; JAX "
                    f"normalises a negative in_axes, so the tracer's batch_dim is {ebd}. Read "
                    f"x.batch_dim instead of copying in_axes.")
        if axis is None:
            return (f"{arg} has no batch dim in your vmap: you reported {gbd}; report None for "
                    f"it.")
        return f"{arg}: its tracer's batch_dim is {ebd}, you reported {gbd}; read x.batch_dim."
    if gseen != eseen:
        if gseen == eval_:
            return (f"{arg}: you reported {gseen}, the shape of the value underneath, as the shape "
                    f"the function sees; x.shape hides the batch axis: {eseen}.")
        return f"{arg}: the function sees x.shape, {eseen}; you reported {gseen}."
    if gval != eval_:
        if gval == eseen and axis is not None:
            return (f"{arg}: you reported {gval}, the shape the function sees, as the value's "
                    f"shape; x.shape hides the batch axis, x.val.shape does not: {eval_}.")
        if nested and len(gval) > len(eval_):
            return (f"{arg}: you reported {gval}, more than one level down. Report one level "
                    f"only: x.val is the value one vmap down (in a nested vmap, a tracer of the "
                    f"outer vmap, {eval_}); do not peel further.")
        return f"{arg}: the value underneath is x.val, of shape {eval_}; you reported {gval}."
    return ""


def compare(case, expected, got):
    expected = [tuple(r) for r in expected]
    if len(got) != len(expected):
        return draw.finding(case, expected, got,
                            f"report one tuple per argument, in argument order: {len(expected)} "
                            f"here, you returned {len(got)}.")
    for i, (exp, g) in enumerate(zip(expected, got)):
        if tuple(g) != tuple(exp):
            return draw.finding(case, expected, got, _hint(case, i, exp, g))
    return None


def failure_hint(case, failure) -> str:
    if failure.stage == "ran":
        return ("your spy must run jax.vmap(f, in_axes=in_axes)(*args) and read what f receives; "
                "it never called f under a vmap, so it reports what it worked out, not what it saw.")
    if failure.stage == "report":
        return "return a list with one (batch_dim, shape, value_shape) tuple per argument."
    if failure.kind == "AttributeError":
        unmapped = [i for i, a in enumerate(case["in_axes"]) if a is None]
        which = (f"argument {unmapped[0]} has in_axes None, so it" if unmapped else
                 "an argument with in_axes None")
        return (f"{which} is not a BatchTracer (it has no .val or .batch_dim): it arrives as it "
                f"was, so handle it separately.")
    return "run your spy on the example above and read the error."


# The course's own tracer spy (core.observe) would be the answer: answers may not import the
# course's package at all (grader.judge.delegation), and the judge's child does not hold it.
SPY = Exercise("spy", 3, ("spy",), observe.spy, cases, expect, compare, failure_hint=failure_hint)
check_spy = SPY.checker()

__all__ = ["SPY", "check_spy"]
