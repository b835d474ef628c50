"""What the two old-style rule exercises (moments, stack2) share: drawing a case, the loop over
examples a batched primitive must reproduce, and reading the batched jaxpr the observer recorded.

A case is plain data: the primitive, the stacked shapes, the inner vmap's ``in_axes``, an outer
vmap's (or None), the primitive's parameters and a seed. Batch sizes (6 to 9) differ from every
per-example dimension (2 to 5), so an axis of the batch size is the batch axis.
"""
from __future__ import annotations

import numpy as np

from ... import core
from ...core.jaxprs import Eqn
from ...exercise import Delegation
from . import draw
from .kit import REFERENCES, observe

# JAX's own rule makers and tables: a rule that hands the work to them has not been written.
DELEGATION = Delegation(
    names=("vectorized_batcher", "broadcast_batcher", "reducer_batcher", "defvectorized",
           "defbroadcasting", "defreducer", "_concatenate_batch_rule", *core.TABLE_NAMES),
    calls=tuple(f"jax._src.interpreters.batching:{n}" for n in
                ("vectorized_batcher", "broadcast_batcher", "reducer_batcher")))


# The helper the rules' delegating answers share: JAX's own rule makers, called in either of
# their signatures (newer releases take axis_data first).
JAX_RULE = """\
import functools
from jax._src.interpreters import batching as _b
def _jax_rule(maker):
    def rule(prim, vals, dims, **params):
        try:
            return maker(prim, vals, dims, **params)
        except TypeError:                     # newer releases take axis_data first
            return maker(prim, None, vals, dims, **params)
    return rule
"""


def visible(prim, shapes, in_axes, params=(), outer=None, seed=0) -> dict:
    return {"prim": prim, "shapes": shapes, "in_axes": in_axes, "outer_axes": outer,
            "params": params, "_seed": seed}


def stacked(base, axes, size, outer=None, outer_size=None):
    """Per-example shapes with the inner batch axis inserted, then the outer one."""
    shapes = [b if a is None else draw.insert(b, a, size) for b, a in zip(base, axes)]
    if outer is not None:
        shapes = [s if o is None else draw.insert(s, o, outer_size) for s, o in zip(shapes, outer)]
    return tuple(shapes)


def outer_axes(rng, shapes, allow_none: bool) -> tuple:
    while True:
        outer = [None if (allow_none and rng.random() < 0.35) else draw.axis(rng, len(s) + 1)
                 for s in shapes]
        if any(o is not None for o in outer):
            return tuple(outer)


def sizes(rng) -> tuple[int, int]:
    inner, outer = (int(s) for s in rng.choice(range(6, 10), size=2, replace=False))
    return inner, outer


def _loop(fn, in_axes):
    """``fn`` mapped over examples with a Python loop: the meaning vmap must reproduce."""
    def looped(*xs):
        size = next(np.shape(x)[a] for x, a in zip(xs, in_axes) if a is not None)
        outs = [fn(*(x if a is None else np.take(x, b, axis=a) for x, a in zip(xs, in_axes)))
                for b in range(size)]
        return [np.stack([o[k] for o in outs], axis=0) for k in range(len(outs[0]))]
    return looped


def as_list(out) -> list:
    return list(out) if isinstance(out, (list, tuple)) else [out]


def expect(case) -> dict:
    """Each output of the primitive, stacked over the examples (outer level first)."""
    params = dict(case["params"])
    fn = _loop(lambda *xs: as_list(REFERENCES[case["prim"]](*xs, **params)), case["in_axes"])
    if case["outer_axes"] is not None:
        fn = _loop(fn, case["outer_axes"])
    return {"outs": [{"shape": tuple(int(d) for d in o.shape), "values": o.ravel().tolist()}
                     for o in fn(*observe.inputs(case))]}


def batch_size(case) -> int:
    """The vmap's axis size in a flat case (an outer vmap's cases are read call by call)."""
    return next(s[a] for s, a in zip(case["shapes"], case["in_axes"]) if a is not None)


def dims(case) -> list:
    """The inner vmap's in_axes as a flat case's rule receives them: non-negative ints, or None."""
    return [None if a is None else a % len(s) for a, s in zip(case["in_axes"], case["shapes"])]


def mine(case, got) -> list[Eqn]:
    """The batched program's equations of the case's primitive."""
    return [e for e in (Eqn.from_plain(p) for p in got["eqns"]) if e.primitive == case["prim"]]


def close(got_out, want_out) -> bool:
    return tuple(got_out["shape"]) == tuple(want_out["shape"]) and bool(
        np.allclose(got_out["values"], want_out["values"], rtol=1e-5, atol=1e-5))


def structure_hint(case, got) -> str | None:
    """Why a flat case's batched program is not one equation of the primitive computing it all."""
    name, eqns = case["prim"], mine(case, got)
    if len(eqns) != 1:
        why = " (a loop over examples?)" if eqns else " (you computed it without binding it?)"
        return (f"the batched program should hold exactly one {name} equation, on the whole "
                f"batch; it holds {len(eqns)}{why}")
    if not core.computed_by(got["flow"], name):
        return (f"the batched program's outputs must come from the {name} equation itself (at "
                f"most moved or reshaped after it): your rule binds {name} but returns something "
                f"computed beside it. Return what prim.bind gives.")
    return None


def failure_hint(case, failure) -> str:
    """Errors every rule exercise shares; each exercise adds its own first."""
    err = failure.error
    meaning = core.error_meaning(err)
    if meaning == "axis out of range":
        return ("an axis number is out of range: the out dim you return must name an axis of the "
                "value you return (count the axes the primitive removed or added).")
    if meaning == "batch dim not an int":
        return "return each output batch dim as a plain Python int (int(...)), or None."
    if failure.kind == "NotImplementedError":
        return "your rule raised NotImplementedError: it is not written yet."
    if "unexpected keyword" in err or ("missing" in err and "required" in err):
        return (f"a rule receives the primitive's parameters as keyword arguments (**params) and "
                f"must pass them on to {case['prim']}_p.bind, changed where the batch requires.")
    if "NoneType" in err and _unmapped_somewhere(case):
        return ("your rule used the batch dim of an unmapped operand as an axis number: an "
                "operand whose dim is None has no batch axis to move, index or count from. "
                "Check each dim for None first: such an operand is broadcast to the batch where "
                "the primitive needs every operand to carry it, and left alone otherwise.")
    return ("run your rule by hand on a batch of your own (L1.install, then jax.vmap) and read "
            "the error.")


def _unmapped_somewhere(case) -> bool:
    """Whether the rule is handed a None dim at some level (under an outer vmap an operand the
    inner one maps may be unmapped at the outer level)."""
    return None in case["in_axes"] or None in (case["outer_axes"] or ())


def moves_before(case, got) -> list[Eqn]:
    """The transposes that really move something (not the identity) before the primitive's first
    equation: what the rule did to its operands before binding. (vmap's own move to out_axes=0
    comes after it.)"""
    eqns = [Eqn.from_plain(p) for p in got["eqns"]]
    first = next((k for k, e in enumerate(eqns) if e.primitive == case["prim"]), len(eqns))
    return [e for e in eqns[:first] if e.primitive == "transpose" and
            tuple(e.param("permutation") or ()) != tuple(range(len(e.in_shapes[0])))]
