"""Lesson 1's observers: run a student's object on one case and return what happened, as plain
data. They know no answer (the trusted side compares); a student's error propagates, labelled
with its stage, and becomes the check's one failure type (`grader.wire.Failure`)."""
from __future__ import annotations

import jax
import numpy as np

from ....core import _jax, jaxprs
from ....wire import stage
from .primitives import install, install_collective, make_primitives, uninstall

# ---- the spy -------------------------------------------------------------------------------------

def zeros(shapes) -> list:
    # device_put, not jnp.asarray: some releases' asarray compiles a copy for every new shape.
    return [jax.device_put(np.zeros(s, np.float32)) for s in shapes]


def vmap_depth() -> int:
    """How many vmaps are active where this is called: BatchTraces from the current trace out."""
    depth, trace = 0, _jax.current_trace()
    while isinstance(trace, _jax.BatchTrace):
        depth, trace = depth + 1, trace.parent_trace
    return depth


def nest(body, outer_axes):
    """``body`` under the outer vmaps of a case, listed outermost first."""
    for axes in reversed(list(outer_axes)):
        body = jax.vmap(body, in_axes=axes)
    return body


def report_rows(report) -> list[list]:
    """A spy's report as ``[[batch dim or None, ...] per argument]`` of plain ints."""
    with stage("report"):
        return [[None if d is None else int(d) for d in row] for row in report]


def spy(spy_fn, case):
    """Call the student's spy inside the case's outer vmaps (none, one or two). The function it
    is handed notes how many vmaps were active when it ran: a spy must run its own."""
    depths = []

    def f(*xs):
        depths.append(vmap_depth())
        return 0.0                      # the result is irrelevant: nothing to compile

    box = []

    def body(*xs):
        box.append(spy_fn(f, case["in_axes"], *xs))
        return 0.0

    nest(body, case["outer_axes"])(*zeros(case["shapes"]))
    if len(case["outer_axes"]) + 1 not in depths:
        with stage("ran"):
            raise RuntimeError("the spy never ran f under a vmap of its own")
    return report_rows(box[-1])


# ---- batching rules ------------------------------------------------------------------------------

def inputs(case) -> list[np.ndarray]:
    """The stacked arguments of a rule case: small integers, exact in float32."""
    rng = np.random.default_rng(case["_seed"])
    return [rng.integers(-4, 5, size=s).astype(np.float32) for s in case["shapes"]]


def _shape(x):
    shape = getattr(x, "shape", None)
    return None if shape is None else tuple(int(d) for d in shape)


def _dim(d):
    """A batch dim as plain data: an int, None, or the name of whatever type the rule gave."""
    if d is None or isinstance(d, (int, np.integer)) and not isinstance(d, bool):
        return None if d is None else int(d)
    return type(d).__name__


def _outs(result):
    """``(outs, out_dims)`` of what a rule returned, as lists (one entry per output), or None."""
    if not (isinstance(result, (tuple, list)) and len(result) == 2):
        return None
    out, dim = result
    if isinstance(out, (tuple, list)):
        dims = list(dim) if isinstance(dim, (tuple, list)) else [dim]
        return list(out), dims
    return [out], [dim]


def _call_record(axis_data, dims, vals, result) -> dict:
    """What one call of the rule was given and gave back, as plain data (never raises)."""
    got = _outs(result)
    outs, out_dims = got if got is not None else ([], [])
    record = {"dims": [_dim(d) for d in dims], "in_shapes": [_shape(v) for v in vals],
              "out_shapes": [_shape(o) for o in outs], "out_dims": [_dim(d) for d in out_dims],
              "lists": isinstance(result, (tuple, list)) and len(result) == 2
              and isinstance(result[0], (tuple, list))}
    if axis_data is not None:
        record["axis"] = (str(axis_data.name), int(axis_data.size))
    return record


def recording(rule_fn, calls: list, collective: bool = False):
    """``rule_fn`` as it is, noting each call's dims and shapes in ``calls``: where a result is
    wrong, the trusted side can say which axis of what the rule returned went astray."""
    if collective:
        def rule(prim, axis_data, vals, dims, **params):
            result = rule_fn(prim, axis_data, vals, dims, **params)
            calls.append(_call_record(axis_data, dims, vals, result))
            return result
    else:
        def rule(prim, vals, dims, **params):
            result = rule_fn(prim, vals, dims, **params)
            calls.append(_call_record(None, dims, vals, result))
            return result
    return rule


def batched(prim, case):
    """``prim`` under the case's vmap (and the outer one, for nested cases)."""
    params = dict(case["params"])
    fn = jax.vmap(lambda *xs: prim.bind(*xs, **params), in_axes=case["in_axes"])
    if case["outer_axes"] is not None:
        fn = jax.vmap(fn, in_axes=case["outer_axes"])
    return fn


def _leaves(out) -> list[np.ndarray]:
    return [np.asarray(o, dtype=np.float32) for o in jax.tree_util.tree_leaves(out)]


def rule(rule_fn, case) -> dict:
    """Install ``rule_fn`` on a fresh primitive, run the batched call, and record its jaxpr and
    what each call of the rule was given and returned."""
    prim = getattr(make_primitives(), case["prim"] + "_p")
    calls: list[dict] = []
    install(prim, recording(rule_fn, calls))
    try:
        fn, args = batched(prim, case), [jax.device_put(a) for a in inputs(case)]
        with stage("batched call"):
            outs = _leaves(fn(*args))
            seen = list(calls)       # the batched call's own rule calls, not make_jaxpr's again
            closed = jax.make_jaxpr(fn)(*args)
            eqns = jaxprs.summarize(closed, recursive=True)
    finally:
        uninstall(prim)
    return {"outs": [{"shape": tuple(int(d) for d in o.shape), "values": o.ravel().tolist()}
                     for o in outs],
            "eqns": [e.to_plain() for e in eqns], "calls": seen,
            "bound": bound_params(closed, prim), "flow": jaxprs.flow(closed)}


def bound_params(closed, prim) -> list[dict]:
    """The scalar parameters of each equation of ``prim``: what the rule passed to bind."""
    return [{str(k): (v.item() if isinstance(v, np.generic) else v) for k, v in e.params.items()
             if isinstance(v, (bool, int, float, str, np.integer, np.floating))}
            for e in _jax.open_jaxpr(closed).eqns if e.primitive is prim]


# ---- the collective ------------------------------------------------------------------------------

def constant(case) -> np.ndarray:
    """The array a "closed" case's function closes over: in no vmap's in_axes at all."""
    rng = np.random.default_rng(case["_seed"] + 1)
    return rng.integers(1, 5, size=case["example"]).astype(np.float32)


def collective_fn(prim, case):
    """The case's function of x, under its named vmaps (listed outermost first)."""
    name = case["name"]
    if case["closed"]:
        c = jax.device_put(constant(case))
        fn = lambda x: x + prim.bind(c, axis_name=name)  # noqa: E731  (c reaches bind unmapped)
    else:
        fn = lambda x: prim.bind(x, axis_name=name)      # noqa: E731
    for level in reversed(case["levels"]):
        fn = jax.vmap(fn, in_axes=level["in_axes"], axis_name=level["name"],
                      axis_size=level["size"])
    return fn


def collective(rule_fn, case) -> dict:
    """Install ``rule_fn`` as a fresh prefix_p's rule and run the case's named vmaps."""
    prim = make_primitives().prefix_p
    calls: list[dict] = []
    install_collective(prim, recording(rule_fn, calls, collective=True))
    try:
        x = jax.device_put(inputs(case)[0])
        with stage("batched call"):
            (out,) = _leaves(collective_fn(prim, case)(x))
    finally:
        uninstall(prim)
    return {"shape": tuple(int(d) for d in out.shape), "values": out.ravel().tolist(),
            "calls": calls}
