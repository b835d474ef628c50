"""Exercises 2 and 4: old-style batching rules for softsign, scaled_diff, sumsq and rowmax.

A rule is right when the batched primitive gives what a loop over examples gives, and, where the
exercise asks it, when the batched program holds one equation of the primitive on the whole batch
(read off the jaxpr the observer recorded, here in trusted code).
"""
from __future__ import annotations

import numpy as np

from ... import core
from ...core.jaxprs import Eqn
from ...exercise import Delegation, Exercise, fresh_cases
from . import draw
from . import rule_hints as hints
from .kit import REFERENCES, observe

# JAX's own rule makers and tables: a rule that hands the work to them has not been written.
DELEGATION = Delegation(
    names=("vectorized_batcher", "broadcast_batcher", "reducer_batcher", "defvectorized",
           "defbroadcasting", "defreducer", *core.TABLE_NAMES),
    calls=tuple(f"jax._src.interpreters.batching:{n}" for n in
                ("vectorized_batcher", "broadcast_batcher", "reducer_batcher")))


def _loop(fn, in_axes):
    """``fn`` mapped over examples with a Python loop: the meaning vmap must reproduce."""
    def looped(*xs):
        size = next(np.shape(x)[a] for x, a in zip(xs, in_axes) if a is not None)
        outs = [fn(*(x if a is None else np.take(x, b, axis=a) for x, a in zip(xs, in_axes)))
                for b in range(size)]
        return np.stack(outs, axis=0)
    return looped


def expect(case) -> dict:
    params = dict(case["params"])
    fn = _loop(lambda *xs: REFERENCES[case["prim"]](*xs, **params), case["in_axes"])
    if case["outer_axes"] is not None:
        fn = _loop(fn, case["outer_axes"])
    out = fn(*observe.inputs(case))
    return {"shape": tuple(int(d) for d in out.shape), "values": out.ravel().tolist()}


def _dims(case) -> list:
    """The inner vmap's in_axes as the rule receives them: non-negative ints, or None."""
    return [None if a is None else a % len(shape) for a, shape in zip(case["in_axes"], case["shapes"])]


def failure_hint(case, failure) -> str:
    err, name, dims = failure.error, case["prim"], _dims(case)
    flat = case["outer_axes"] is None
    if "same rank" in err:
        i = dims.index(None) if None in dims else 0
        return (f"operand {i} is unmapped (dims[{i}] is None) and went into scaled_diff with one "
                f"axis fewer than the mapped operand: give it a size-1 axis where the batch is "
                f"(jnp.expand_dims(y, 0) once the mapped operand's batch axis is at the front) and "
                f"let the primitive's broadcasting do the rest.")
    if "incompatible shapes" in err:
        return (f"the operands' batch axes don't line up: they arrive at dims {tuple(dims)}, and "
                f"bound as they are they pair the batch of one with an example axis of the other. "
                f"Move every batch axis to the same place (the front, with jnp.moveaxis) first.")
    if "rowmax takes" in err:
        return ("rowmax only accepts a rank-2 matrix, so binding it on the batched value as it is "
                "(what defvectorized would do) breaks its contract. Move the batch axis next to "
                "the rows, fold it into them with a reshape, bind once, and unfold the result.")
    if "sumsq: axes" in err:
        return ("the axes parameter you passed does not fit the batched operand: it has one more "
                "axis than an example, so axes at or after batch_dim move up by one.")
    meaning = core.error_meaning(err)
    if meaning == "axis out of range":
        return _out_of_range(case, dims) if flat else (
            "an axis number is out of range: the out_dim you return must name an axis of the "
            "value you return (count the axes the primitive removed or added).")
    if meaning == "batch dim not an int":
        return "return the output batch dim as a plain Python int (int(...)), or None."
    if failure.kind == "NotImplementedError":
        return "your rule raised NotImplementedError: it is not written yet."
    if "unexpected keyword" in err or ("missing" in err and "required" in err):
        return (f"a rule receives the primitive's parameters as keyword arguments (**params) and "
                f"must pass them on to {name}_p.bind.")
    return "run your rule on the example in the exercise and read the error."


def _out_of_range(case, dims) -> str:
    """An out_dim outside the result: say where the batch ends up for this case's primitive."""
    d, name = next(x for x in dims if x is not None), case["prim"]
    head = "the out_dim your rule returned is not an axis of the value it returned"
    if name == "sumsq":
        axes = dict(case["params"])["axes"]
        before = [a for a in axes if a < d]
        return (f"{head}: sumsq removes the example's axes {axes}, {len(before)} of them before "
                f"the batch axis (dims[0] = {d}), so the batch ends at axis {d - len(before)} of "
                f"the result. Count the reduced axes before the batch dim.")
    if name == "rowmax":
        return (f"{head}: rowmax removes the columns axis, so its result has one axis fewer than "
                f"its operand; the batch is where your rule put it among the rows.")
    return f"{head}: {name} keeps every axis, so the batch stays at dims[0] = {d} unless you moved it."


def _batch_size(case):
    """The inner vmap's axis size (chosen different from every per-example dimension)."""
    return next(s[a] for s, a in zip(case["shapes"], case["in_axes"]) if a is not None)


def _structure_hint(case, mine: list[Eqn]) -> str | None:
    """Why the batched jaxpr is not the one-equation program the rule should produce."""
    name = case["prim"]
    if len(mine) != 1:
        return (f"the batched program should hold exactly one {name} equation, on the whole "
                f"batch; it holds {len(mine)}" + (" (a loop over examples?)" if mine else
                                                  " (you computed it without binding the primitive?)"))
    eqn, size = mine[0], _batch_size(case)
    if name == "scaled_diff":
        for i, axis in enumerate(case["in_axes"]):
            if axis is None and size in eqn.in_shapes[i]:
                return (f"operand {i} is unmapped but entered {name} with the batch size "
                        f"{size} on an axis (shape {eqn.in_shapes[i]}): you materialised a copy "
                        f"per example. Give it a size-1 axis instead; the primitive broadcasts it.")
    if name == "sumsq":
        axes = eqn.param("axes")
        batch_axes = [i for i, d in enumerate(eqn.in_shapes[0]) if d == size]
        if axes is None or len(axes) != len(dict(case["params"])["axes"]) or \
                any(a in axes for a in batch_axes):
            return (f"{name}'s axes parameter {axes} on operand {eqn.in_shapes[0]} reduces the "
                    f"wrong axes: every axis at or after batch_dim moves up by one.")
    return None


def compare(case, expected, got):
    name, nested = case["prim"], case["outer_axes"] is not None
    eqns = [Eqn.from_plain(e) for e in got["eqns"]]
    mine = [e for e in eqns if e.primitive == name]
    if name == "sumsq" and not nested and len(mine) == 1:
        hint = hints.sumsq_axes(case, _batch_size(case), mine[0])
        if hint:
            return draw.finding(case, f"sumsq on axes {_shifted_axes(case, mine[0])}",
                                f"{mine[0]}", hint)
    # Under an outer vmap the observed result went through two levels: only flat cases are read
    # call by call.
    calls, flat = ([] if nested else got.get("calls", [])), (got, expected)
    if tuple(got["shape"]) != tuple(expected["shape"]):
        hint = hints.misplaced_batch(name, calls, eqns, *flat) or _shape_hint(case, got)
        return draw.finding(case, f"shape {tuple(expected['shape'])}", f"shape {tuple(got['shape'])}",
                            hint)
    if not np.allclose(got["values"], expected["values"], rtol=1e-5, atol=1e-6):
        hint = hints.misplaced_batch(name, calls, eqns, *flat) or hints.wrong_values(
            name, case, got["values"], expected, got.get("bound", []))
        return draw.finding(case, "the values of a loop over examples", "different values", hint)
    if not nested:
        hint = _structure_hint(case, mine)
        if hint:
            return draw.finding(case, f"one {name} equation", [str(e) for e in mine], hint)
        if not core.computed_by(got["flow"], name):
            return draw.finding(
                case, f"the result computed by the {name} equation", "a result computed "
                "another way", f"the batched program's output must come from the {name} equation "
                f"itself (at most moved or reshaped after it): your rule binds {name} but returns "
                f"something else computed beside it. Return what prim.bind gives.")
    return None


def _shifted_axes(case, eqn) -> tuple:
    operand, size = eqn.in_shapes[0], _batch_size(case)
    p = operand.index(size) if size in operand else 0
    return tuple(a + 1 if a >= p else a for a in dict(case["params"])["axes"])


def _shape_hint(case, got) -> str:
    """No recorded call explains the shape: say what differs, in general terms."""
    if case["prim"] == "sumsq" and case["outer_axes"] is None and \
            _batch_size(case) not in got["shape"]:
        return ("your rule reduced the batch axis too: the axes parameter counts the axes of one "
                "example, so every axis at or after batch_dim moves up by one.")
    return ("the result has the wrong shape compared with a loop over examples: does your rule "
            "use the batch dim it is given (dims), rather than assume the batch axis is at the "
            "front?")


def _rule_case(prim, rng, nested, force=None):
    """One case; ``force`` ("unmapped" or "mapped") fixes whether a binary case has a None axis."""
    size, outer_size = int(rng.integers(6, 8)), int(rng.integers(6, 8))
    if prim == "softsign":
        base, params = [draw.shape(rng, int(rng.integers(0, 3)))], ()
    elif prim == "rowmax":
        base, params = [draw.shape(rng, 2)], ()
    elif prim == "sumsq":
        rank = int(rng.integers(1, 4))
        base = [draw.shape(rng, rank)]
        k = int(rng.integers(1, rank + 1))
        params = (("axes", tuple(sorted(int(a) for a in rng.choice(rank, k, replace=False)))),)
    else:  # scaled_diff: same rank, broadcast-compatible per-example shapes
        rank = int(rng.integers(0, 3))
        x = draw.shape(rng, rank)
        y = tuple(1 if rng.random() < 0.25 else d for d in x)
        x = tuple(1 if (yd != 1 and rng.random() < 0.2) else d for d, yd in zip(x, y))
        base = [x, y] if rng.random() < 0.5 else [y, x]
        params = (("scale", float(rng.choice([0.5, 2.0, -1.5, 3.0]))),)
    while True:
        axes = [None if (len(base) > 1 and rng.random() < 0.35) else draw.axis(rng, len(b) + 1)
                for b in base]
        if len(base) > 1 and force == "unmapped":
            axes[int(rng.integers(0, 2))] = None
        if len(base) > 1 and force == "mapped" and None in axes:
            continue
        if any(a is not None for a in axes):
            break
    shapes = [b if a is None else draw.insert(b, a, size) for b, a in zip(base, axes)]
    outer = None
    if nested:
        while True:
            outer = [None if (len(base) > 1 and rng.random() < 0.35) else draw.axis(rng, len(s) + 1)
                     for s in shapes]
            if any(o is not None for o in outer):
                break
        shapes = [s if o is None else draw.insert(s, o, outer_size) for s, o in zip(shapes, outer)]
        outer = tuple(outer)
    return {"prim": prim, "shapes": tuple(shapes), "in_axes": tuple(axes), "outer_axes": outer,
            "params": params, "seed": int(rng.integers(0, 2 ** 31))}


def _visible(prim, shapes, in_axes, params=(), outer=None, seed=0):
    return {"prim": prim, "shapes": shapes, "in_axes": in_axes, "outer_axes": outer,
            "params": params, "seed": seed}


VISIBLE = {
    "softsign": (
        _visible("softsign", ((6, 3),), (0,)),
        _visible("softsign", ((2, 7, 3),), (1,), seed=1),
        _visible("softsign", ((4, 6),), (-1,), seed=2),
    ),
    "scaled_diff": (
        _visible("scaled_diff", ((6, 3), (3,)), (0, None), (("scale", 2.0),)),
        _visible("scaled_diff", ((4,), (4, 7)), (None, -1), (("scale", 0.5),), seed=1),
        _visible("scaled_diff", ((6, 2, 3), (2, 3, 6)), (0, 2), (("scale", -1.5),), seed=2),
        _visible("scaled_diff", ((1, 6, 3), (4, 3)), (1, None), (("scale", 3.0),), seed=3),
    ),
    "sumsq": (
        _visible("sumsq", ((6, 3, 5),), (0,), (("axes", (0,)),)),
        _visible("sumsq", ((3, 7, 5),), (1,), (("axes", (1,)),), seed=1),
        _visible("sumsq", ((2, 3, 4, 6),), (-1,), (("axes", (0, 2)),), seed=2),
    ),
    "rowmax": (
        _visible("rowmax", ((6, 3, 5),), (0,)),
        _visible("rowmax", ((3, 7, 5),), (1,), seed=1),
        _visible("rowmax", ((3, 5, 6),), (-1,), seed=2),
    ),
}


def _cases(prim):
    def cases(rng, hidden: bool) -> list[dict]:
        visible = [dict(c) for c in VISIBLE[prim]]
        if not hidden:
            return visible
        force = {0: "unmapped", 1: "unmapped", 2: "mapped", 3: "mapped"}
        return fresh_cases(lambda i: _rule_case(prim, rng, nested=i >= 7, force=force.get(i)),
                           visible, 10)
    return cases


def _exercise(prim: str, points: float) -> Exercise:
    needs = f"{prim}_rule"
    return Exercise(needs, points, (needs,), observe.rule, _cases(prim), expect, compare,
                    failure_hint=failure_hint, delegation=DELEGATION)


SOFTSIGN = _exercise("softsign", 1)
SCALED_DIFF = _exercise("scaled_diff", 2)
SUMSQ = _exercise("sumsq", 2)
ROWMAX = _exercise("rowmax", 2)
check_softsign_rule = SOFTSIGN.checker()
check_scaled_diff_rule = SCALED_DIFF.checker()
check_sumsq_rule = SUMSQ.checker()
check_rowmax_rule = ROWMAX.checker()

__all__ = ["ROWMAX", "SCALED_DIFF", "SOFTSIGN", "SUMSQ", "check_rowmax_rule",
           "check_scaled_diff_rule", "check_softsign_rule", "check_sumsq_rule"]
