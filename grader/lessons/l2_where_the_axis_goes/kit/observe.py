"""Lesson 2's observers: run a student's object on one case and return what happened, as plain
data. They know no answer (the trusted side compares); a student's error propagates, labelled
with its stage, and becomes the check's one failure type (`grader.wire.Failure`)."""
from __future__ import annotations

import copy

import jax
import numpy as np

from ....core import _jax
from ....wire import pack, stage
from .programs import as_function


def normal(rng, shape) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


def stacked_shape(shape, axis, size) -> tuple[int, ...]:
    """A per-example ``shape`` with a batch axis of ``size`` at ``axis`` (None: left alone)."""
    if axis is None:
        return tuple(shape)
    pos = axis % (len(shape) + 1)
    return tuple(shape[:pos]) + (size,) + tuple(shape[pos:])


def stacked_structs(case) -> list:
    """The program's inputs as vmap receives them, shapes only (the batch size is a case's
    ``size``, or its ``_size`` where the answer is not told it)."""
    size = case["size"] if "size" in case else case["_size"]
    return [jax.ShapeDtypeStruct(stacked_shape(shape, case["in_dims"][name], size), np.float32)
            for name, shape in case["program"]["inputs"]]


def _dims(answer) -> dict:
    with stage("answer"):
        return {str(k): (None if v is None else int(v)) for k, v in dict(answer).items()}


def where_it_lands(fn, case) -> dict:
    """The student's prediction for a program; it is handed copies, and nothing is run."""
    return _dims(fn(copy.deepcopy(case["program"]), dict(case["in_dims"])))


# ---- batched programs as plain data --------------------------------------------------------------

def graph(jaxpr) -> dict:
    """A (closed) jaxpr as plain data: ``{"invars": [id], "eqns": [[primitive, [input id],
    [[output id, shape]], sub]], "outvars": [id]}``; a literal input is -1. ``sub`` is the graph of
    a jit's program (its inputs and outputs are the equation's), or None."""
    ids: dict = {}

    def num(v) -> int:
        return -1 if _jax.is_literal(v) else ids.setdefault(id(v), len(ids))

    def build(j, invars=None) -> dict:
        if invars is not None:
            for inner, outer in zip(j.invars, invars):
                ids[id(inner)] = outer
        eqns = []
        for e in j.eqns:
            ins = [num(v) for v in e.invars]
            outs = [[num(v), tuple(int(d) for d in getattr(v.aval, "shape", ()))]
                    for v in e.outvars]
            sub = None
            inner = e.params.get("jaxpr")
            if _jax.primitive_name(e.primitive) == "jit" and _jax.is_jaxpr(inner):
                sub = build(_jax.open_jaxpr(inner), ins)
                for v, (o, _) in zip(_jax.open_jaxpr(inner).outvars, outs):
                    sub.setdefault("links", []).append([num(v), o])
            eqns.append([_jax.primitive_name(e.primitive), ins, outs, sub])
        return {"invars": [num(v) for v in j.invars], "eqns": eqns,
                "outvars": [num(v) for v in j.outvars]}

    j = _jax.open_jaxpr(jaxpr)
    for v in getattr(j, "constvars", ()):
        num(v)
    return build(j)


def batched_program(case):
    """The batched jaxpr of a case's program, with out_axes=0 for every output."""
    program = case["program"]
    fn = jax.vmap(as_function(program),
                  in_axes=tuple(case["in_dims"][name] for name, _ in program["inputs"]))
    return jax.make_jaxpr(fn)(*stacked_structs(case))


def widened(fn, case) -> list:
    """What the student's tool reports on the case's batched program: ``[[equation index,
    [input positions]], ...]``, sorted."""
    program = case["program"]
    in_axes = tuple(case["in_dims"][name] for name, _ in program["inputs"])
    answer = fn(batched_program(case), in_axes, case["size"])
    with stage("answer"):
        return sorted([int(k), sorted(int(i) for i in v)] for k, v in dict(answer).items())


# ---- cheap_where ---------------------------------------------------------------------------------

def where_args(case) -> list[np.ndarray]:
    rng = np.random.default_rng(case["_seed"])
    p_shape, x_shape, y_shape = case["shapes"]
    return [rng.random(p_shape) < 0.5, normal(rng, x_shape), normal(rng, y_shape)]


def cheap_where(fn, case) -> dict:
    """The student's where under the case's vmaps (outermost first): its values and program."""
    g = lambda p, x, y: fn(p, x, y)  # noqa: E731
    for axes in reversed(case["levels"]):
        g = jax.vmap(g, in_axes=tuple(axes))
    args = [jax.device_put(a) for a in where_args(case)]
    with stage("batched call"):
        out = g(*args)
        closed = jax.make_jaxpr(g)(*args)
    return {**pack(np.asarray(out)), "graph": graph(closed)}
