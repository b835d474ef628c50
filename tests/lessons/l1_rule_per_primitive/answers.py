"""Answers to lesson 1's exercises: the right ones (the exercise notebook's own solution cells,
read from the source notebook, so there is one copy of each), realistic wrong ones, each named
after its mistake, and the pattern-matching students': what copying the nearest lesson cell,
transcribing JAX's own helper or fitting the visible cases gives."""
import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from grader.lessons import l1_rule_per_primitive as L1
from tests.fixtures.solutions import solved

# ---- right ---------------------------------------------------------------------------------------

_RIGHT = solved("01-the-rule-per-primitive", jax=jax, jnp=jnp, np=np, lax=lax, L1=L1)
spy, moments_rule = _RIGHT["spy"], _RIGHT["moments_rule"]
stack2_rule, prefix_rule = _RIGHT["stack2_rule"], _RIGHT["prefix_rule"]


def spying(read):
    """A spy that reports ``read(x, a)`` for every argument (``a``: its own in_axes entry), inside
    its own vmap: how each pattern-matching spy below is built."""
    def spy(f, in_axes, *args):
        report = []

        def watched(*xs):
            report[:] = [read(x, a) for x, a in zip(xs, in_axes)]
            return f(*xs)

        jax.vmap(watched, in_axes=in_axes)(*args)
        return report
    spy.__name__ = f"spy_{read.__name__}"
    return spy


# ---- pattern-matching students -------------------------------------------------------------------

def _own_level(x, a):
    """Lesson 1's advice for the last spy, copied: ask in_axes, read the tracer at one level."""
    return [None] if a is None else [int(x.batch_dim)]


def _peeled(x, a):
    """The course's tracer view (core.view), transcribed: peel every BatchTracer, ask nobody."""
    dims = []
    while isinstance(x, L1.BatchTracer):
        dims.append(int(x.batch_dim))
        x = x.val
    return dims


def _own_level_then_peeled(x, a):
    """in_axes for its own level, then the outer tracers peeled, padded to the vmaps active."""
    depth, trace = 0, L1.current_trace()
    while isinstance(trace, L1.BatchTrace):
        depth, trace = depth + 1, trace.parent_trace
    mine = _own_level(x, a)
    rest = _peeled(x.val if a is not None else x, None)
    return (mine + rest + [None] * depth)[:depth]


def _from_own_trace(x, a):
    """Lesson 1's trace chain (core.trace_chain), copied: from the tracer's own trace outwards,
    asking each trace whether the tracer is its own (it misses the levels inside that trace)."""
    dims, trace = [], getattr(x, "_trace", None)
    while isinstance(trace, L1.BatchTrace):
        if isinstance(x, L1.BatchTracer) and x._trace.tag is trace.tag:
            dims.append(int(x.batch_dim))
            x = x.val
        else:
            dims.append(None)
        trace = trace.parent_trace
    return dims


spy_copies_the_lesson = spying(_own_level)
spy_walks_from_the_tracer = spying(_from_own_trace)
spy_peels_tracers = spying(_peeled)
spy_peels_after_in_axes = spying(_own_level_then_peeled)


def moments_vectorized(prim, vals, dims, **params):
    """The lesson's vectorized rule, copied."""
    (x,), (d,) = vals, dims
    return prim.bind(x, **params), d


def moments_reducer(prim, vals, dims, *, axis):
    """JAX's reducer_batcher, transcribed: the axis renumbered, out_axis for every output."""
    (x,), (d,) = vals, dims
    a = int(np.where(np.less(axis, d), axis, np.add(axis, 1)))
    out = int(list(np.delete(np.arange(x.ndim), a)).index(d))
    return prim.bind(x, axis=a), [out, out]


def moments_to_the_front(prim, vals, dims, *, axis):
    """broadcast_batcher's move to the front, then the axis shifted past it."""
    (x,), (d,) = vals, dims
    return prim.bind(jnp.moveaxis(x, d, 0), axis=axis + 1), [0, 0]


def stack2_broadcasting(prim, vals, dims, **params):
    """JAX's broadcast_batcher, transcribed: batch axes to the front, size 1 for the unmapped."""
    moved = [jnp.expand_dims(v, 0) if d is None else jnp.moveaxis(v, d, 0)
             for v, d in zip(vals, dims)]
    return prim.bind(*moved, **params), 0


def stack2_concatenate_rule(prim, vals, dims, *, axis):
    """JAX's _concatenate_batch_rule, transcribed: everything to the front, the unmapped widened."""
    size = next(v.shape[d] for v, d in zip(vals, dims) if d is not None)
    moved = [jnp.moveaxis(v, d, 0) if d is not None else jnp.broadcast_to(v, (size,) + v.shape)
             for v, d in zip(vals, dims)]
    return prim.bind(*moved, axis=axis + 1), 0


def stack2_vectorized(prim, vals, dims, **params):
    d = next(d for d in dims if d is not None)
    return prim.bind(*vals, **params), d


def prefix_psum(prim, axis_data, vals, dims, *, axis_name):
    """psum's rule (_batched_reduction_collective), transcribed."""
    (x,), (d,) = vals, dims
    if axis_name != axis_data.name:
        return prim.bind(x, axis_name=axis_name), d
    if d is None:
        return x * axis_data.size, None
    return x.sum(d), None


def prefix_vectorized(prim, axis_data, vals, dims, **params):
    """The lesson's vectorized rule, copied into the table with axis_data."""
    (x,), (d,) = vals, dims
    if d is None:
        return x, None
    return jnp.cumsum(x, axis=d), d


def fitted(exercise, right, fallback):
    """A rule fitted to the visible cases: right on the calls those cases make, ``fallback`` on
    any other call (a case distinction written from what the visible checks showed)."""
    seen = set()
    for case in exercise.cases(np.random.default_rng(0), False):
        calls = []

        def noting(*args, **params):
            vals, dims = args[-2], args[-1]
            calls.append((tuple(tuple(v.shape) for v in vals), tuple(dims),  # noqa: B023  (run within this iteration)
                          tuple(sorted(params.items()))))
            return right(*args, **params)
        exercise.observe_safely((noting,), case)
        seen.update(calls)

    def rule(*args, **params):
        vals, dims = args[-2], args[-1]
        key = (tuple(tuple(v.shape) for v in vals), tuple(dims), tuple(sorted(params.items())))
        return (right if key in seen else fallback)(*args, **params)
    rule.__name__ = f"fitted_{right.__name__}"
    return rule


def fitted_spy(exercise, fallback):
    """A spy that returns the visible cases' answers, known by the arguments it is handed, and
    ``fallback``'s report on anything else."""
    table = {}
    for case in exercise.cases(np.random.default_rng(0), False):
        keys = []

        def noting(f, in_axes, *args):
            keys.append((tuple(tuple(np.shape(a)) for a in args), tuple(in_axes)))  # noqa: B023  (run within this iteration)
            return fallback(f, in_axes, *args)
        exercise.observe_safely((noting,), case)
        table[keys[-1]] = exercise.expect(case)

    def spy(f, in_axes, *args):
        key = (tuple(tuple(np.shape(a)) for a in args), tuple(in_axes))
        report = fallback(f, in_axes, *args)
        return table.get(key, report)
    return spy


# ---- wrong in other ways (each named after its mistake) -------------------------------------------

def spy_outermost_first(f, in_axes, *args):
    return [list(reversed(r)) for r in spy(f, in_axes, *args)]


def spy_copies_in_axes(f, in_axes, *args):
    """The right report, but its own level's entry copied from in_axes (a negative one as given)."""
    return [[a] + r[1:] if a is not None else r for r, a in zip(spy(f, in_axes, *args), in_axes)]


def moments_single_output(prim, vals, dims, *, axis):
    (x,), (d,) = vals, dims
    a = axis if axis < d else axis + 1
    return prim.bind(x, axis=a), d


def moments_axis_unshifted(prim, vals, dims, *, axis):
    (x,), (d,) = vals, dims
    mean, centred = prim.bind(x, axis=axis)
    return [mean, centred], [d - 1 if axis < d else d, d]


def stack2_size1(prim, vals, dims, *, axis):
    (x, y), (dx, dy) = vals, dims
    d = dx if dx is not None else dy
    ops = [jnp.expand_dims(v, d) if dv is None else jnp.moveaxis(v, dv, d)
           for v, dv in ((x, dx), (y, dy))]
    a = axis if axis <= d else axis + 1
    return prim.bind(*ops, axis=a), (d + 1 if a <= d else d)


def stack2_moveaxis_none(prim, vals, dims, *, axis):
    """Each operand's batch axis moved into place, the unmapped one's too: moveaxis(v, None, d)."""
    (x, y), (dx, dy) = vals, dims
    d = dx if dx is not None else dy
    a = axis if axis <= d else axis + 1
    ops = [jnp.moveaxis(v, dv, d) for v, dv in ((x, dx), (y, dy))]
    return prim.bind(*ops, axis=a), (d + 1 if a <= d else d)


def stack2_out_dim_kept(prim, vals, dims, *, axis):
    out, _ = stack2_rule(prim, vals, dims, axis=axis)
    return out, next(d for d in dims if d is not None)


def prefix_every_level(prim, axis_data, vals, dims, *, axis_name):
    (x,), (d,) = vals, dims
    if d is None:
        steps = jnp.arange(1, axis_data.size + 1, dtype=x.dtype).reshape((-1,) + (1,) * x.ndim)
        return steps * x, 0
    return jnp.cumsum(x, axis=d), d


def prefix_unmapped_as_is(prim, axis_data, vals, dims, *, axis_name):
    (x,), (d,) = vals, dims
    if axis_name != axis_data.name:
        return prim.bind(x, axis_name=axis_name), d
    if d is None:
        return x, None
    return jnp.cumsum(x, axis=d), d


def prefix_binds_again(prim, axis_data, vals, dims, *, axis_name):
    (x,), (d,) = vals, dims
    return prim.bind(x, axis_name=axis_name), d


def hints(res) -> str:
    """The hints of a failed result, joined (a passed result is a test failure here)."""
    assert not res.passed, res.summary()
    return " | ".join(f.hint for f in res.findings)
