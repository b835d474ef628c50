"""Lesson 4's observers: run a student's object on one case and return what happened, as plain
data. They know no answer (the trusted side compares); a student's error propagates, labelled
with its stage, and becomes the check's one failure type (`grader.wire.Failure`)."""
from __future__ import annotations

import contextlib
import copy
import itertools

import jax
import jax.numpy as jnp
import numpy as np

from ....core import _jax, jaxprs
from ....wire import pack, stage
from . import functions, kernels, models

# Equations that only hold other programs: an equation count looks inside them instead.
CALLS = frozenset({"jit", "pjit", "closed_call", "core_call", "remat", "checkpoint",
                   "custom_jvp_call", "custom_vjp_call", "custom_vjp_call_jaxpr", "custom_lin"})


def eqn_data(eqns) -> list[tuple]:
    return [e.to_plain() for e in eqns]


@contextlib.contextmanager
def batching_seen():
    """While the block runs, note every primitive a vmap's BatchTrace processes: its name, the
    size of the axis being mapped, and the names of the equations inside it (``x @ w`` is a jit
    of a dot_general: vmap batches the jit, and the dot inside it)."""
    seen: list[tuple[str, int]] = []
    original = _jax.BatchTrace.process_primitive

    def noted(self, primitive, *args, **kwargs):
        size = int(self.axis_data.size)
        seen.append((_jax.primitive_name(primitive), size))
        params = args[1] if len(args) > 1 else kwargs.get("params", {})
        for sub in jaxprs.sub_jaxprs(params):
            seen.extend((e.primitive, size) for e in jaxprs.summarize(sub, recursive=True))
        return original(self, primitive, *args, **kwargs)

    _jax.BatchTrace.process_primitive = noted
    try:
        yield seen
    finally:
        _jax.BatchTrace.process_primitive = original


def batch_sizes(fn, *args) -> list[int]:
    """The sizes of the axes every vmap inside ``fn`` mapped while ``fn(*args)`` was traced
    (sorted, each once); ``[]`` when no vmap batched anything. Only shapes are traced."""
    with batching_seen() as seen:
        jax.eval_shape(fn, *args)
    return sorted({size for _, size in seen})


def counted(eqns) -> int:
    """How many equations do work: every one, looking inside calls rather than at them."""
    return sum(1 for e in eqns if e.primitive not in CALLS)


def program(fn, *args) -> dict:
    """``fn``'s traced program (every equation, sub-programs too) and what vmap batched in it."""
    with batching_seen() as seen:
        closed = jax.make_jaxpr(fn)(*args)
    return _summary(closed, seen)


def _summary(closed, seen) -> dict:
    """A traced program's equations and what vmap batched while it was traced."""
    eqns = jaxprs.summarize(closed, recursive=True)
    return {"eqns": eqn_data(eqns), "batched": sorted({name for name, _ in seen}),
            "batch_sizes": sorted({size for _, size in seen})}


def run_traced(fn, *args):
    """``(value, program, closed jaxpr)``: ``fn`` traced ONCE, its values computed by running
    that very program (compiled), so the answer cannot show the checks one program and compute
    the values with another (red team, round 16: a rule that asked whether it was being traced
    showed the kernel to make_jaxpr and looped over the examples when run)."""
    with batching_seen() as seen:
        closed, shape = jax.make_jaxpr(fn, return_shape=True)(*args)
    outs = jax.jit(_jax.as_fun(closed))(*jax.tree_util.tree_leaves(args))
    value = jax.tree_util.tree_unflatten(jax.tree_util.tree_structure(shape), list(outs))
    return value, _summary(closed, seen), closed


_FRESH = itertools.count(1)


def like(x, grow_axis=None, by=0):
    """A shape-only stand-in for ``x``, its axis ``grow_axis`` longer by ``by``."""
    shape = list(np.shape(x))
    if grow_axis is not None:
        shape[grow_axis] += by
    return jax.ShapeDtypeStruct(tuple(shape), np.asarray(x).dtype)


# ---- per_example_grads ---------------------------------------------------------------------------

def _grown_count(answer, loss, params, batch, axes) -> int:
    """The equation count of the answer's program on a batch longer by a length not used before:
    a program written per example in a Python loop grows with it, a vmapped one does not."""
    extra = next(_FRESH)
    b_like = {n: like(v, axes[n], extra) for n, v in batch.items()}
    p_like = {n: like(v) for n, v in params.items()}
    closed = jax.make_jaxpr(lambda p, b: answer(loss, p, b, dict(axes)))(p_like, b_like)
    return counted(jaxprs.summarize(closed, recursive=True))


def _mapped(x, depth: int = 8) -> bool:
    """Whether a vmap maps ``x``: a BatchTracer with a batch axis, here or under the primal of an
    autodiff tracer wrapping it (grad traces the loss with such tracers)."""
    while depth and x is not None:
        if _jax.is_batch_tracer(x) and x.batch_dim is not None:
            return True
        x, depth = getattr(x, "primal", None), depth - 1
    return False


def watched_loss(loss, mapped: list):
    """``loss``, noting in ``mapped`` whether any parameter arrived mapped by a vmap."""
    def watched(params, batch):
        mapped.append(any(_mapped(p) for p in jax.tree_util.tree_leaves(params)))
        return loss(params, batch)
    return watched


def per_example_grads(answer, case) -> dict:
    params, batch = models.draw(case)
    axes, mapped = dict(case["axes"]), []
    loss = watched_loss(models.LOSSES[case["model"]], mapped)
    params, batch = jax.device_put(params), jax.device_put(batch)
    # Traced once; the values run that program, compiled (one compilation per case).
    out, seen, _ = run_traced(lambda p, b: answer(loss, p, b, copy.deepcopy(axes)), params, batch)
    with stage("answer"):
        if not isinstance(out, dict):
            raise TypeError(f"per_example_grads returned a {type(out).__name__}, not a dict "
                            f"like params")
        grads = {str(k): pack(v) for k, v in out.items()}
    return {"grads": grads, **seen, "grown": _grown_count(answer, loss, params, batch, axes),
            "params_mapped": any(mapped)}


# ---- clipped_scale (custom_vjp) ------------------------------------------------------------------

def scale_inputs(case):
    """``w`` and ``x`` stacked as the case's in_axes say, and the per-example cotangent weights
    ``c`` (batch axis 0), drawn so that some exceed the clip bound and some do not."""
    rng = np.random.default_rng(case["_seed"])
    (wa, xa), size = case["in_axes"], case["B"]
    w = rng.standard_normal(models.stacked(case["w_shape"], wa, size)).astype(np.float32)
    x = rng.standard_normal(models.stacked(case["x_shape"], xa, size)).astype(np.float32)
    c = (rng.uniform(0.2, 3.0, (size, *case["x_shape"])) *
         rng.choice(np.array([-1.0, 1.0], np.float32), (size, *case["x_shape"])))
    return w, x, c.astype(np.float32)


def clipped_scale(f, case) -> dict:
    w, x, c = (jax.device_put(a) for a in scale_inputs(case))
    in_axes = tuple(case["in_axes"])
    # Each under jit: one compilation per program, not one per primitive run eagerly.
    with stage("vmap"):
        forward = jax.jit(jax.vmap(f, in_axes=in_axes))(w, x)
    weighted = lambda w, x, c: jnp.sum(f(w, x) * c)         # noqa: E731  (cotangent c)
    with stage("vmap of grad"):
        per_example = jax.jit(jax.vmap(jax.grad(weighted, argnums=(0, 1)),
                                       in_axes=(*in_axes, 0)))(w, x, c)
    batched = lambda w, x, c: jnp.sum(jax.vmap(f, in_axes=in_axes)(w, x) * c)  # noqa: E731
    with stage("grad of vmap"):
        summed = jax.jit(jax.grad(batched, argnums=(0, 1)))(w, x, c)
    return {"custom_vjp": isinstance(f, jax.custom_vjp), "forward": pack(forward),
            "per_example": [pack(g) for g in per_example], "summed": [pack(g) for g in summed]}


# ---- floored_cummax (custom_vmap) ----------------------------------------------------------------

def floor_inputs(case):
    """``x`` and ``floor`` laid out as the case says: x's batch axis at ``x_axis`` (or unbatched),
    floor's at 0 (or unbatched); with ``outer``, both stacked once more in front."""
    rng = np.random.default_rng(case["_seed"])
    bx, bf = case["batched"]
    lead = (case["outer"],) if case["outer"] else ()
    x = rng.standard_normal(lead + models.stacked((case["n"],), case["x_axis"] if bx else None,
                                                  case["B"])).astype(np.float32)
    floor = rng.standard_normal(lead + ((case["B"],) if bf else ())).astype(np.float32)
    return x, floor


def floored_vmap(f, case):
    """The case's vmap (or two nested ones) of the student's function."""
    bx, bf = case["batched"]
    inner = jax.vmap(f, in_axes=(case["x_axis"] if bx else None, 0 if bf else None))
    return jax.vmap(inner) if case["outer"] else inner


def floored_cummax(f, case) -> dict:
    x, floor = (jax.device_put(a) for a in floor_inputs(case))
    rng = np.random.default_rng(case["_seed"] + 1)
    one_x, one_floor = rng.standard_normal(case["n"]).astype(np.float32), np.float32(0.25)
    with stage("one example"):
        single = f(jax.device_put(one_x), jax.device_put(one_floor))
    batched = floored_vmap(f, case)
    with stage("vmap"):
        out, seen, closed = run_traced(batched, x, floor)     # one program: values and checks
        flow = jaxprs.flow(closed)                            # where the result comes from
    return {"custom_vmap": isinstance(f, jax.custom_batching.custom_vmap),
            "single": pack(single), "out": pack(out), "flow": flow, **seen}


# ---- jacobian ------------------------------------------------------------------------------------

def jacobian(answer, case, grow: int = 3) -> dict:
    f, x = functions.make(case), jax.device_put(functions.point(case))
    out, seen, _ = run_traced(lambda v: answer(f, v), x)
    # The same kind of function, both sides ``grow`` longer: a vmapped jacobian is the same
    # program, one looping over the basis is longer.
    bigger = dict(case, n=case["n"] + grow, m=case["m"] + grow)
    g = functions.make(bigger)
    grown = jaxprs.summarize(jax.make_jaxpr(lambda v: answer(g, v))(like(functions.point(bigger))),
                             recursive=True)
    return {**pack(out), **seen, "grown": counted(grown)}


__all__ = ["batch_sizes", "counted", "kernels", "program"]
