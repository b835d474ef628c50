"""Lesson 1's observers: run a student's object on one case and return what happened, as plain
data. They know no answer (the trusted side compares); a student's error propagates, labelled
with its stage, and becomes the check's one failure type (`grader.wire.Failure`)."""
from __future__ import annotations

import jax
import numpy as np

from ....core import _jax, jaxprs
from ....wire import stage
from .primitives import install, make_primitives, uninstall
from .standins import query_prim, standin


# ---- the spy -------------------------------------------------------------------------------------

def watched(*xs):
    """The function the spy watches: its result is irrelevant, so it costs no compilation."""
    del xs
    return 0.0


def zeros(shapes) -> list:
    # device_put, not jnp.asarray: some releases' asarray compiles a copy for every new shape.
    return [jax.device_put(np.zeros(s, np.float32)) for s in shapes]


def report_rows(report) -> list[tuple]:
    """A spy's report as ``[(batch_dim or None, shape, value shape), ...]`` of plain ints."""
    with stage("report"):
        return [(None if bd is None else int(bd), tuple(int(d) for d in seen),
                 tuple(int(d) for d in val)) for bd, seen, val in report]


def spy(spy_fn, case):
    """Call the student's spy directly, or from inside an outer vmap for nested cases. The
    function it is handed notes whether the spy ran it under a vmap at all: a spy that works
    its report out from shapes alone watched nothing."""
    args, ran = zeros(case["shapes"]), []

    def f(*xs):
        ran.append(any(_jax.is_batch_tracer(x) for x in xs))
        return watched(*xs)

    if case["outer_axes"] is None:
        report = spy_fn(f, case["in_axes"], *args)
    else:
        box = []

        def outer_body(*xs):
            box.append(spy_fn(f, case["in_axes"], *xs))
            return 0.0

        jax.vmap(outer_body, in_axes=case["outer_axes"])(*args)
        report = box[-1]
    if not any(ran):
        with stage("ran"):
            raise RuntimeError("the spy never ran f under jax.vmap")
    return report_rows(report)


# ---- batching rules ------------------------------------------------------------------------------

def inputs(case) -> list[np.ndarray]:
    """The stacked arguments of a rule case: small integers, exact in float32."""
    rng = np.random.default_rng(case["seed"])
    return [rng.integers(-4, 5, size=s).astype(np.float32) for s in case["shapes"]]


def batched(prim, case):
    """``prim`` under the case's vmap (and the outer one, for nested cases)."""
    params = dict(case["params"])
    fn = jax.vmap(lambda *xs: prim.bind(*xs, **params), in_axes=case["in_axes"])
    if case["outer_axes"] is not None:
        fn = jax.vmap(fn, in_axes=case["outer_axes"])
    return fn


def _shape(x):
    shape = getattr(x, "shape", None)
    return None if shape is None else tuple(int(d) for d in shape)


def _dim(d):
    """A batch dim as plain data: an int, None, or the name of whatever type the rule gave."""
    if d is None or isinstance(d, (int, np.integer)):
        return None if d is None else int(d)
    return type(d).__name__


def _call_record(dims, vals, result) -> dict:
    """What one call of the rule was given and gave back, as plain data (never raises)."""
    out = out_dim = None
    if isinstance(result, (tuple, list)) and len(result) == 2:
        out, out_dim = result
    return {"dims": [_dim(d) for d in dims], "in_shapes": [_shape(v) for v in vals],
            "out_shape": _shape(out), "out_dim": _dim(out_dim)}


def recording(rule_fn, calls: list):
    """``rule_fn`` as it is, noting each call's dims and shapes in ``calls``: where a result is
    wrong, the trusted side can say which axis of what the rule returned went astray."""
    def rule(prim, vals, dims, **params):
        result = rule_fn(prim, vals, dims, **params)
        calls.append(_call_record(dims, vals, result))
        return result
    return rule


def rule(rule_fn, case) -> dict:
    """Install ``rule_fn`` on a fresh primitive, run the batched call, and record its jaxpr and
    what each call of the rule was given and returned."""
    prim = getattr(make_primitives(), case["prim"] + "_p")
    calls: list[dict] = []
    install(prim, recording(rule_fn, calls))
    try:
        fn, args = batched(prim, case), [jax.device_put(a) for a in inputs(case)]
        with stage("batched call"):
            out = np.asarray(fn(*args), dtype=np.float32)
            seen = list(calls)       # the batched call's own rule calls, not make_jaxpr's again
            closed = jax.make_jaxpr(fn)(*args)
            eqns = jaxprs.summarize(closed, recursive=True)
    finally:
        uninstall(prim)
    return {"shape": tuple(int(d) for d in out.shape), "values": out.ravel().tolist(),
            "eqns": [e.to_plain() for e in eqns], "calls": seen, "bound": bound_params(closed, prim),
            "flow": jaxprs.flow(closed)}


def bound_params(closed, prim) -> list[dict]:
    """The scalar parameters of each equation of ``prim``: what the rule passed to bind."""
    return [{str(k): (v.item() if isinstance(v, np.generic) else v) for k, v in e.params.items()
             if isinstance(v, (bool, int, float, np.integer, np.floating))}
            for e in _jax.open_jaxpr(closed).eqns if e.primitive is prim]


# ---- the rule tables -----------------------------------------------------------------------------

def which_table(which_table_fn, case):
    module, objects = standin(case)
    got = which_table_fn(module, query_prim(case, objects))
    if got is not None and not isinstance(got, str):
        with stage("answer"):
            raise TypeError(f"returned a {type(got).__name__}, not a str or None")
    return got


def table_sizes(table_sizes_fn, case) -> dict:
    module, _ = standin(case)
    got = table_sizes_fn(module)
    with stage("answer"):
        return {str(k): int(v) for k, v in dict(got).items()}
