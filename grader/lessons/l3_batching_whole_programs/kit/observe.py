"""Lesson 3's observers: run a student's object on one case and return what happened, as plain
data. They know no answer (the trusted side compares); a student's error propagates, labelled
with its stage, and becomes the check's one failure type (`grader.wire.Failure`)."""
from __future__ import annotations

import copy

import jax
import numpy as np

from ....core import _jax, jaxprs
from ....wire import pack, stage
from .functions import FUNCTIONS


def shown(case) -> dict:
    """The case as the student's function receives it: without the grader's own keys."""
    return copy.deepcopy({k: v for k, v in case.items() if not k.startswith("_")})


def _plain(value):
    """A prediction as plain data: bools, ints, strings, lists and str-keyed dicts of them."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    raise TypeError(f"a prediction holds bools, ints, lists and dicts, not {type(value).__name__}")


def plan(predict, case) -> dict:
    """A prediction function (cond, scan or while plan) called on the case; no JAX runs here."""
    answer = predict(shown(case))
    with stage("answer"):
        return {"answer": _plain(answer)}


# ---- vmap or lax.map under a memory limit ---------------------------------------------------------

def map_inputs(case) -> np.ndarray:
    rng = np.random.default_rng(case["_seed"])
    return rng.standard_normal((case["B"], case["d"])).astype(np.float32)


def array_sizes(jaxpr) -> list[tuple[str, int]]:
    """``(primitive, bytes)`` of every array any equation produces, inner programs included."""
    out = []
    for eqn in _jax.open_jaxpr(jaxpr).eqns:
        for v in eqn.outvars:
            aval = v.aval
            out.append((_jax.primitive_name(eqn.primitive),
                        int(np.prod(aval.shape, dtype=int)) * np.dtype(aval.dtype).itemsize))
        for sub in jaxprs.sub_jaxprs(eqn.params):
            out.extend(array_sizes(sub))
    return out


def run_batched(run_batched_fn, case) -> dict:
    """The student's ``run_batched(f, xs, limit)``: its values, and every array its program
    makes (traced on the same shapes, nothing cached from the run)."""
    f, xs, limit = FUNCTIONS[case["fn"]], jax.device_put(map_inputs(case)), case["limit"]
    out = run_batched_fn(f, xs, limit)
    with stage("trace"):
        jaxpr = jax.make_jaxpr(lambda a: run_batched_fn(f, a, limit))(xs)
    eqns = jaxprs.summarize(jaxpr, recursive=True)
    return {**pack(out), "sizes": array_sizes(jaxpr), "eqns": [e.to_plain() for e in eqns]}
