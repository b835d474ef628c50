"""Exercise 1, the spy: each argument's batch dim at every vmap level active inside f.

A level maps an argument when the argument's tracer at that level belongs to that level's trace
(``BatchTrace.to_batch_info`` compares the tracer's trace tag with its own); a level that does
not map it gets None, even though an outer level's tracer arrives there. The expectation follows
from the case alone: a level that maps an argument holds it at that level's in_axes entry,
counted in the value that level is handed (what the levels outside it left of the argument).
The tests check it against what JAX's tracers report.
"""
from __future__ import annotations

import jax

from ...core import _jax
from ...exercise import Delegating, Delegation, Exercise, fresh_cases
from . import draw
from .kit import observe


def _levels_axes(case) -> list[tuple]:
    """Each level's in_axes, innermost (the spy's own) first."""
    return [tuple(case["in_axes"])] + [tuple(a) for a in reversed(case["outer_axes"])]


def expect(case) -> list[list]:
    """Per argument, per level (innermost first): the batch dim there, or None."""
    levels = _levels_axes(case)
    report = []
    for i, shape in enumerate(case["shapes"]):
        rank, row = len(shape), [None] * len(levels)
        for k in reversed(range(len(levels))):        # outermost first: each takes its axis out
            axis = levels[k][i]
            if axis is not None:
                row[k] = axis % rank
                rank -= 1
        report.append(row)
    return report


def run_nest(walk, case) -> list[list]:
    """What ``walk`` reports for each argument inside the case's nest (trusted code only)."""
    report = []

    def body(*xs):
        def inner(*ys):
            report[:] = [walk(y) for y in ys]
            return 0.0
        jax.vmap(inner, in_axes=case["in_axes"])(*xs)
        return 0.0

    observe.nest(body, case["outer_axes"])(*observe.zeros(case["shapes"]))
    return [list(r) for r in report]


# ---- cases ---------------------------------------------------------------------------------------

def _case(rng, patterns, sizes) -> dict:
    """A case from per-argument patterns: for each argument, mapped (True) or not at each level,
    innermost (the spy's own) first. Every level maps at least one argument."""
    depth = len(sizes)
    shapes, axes = [], [[None] * len(patterns) for _ in range(depth)]
    for i, pattern in enumerate(patterns):
        shape = draw.shape(rng, int(rng.integers(0, 3)))
        for level in range(depth):                      # innermost first: build outwards
            if pattern[level]:
                a = draw.axis(rng, len(shape) + 1)
                axes[level][i] = a
                shape = draw.insert(shape, a, sizes[level])
        shapes.append(shape)
    return {"shapes": tuple(shapes), "in_axes": tuple(axes[0]),
            "outer_axes": tuple(tuple(a) for a in reversed(axes[1:]))}


# Patterns a reading of tracers alone gets wrong (mapped or not at each level, innermost first):
# an argument the spy's own vmap leaves alone that an outer one maps (it arrives as the outer
# tracer), and, three levels deep, a level in between that does not map it.
TRAPS = {2: [(False, True)], 3: [(False, False, True), (True, False, True)]}


def _draw(rng, depth: int):
    sizes = [int(s) for s in rng.choice(range(6, 10), size=depth, replace=False)]
    traps = TRAPS[depth]
    patterns = [traps[int(rng.integers(0, len(traps)))]]
    for _ in range(int(rng.integers(1, 3))):
        patterns.append(tuple(bool(rng.random() < 0.6) for _ in range(depth)))
    order = rng.permutation(len(patterns))
    patterns = [patterns[int(k)] for k in order]
    if not all(any(p[level] for p in patterns) for level in range(depth)):
        return None                                     # a level mapping nothing needs axis_size
    return _case(rng, patterns, sizes)


VISIBLE = (
    {"shapes": ((3, 7, 5), (5,)), "in_axes": (1, None), "outer_axes": ()},
    {"shapes": ((2, 3, 4), (4, 6)), "in_axes": (-1, 0), "outer_axes": ()},
    {"shapes": ((6, 4, 3), (6, 5)), "in_axes": (-1, None), "outer_axes": ((0, 0),)},
    {"shapes": ((4, 7, 3), (3, 7)), "in_axes": (0, None), "outer_axes": ((1, -1),)},
)


def cases(rng, hidden: bool) -> list[dict]:
    if not hidden:
        return [dict(c) for c in VISIBLE]
    # Every hidden case runs inside other vmaps: three at depth 2, five at depth 3.
    return fresh_cases(lambda i: _draw(rng, 2 if i < 3 else 3), VISIBLE, 8)


# ---- feedback ------------------------------------------------------------------------------------

def _peeled(x):
    """The mistake of peeling tracers without asking whose they are: one entry per tracer."""
    dims = []
    while _jax.is_batch_tracer(x):
        dims.append(int(x.batch_dim))
        x = x.val
    return dims


def _level_name(k: int, depth: int) -> str:
    if k == 0:
        return "level 0 (your own vmap)"
    return f"level {k} ({'the outermost' if k == depth - 1 else 'the next'} vmap out)"


def _hint(case, i, exp, got) -> str:
    """What went wrong for argument ``i``, from what a known mistake would have reported."""
    arg = f"argument {i} (shape {case['shapes'][i]})"
    depth = len(exp)
    if not isinstance(got, list) or len(got) != depth:
        n = len(got) if isinstance(got, list) else "no list"
        if got == run_nest(_peeled, case)[i] and got != exp[:1]:
            return (f"{arg}: you listed one entry per BatchTracer you could peel off it ({n}), "
                    f"while {depth} vmaps are active where f runs: a level that does not map the "
                    f"argument has no tracer of its own there, and still gets an entry.")
        if n == 1 and got == exp[:1]:
            return (f"{arg}: you reported your own vmap's level only, while {depth} vmaps are "
                    f"active where f runs (yours and {depth - 1} around it): so its list needs "
                    f"{depth} entries, innermost first, one per level, mapped there or not.")
        return (f"{arg}: here {depth} vmaps are active where f runs (yours and "
                f"{depth - 1} around it), so its list needs {depth} entries, innermost first; "
                f"you gave {n}.")
    if got == exp[::-1]:
        return (f"{arg}: you listed the levels outermost first; list them from your own vmap "
                f"outwards, following each trace's parent_trace.")
    k = next(k for k, (e, g) in enumerate(zip(exp, got)) if e != g)
    where = _level_name(k, depth)
    if exp[k] is None:
        return (f"{arg} is not mapped at {where}: the tracer that reaches that level belongs to "
                f"an outer vmap's trace (its tag is not that level's), so that level has no batch "
                f"dim for it; you reported {got[k]}. Ask whose tracer it is before peeling it.")
    if got[k] is None:
        return (f"{arg} is mapped at {where}, and you reported None: at that level the value is "
                f"a tracer of that level's own trace; read its batch_dim, then go one level down "
                f"through .val.")
    axes = case["in_axes"] if k == 0 else case["outer_axes"][depth - 1 - k]
    if axes[i] is not None and got[k] == axes[i] and axes[i] < 0:
        return (f"{arg}: at {where} you reported {got[k]}, the in_axes entry as written; JAX "
                f"normalises a negative in_axes, so the tracer's batch_dim is non-negative. Read "
                f"the tracer's batch_dim rather than copying in_axes.")
    return (f"{arg}: at {where} its tracer's batch_dim is not {got[k]}; read the batch_dim of "
            f"the tracer that belongs to that level (one .val down per level that maps it).")


def compare(case, expected, got):
    expected = [list(r) for r in expected]
    if not isinstance(got, list) or len(got) != len(expected):
        n = len(got) if isinstance(got, list) else "something else"
        return draw.finding(case, expected, got,
                            f"report one list per argument, in argument order: {len(expected)} "
                            f"here, you returned {n}.")
    for i, (exp, g) in enumerate(zip(expected, got)):
        if g != exp:
            return draw.finding(case, expected, got, _hint(case, i, exp, g))
    return None


def failure_hint(case, failure) -> str:
    if failure.stage == "ran":
        return ("your spy must run jax.vmap(f, in_axes=in_axes)(*args) and look at what f "
                "receives; it never ran f under a vmap of its own.")
    if failure.stage == "report":
        return "return a list with one list of batch dims (ints or None) per argument."
    if failure.kind == "AttributeError":
        return ("a value at some level is not a BatchTracer of that level (it has no .val or "
                ".batch_dim there, or it belongs to another trace): ask whose tracer it is "
                "before reading it.")
    return "run your spy on the examples above and read the error."


# The course's own walk (levels above, core.observe) would be the answer: answers may not import
# the course's package at all (grader.judge.delegation), and the judge's child does not hold it.
# A delegating answer, which the judge must send to a human (tests/lessons/test_contract.py): the
# course computes the spy's answer from the case, never from tracers, so there is nothing of its
# own to borrow: this one shows that the reading catches the import.
DELEGATING = Delegating("""\
from grader.lessons.l1_rule_per_primitive.spy import expect
def spy(f, in_axes, *args):
    return expect({"in_axes": in_axes, "outer_axes": []})
""", works=False)

SPY = Exercise("spy", 3, ("spy",), observe.spy, cases, expect, compare, failure_hint=failure_hint,
                delegation=Delegation(examples=(DELEGATING,)))
check_spy = SPY.checker()

__all__ = ["SPY", "check_spy"]
