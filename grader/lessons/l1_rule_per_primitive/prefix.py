"""Exercise 4, ``prefix_rule``: a collective of the student's own, in the table whose rules get
``axis_data`` and are called even when no input is mapped.

``prefix_p.bind(x, axis_name=n)`` gives member k of the vmap named n the sum of x over members
0..k. Its rule runs at every vmap level the bind passes through: only the level that owns the name
(``axis_data.name == axis_name``) computes the prefix, the others bind it again and keep their
batch dim. A value that level does not map (a constant the function closes over, an argument
with in_axes None) still gets a mapped result, whose batch axis the rule makes itself, of
``axis_data.size``. psum's rule is the nearest JAX has and gives the wrong numbers everywhere.
"""
from __future__ import annotations

import numpy as np

from ...exercise import Delegating, Delegation, Exercise, fresh_cases
from . import draw
from .kit import observe

NAMES = ("i", "j")

# (flat?, closed?, the named level (0 outermost), the named level maps x?, the other level maps x?)
KINDS = (
    (True, False, 0, True, None),
    (True, True, 0, None, None),
    (False, False, 0, True, True),
    (False, False, 1, True, True),
    (False, True, 0, None, None),
    (False, False, 1, False, True),
    (False, False, 0, False, True),
    (False, False, None, None, None),
)


def _level(rng, name, size, maps, shape):
    a = draw.axis(rng, len(shape) + 1) if maps else None
    return {"name": name, "in_axes": a, "size": size}


def _case(rng, kind) -> dict:
    flat, closed, named, named_maps, other_maps = kind
    depth = 1 if flat else 2
    names = [str(n) for n in rng.permutation(NAMES)][:depth]
    named = int(rng.integers(0, depth)) if named is None else named
    sizes = [int(s) for s in rng.choice(range(3, 7), size=depth, replace=False)]
    example = draw.shape(rng, int(rng.integers(0, 3)), low=2, high=2 + depth)
    maps = [bool(rng.random() < 0.7) if m is None else m
            for m in ((named_maps, other_maps) if named == 0 else (other_maps, named_maps))][:depth]
    if closed:
        maps = [True] * depth                     # the argument is mapped; the constant is not
    levels, shape = [None] * depth, tuple(example)
    for k in reversed(range(depth)):              # innermost first: build outwards
        levels[k] = _level(rng, names[k], sizes[k], maps[k], shape)
        if maps[k]:
            shape = draw.insert(shape, levels[k]["in_axes"], sizes[k])
    return {"name": names[named], "levels": tuple(levels), "example": tuple(example),
            "shapes": (tuple(shape),), "closed": closed, "_seed": int(rng.integers(0, 2 ** 31))}


def _visible(name, levels, example, closed=False, seed=0):
    shape = tuple(example)
    for level in reversed(levels):
        if level[1] is not None:
            shape = draw.insert(shape, level[1], level[2])
    levels = tuple({"name": n, "in_axes": a, "size": s} for n, a, s in levels)
    return {"name": name, "levels": levels,
            "example": tuple(example), "shapes": (shape,), "closed": closed, "_seed": seed}


VISIBLE = (
    _visible("i", [("i", 0, 4)], (3,)),
    _visible("i", [("i", 1, 3)], (2, 5), seed=1),
    _visible("i", [("i", 0, 4)], (3,), closed=True, seed=2),
    _visible("i", [("i", 0, 3), ("j", 0, 2)], (2,), seed=3),
)


def cases(rng, hidden: bool) -> list[dict]:
    visible = [dict(c) for c in VISIBLE]
    if not hidden:
        return visible
    return fresh_cases(lambda i: _case(rng, KINDS[i % len(KINDS)]), visible, len(KINDS))


# ---- the expectation: members laid out explicitly, outermost level first ------------------------

def canonical(x, case) -> np.ndarray:
    """``x`` as an array of shape (size of each level, outermost first, *example): what each
    member of each level holds (a level that does not map x holds the same x everywhere)."""
    for k, level in enumerate(case["levels"]):
        rest = x.ndim - k                         # the axes below the levels already in front
        if level["in_axes"] is None:
            x = np.repeat(np.expand_dims(x, k), level["size"], axis=k)
        else:
            x = np.moveaxis(x, k + level["in_axes"] % rest, k)
    return x


def expect(case) -> dict:
    x = canonical(observe.inputs(case)[0], case)
    k = [level["name"] for level in case["levels"]].index(case["name"])
    if case["closed"]:
        c = np.broadcast_to(observe.constant(case), x.shape)
        out = x + np.cumsum(c, axis=k)
    else:
        out = np.cumsum(x, axis=k)
    out = out.astype(np.float32)
    return {"shape": tuple(int(d) for d in out.shape), "values": out.ravel().tolist()}


# ---- feedback: which known mistake gives the answer's numbers ----------------------------------

def _named(case) -> int:
    return [level["name"] for level in case["levels"]].index(case["name"])


def _collective(case, reduce) -> np.ndarray:
    """The case's result with the collective replaced by ``reduce(value laid out, named axis)``."""
    x = canonical(observe.inputs(case)[0], case)
    if case["closed"]:
        return x + reduce(np.broadcast_to(observe.constant(case), x.shape), _named(case))
    return reduce(x, _named(case))


def _mistakes(case) -> dict:
    """The numbers each known mistake gives on this case (a shape no mistake gives: none)."""
    depth = len(case["levels"])
    found = {
        "a total": _collective(case, lambda v, k: np.broadcast_to(v.sum(axis=k, keepdims=True),
                                                                  v.shape)),
        # the first level a bind meets is the innermost: a rule that owns every axis stops there
        "every level": _collective(case, lambda v, k: np.cumsum(v, axis=depth - 1)),
    }
    unmapped = case["closed"] or case["levels"][_named(case)]["in_axes"] is None
    if unmapped:
        found["unmapped as is"] = _collective(case, lambda v, k: v)
        found["unmapped times size"] = _collective(
            case, lambda v, k: v * case["levels"][k]["size"])
    return found


MISTAKES = {
    "a total": "your rule gives every member the total over the axis, as psum's rule does; "
               "prefix gives member k the sum over members 0..k only, so its result stays mapped.",
    "every level": "your rule ran the prefix at a vmap level that is not the collective's: the "
                   "rule is called by every level the value passes through, and only the level "
                   "whose axis_data.name is the primitive's axis_name owns the prefix; another "
                   "level binds the primitive again, for the level that owns it, and keeps its "
                   "batch dim.",
    "unmapped as is": "the value reaching the rule is not mapped at the collective's level "
                      "(dims == (None,)), and your rule handed it back unmapped; yet member k "
                      "still gets the sum over members 0..k of that same value, different for "
                      "each member, so the result is mapped: the rule makes that batch axis "
                      "itself, and only axis_data knows its size.",
    "unmapped times size": "for a value the collective's level does not map you multiplied by "
                           "axis_data.size: that is psum of an unmapped value; prefix gives member "
                           "k only the sum over members 0..k, different for each member.",
}


def _hint(case, got) -> str:
    mine = np.asarray(got["values"], dtype=np.float32)
    for kind, numbers in _mistakes(case).items():
        if tuple(numbers.shape) == tuple(got["shape"]) and np.allclose(
                numbers.ravel(), mine, rtol=1e-5, atol=1e-5):
            return MISTAKES[kind]
    return ("your result is not each member's prefix over the axis named "
            f"{case['name']!r}. Check each level your rule sees on its own: whose axis it is "
            "(axis_data.name), whether the value is mapped there (dims), and where the batch "
            "axis of what you return is.")


def compare(case, expected, got):
    if tuple(got["shape"]) == tuple(expected["shape"]) and np.allclose(
            got["values"], expected["values"], rtol=1e-5, atol=1e-5):
        return None
    return draw.finding(case, f"shape {tuple(expected['shape'])} with each member's prefix",
                        f"shape {tuple(got['shape'])}" + (" (values differ)" if tuple(
                            got["shape"]) == tuple(expected["shape"]) else ""), _hint(case, got))


def failure_hint(case, failure) -> str:
    err = failure.error
    if "unbound axis name" in err:
        return ("prefix_p reached a place no vmap named its axis: your rule bound the primitive "
                "again at the level that owns its axis (axis_data.name == axis_name). There is "
                "nobody further out to compute it: that level computes the prefix itself, with "
                "jax.numpy.")
    if "unexpected keyword" in err or ("missing" in err and "required" in err):
        return ("a rule in this table is called as rule(prim, axis_data, vals, dims, **params); "
                "the primitive's axis_name arrives as a keyword argument.")
    if failure.kind == "NotImplementedError":
        return "your rule raised NotImplementedError: it is not written yet."
    return ("run your rule by hand (L1.install_collective, then jax.vmap with an axis_name) and "
            "read the error.")


# JAX's collectives' rules are the nearest thing to borrow (and give other numbers anyway).
# A delegating answer, which the judge must send to a human (tests/lessons/test_contract.py): JAX's
# collective rule does not batch prefix right: this one shows that the reading catches the act.
DELEGATING = Delegating("""\
from jax._src.lax import parallel as _parallel
def prefix_rule(prim, axis_data, vals, dims, *, axis_name):
    return _parallel._batched_reduction_collective(prim, prim, None, axis_data, vals, dims,
                                                   axes=(axis_name,), axis_index_groups=None)
""", works=False)

PREFIX = Exercise("prefix_rule", 4, ("prefix_rule",), observe.collective, cases, expect, compare,
                  failure_hint=failure_hint,
                  delegation=Delegation(examples=(DELEGATING,),
                          names=("_batched_reduction_collective", "_psum_batcher",
                                               "fancy_primitive_batchers")))
check_prefix_rule = PREFIX.checker()

__all__ = ["PREFIX", "check_prefix_rule"]
