"""Lesson 2's observers: run a student's object on one case and return what happened, as plain
data. They know no answer (the trusted side compares); a student's error propagates, labelled
with its stage, and becomes the check's one failure type (`grader.wire.Failure`)."""
from __future__ import annotations

import contextlib
import copy
import functools
import itertools

import jax
import numpy as np

from ....core import _jax, jaxprs
from ....wire import pack, stage
from .functions import FUNCTIONS


def normal(rng, shape) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


def eqn_data(eqns) -> list[tuple]:
    return [e.to_plain() for e in eqns]


@contextlib.contextmanager
def counting_batched(names: list | None = None):
    """Count the primitives any vmap's BatchTrace processes inside the block; with ``names``, note
    each one's name there, and those of the equations inside it (``x @ w`` is a jit of a
    dot_general: vmap batches the jit, and the dot inside it)."""
    count, original = [0], _jax.BatchTrace.process_primitive

    def counted(self, primitive, *args, **kwargs):
        count[0] += 1
        if names is not None:
            names.append(_jax.primitive_name(primitive))
            params = args[1] if len(args) > 1 else kwargs.get("params", {})
            for sub in jaxprs.sub_jaxprs(params):
                names.extend(e.primitive for e in jaxprs.summarize(sub, recursive=True))
        return original(self, primitive, *args, **kwargs)

    _jax.BatchTrace.process_primitive = counted
    try:
        yield count
    finally:
        _jax.BatchTrace.process_primitive = original


_FRESH = itertools.count(1)


def batched_by_vmap(fn, *args, grow: int = 0) -> tuple[int, list[str]]:
    """How many primitives, and which, a vmap batched while ``fn`` was traced on arguments like
    ``args`` but with argument ``grow``'s first axis longer by a length not used before: a trace
    cache (a jit's, or make_jaxpr's) then has nothing to answer with, so an answer wrapped in
    jit is seen batching as well as one that is not. Only shapes are traced, nothing runs."""
    extra = next(_FRESH)
    like = [jax.ShapeDtypeStruct(((a.shape[0] + extra,) + tuple(a.shape[1:])) if i == grow
                                 else a.shape, a.dtype) for i, a in enumerate(args)]
    names: list[str] = []
    with counting_batched(names) as count:
        jax.eval_shape(lambda *xs: fn(*xs), *like)
    return count[0], names


# ---- my_matchaxis --------------------------------------------------------------------------------

def matchaxis_input(case) -> np.ndarray:
    """The array of a case: distinct, exactly representable values, so any misplacement shows."""
    n = int(np.prod(case["shape"], dtype=int))
    return (np.arange(n, dtype=np.float32) * 0.5 + 1.0).reshape(case["shape"])


def matchaxis(my_matchaxis, case) -> dict:
    # device_put, not jnp.asarray: some releases' asarray compiles a copy for every new shape.
    x = jax.device_put(matchaxis_input(case))
    return pack(my_matchaxis(case["src"], case["dst"], x, case["size"],
                             sum_match=case["sum_match"]))


# ---- choose_axes ---------------------------------------------------------------------------------

def canon(axis, ndim):
    """An axis spec in [0, ndim), or None: the form in which two specs can be compared."""
    if axis is None:
        return None
    return axis + ndim if axis < 0 else axis


def stacked_shape(dims, batch, size) -> tuple[int, ...]:
    """The shape of an argument as the caller holds it: ``dims`` with the batch axis inserted."""
    if batch is None:
        return tuple(dims)
    shape = list(dims)
    shape.insert(canon(batch, len(dims) + 1), size)
    return tuple(shape)


def layout_args(case) -> list[np.ndarray]:
    rng = np.random.default_rng(case["_seed"])
    return [normal(rng, stacked_shape(dims, a["batch"], case["B"]))
            for dims, a in zip(case["dims"], case["layout"]["args"])]


def plain_spec(spec):
    """A student's in_axes/out_axes as ints, None and tuples; ValueError for anything else."""
    if isinstance(spec, (bool, np.bool_)):
        raise ValueError("True/False is not an axis")
    if spec is None:
        return None
    if isinstance(spec, (int, np.integer)):
        return int(spec)
    if isinstance(spec, (tuple, list)):
        return tuple(plain_spec(s) for s in spec)
    raise ValueError(f"{type(spec).__name__} is not an axis spec")


@functools.lru_cache(maxsize=512)
def _batched_layout(fn_name: str, in_axes, out_axes):
    """The vmapped layout function under jit, one per spec: each case compiles one program rather
    than one per primitive, and checking the same answer again compiles nothing."""
    return jax.jit(jax.vmap(FUNCTIONS[fn_name], in_axes=in_axes, out_axes=out_axes))


def choose_axes(choose_axes_fn, case) -> dict:
    answer = choose_axes_fn(copy.deepcopy(case["layout"]))
    with stage("answer"):
        in_axes, out_axes = answer
        in_axes, out_axes = plain_spec(in_axes), plain_spec(out_axes)
    fn = FUNCTIONS[case["layout"]["fn"]]
    args = [jax.device_put(a) for a in layout_args(case)]
    # The functions are the course's, so vmap can only refuse the spec: the failure carries it,
    # and the trusted side names the entry it refused.
    with stage("vmap", detail={"in_axes": in_axes, "out_axes": out_axes}):
        eqns = jaxprs.summarize_fn(jax.vmap(fn, in_axes=in_axes, out_axes=out_axes), *args,
                                   recursive=True)
        outs = _batched_layout(case["layout"]["fn"], in_axes, out_axes)(*args)
    return {"in_axes": in_axes, "out_axes": out_axes,
            "outs": [pack(o) for o in jax.tree_util.tree_leaves(outs)], "eqns": eqn_data(eqns)}


# ---- pairwise and score_batch --------------------------------------------------------------------

def pair_inputs(case):
    rng = np.random.default_rng(case["_seed"])
    return normal(rng, (case["n"], case["d"])), normal(rng, (case["m"], case["d"]))


def pairwise(pairwise_fn, case) -> dict:
    x, y = (jax.device_put(a) for a in pair_inputs(case))
    order = case["order"]
    out = pairwise_fn(x, y, order=order)
    eqns = jaxprs.summarize_fn(lambda a, b: pairwise_fn(a, b, order=order), x, y, recursive=True)
    count, names = batched_by_vmap(lambda a, b: pairwise_fn(a, b, order=order), x, y)
    return {**pack(out), "eqns": eqn_data(eqns), "vmapped": count, "batched": names}


def score_inputs(case):
    rng = np.random.default_rng(case["_seed"])
    w_shape = (case["d"],) if case["k"] is None else (case["d"], case["k"])
    return normal(rng, w_shape), normal(rng, (case["B"], case["d"]))


def score_batch(score_batch_fn, case) -> dict:
    w, xs = (jax.device_put(a) for a in score_inputs(case))
    out = score_batch_fn(w, xs)
    eqns = jaxprs.summarize_fn(lambda a, b: score_batch_fn(a, b), w, xs, recursive=True)
    # No primitive processed by a BatchTrace while tracing means the answer did not batch with
    # vmap at all, however vmap was imported or spelled (and whether or not it was jitted).
    count, names = batched_by_vmap(score_batch_fn, w, xs, grow=1)
    return {**pack(out), "eqns": eqn_data(eqns), "vmapped": count, "batched": names}
