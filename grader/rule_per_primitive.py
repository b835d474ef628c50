"""Lesson 1, "The rule per primitive": the primitives, cases and checks behind its exercises.

Every graded exercise is an ``Exercise`` in ``EXERCISES`` (keyed by the nbgrader grade_id), so the
same logic gives instant feedback in the kernel and grades in the out-of-kernel judge:
``cases`` draws plain-data cases, ``expect`` asks JAX (or a loop over examples) for the answer,
``observe`` runs the student's object and returns plain data, ``compare`` explains a difference.

The primitives the exercises batch are built fresh by ``make_primitives()`` for every case, so a
rule installed by one check never leaks into another, and the student's rule is handed its
primitive first (``rule(prim, vals, dims, **params)``), exactly like JAX's ``vectorized_batcher``.
"""
from __future__ import annotations

import types
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

from . import core
from .core import _jax
from .exercise import Exercise, describe, fresh_cases
from .feedback import Finding, Result, result

# The names a batching-rule table has had in some release (oldest layout last).
TABLE_NAMES = _jax.TABLE_NAMES


# ---- the exercise primitives ---------------------------------------------------------------------

def _softsign(x):
    return (x / (1 + np.abs(x))).astype(np.float32)


def _scaled_diff(x, y, *, scale):
    return (np.float32(scale) * (x - y)).astype(np.float32)


def _sumsq(x, *, axes):
    return np.sum(x * x, axis=tuple(int(a) for a in axes)).astype(np.float32)


def _rowmax(x):
    return np.max(x, axis=1).astype(np.float32)


def _same_shape(shape):
    return shape


def _broadcast_shape(xs, ys, *, scale):
    del scale
    if len(xs) != len(ys):
        raise TypeError(f"scaled_diff needs operands of the same rank (it broadcasts only size-1 "
                        f"axes, numpy-style), got shapes {xs} and {ys}")
    for a, b in zip(xs, ys):
        if a != b and 1 not in (a, b):
            raise TypeError(f"scaled_diff got incompatible shapes {xs} and {ys}: each axis must "
                            f"agree or be 1 in one operand")
    return tuple(max(a, b) if 1 in (a, b) else a for a, b in zip(xs, ys))


def _reduced_shape(shape, *, axes):
    try:
        picked = [int(a) for a in axes]
    except TypeError:
        picked = None
    if picked is None or len(set(picked)) != len(picked) or \
            any(not 0 <= a < len(shape) for a in picked):
        raise TypeError(f"sumsq: axes={axes!r} do not name distinct axes of an operand of "
                        f"shape {shape}")
    return tuple(d for i, d in enumerate(shape) if i not in picked)


def _row_shape(shape):
    if len(shape) != 2:
        raise TypeError(f"rowmax takes a (rows, cols) matrix, got an operand of shape {shape}")
    return shape[:1]


def _primitive(name, reference, shape_rule):
    """A primitive with an implementation (numpy) and an abstract eval, and no batching rule."""
    prim = _jax.new_primitive(name)

    def impl(*xs, **params):
        xs = [np.asarray(x) for x in xs]
        shape_rule(*(x.shape for x in xs), **params)   # the same contract eagerly as when traced
        return jax.device_put(reference(*xs, **params))

    def abstract_eval(*avals, **params):
        shape = shape_rule(*(tuple(a.shape) for a in avals), **params)
        return _jax.ShapedArray(tuple(shape), avals[0].dtype)

    prim.def_impl(impl)
    prim.def_abstract_eval(abstract_eval)
    return prim


REFERENCES = {"softsign": _softsign, "scaled_diff": _scaled_diff, "sumsq": _sumsq,
              "rowmax": _rowmax}


def make_primitives() -> types.SimpleNamespace:
    """Fresh ``softsign_p``, ``scaled_diff_p``, ``sumsq_p`` and ``rowmax_p``; vmap refuses them all.

    - ``softsign_p.bind(x)``: x / (1 + |x|), elementwise, any shape.
    - ``scaled_diff_p.bind(x, y, scale=s)``: s * (x - y); x and y have the same rank and every axis
      agrees or is 1 in one of them (numpy broadcasting, but no rank promotion).
    - ``sumsq_p.bind(x, axes=(...))``: the sum of x*x over ``axes`` (non-negative, distinct).
    - ``rowmax_p.bind(m)``: the maximum of each row of a rank-2 ``m``; shape (rows, cols) -> (rows,).
    """
    return types.SimpleNamespace(
        softsign_p=_primitive("softsign", _softsign, _same_shape),
        scaled_diff_p=_primitive("scaled_diff", _scaled_diff, _broadcast_shape),
        sumsq_p=_primitive("sumsq", _sumsq, _reduced_shape),
        rowmax_p=_primitive("rowmax", _rowmax, _row_shape),
    )


def install(prim, rule) -> None:
    """Install a student's ``rule(prim, vals, dims, **params)`` for ``prim`` on any JAX release."""
    core.register_rule(prim, partial(rule, prim))


# ---- shared helpers --------------------------------------------------------------------------------

def _insert(shape, axis, size):
    """``shape`` with a new axis of ``size`` where ``in_axes=axis`` says (negative counts from the end)."""
    pos = axis % (len(shape) + 1)
    return tuple(shape[:pos]) + (size,) + tuple(shape[pos:])


def _axis(rng, rank):
    """A random in_axes entry for a value of ``rank`` axes, negative half of the time."""
    pos = int(rng.integers(0, rank))
    return pos - rank if rng.random() < 0.5 else pos


def _shape(rng, rank, low=2, high=5):
    return tuple(int(d) for d in rng.integers(low, high + 1, size=rank))


def _error(err: BaseException) -> str:
    return f"{type(err).__name__}: {err}".strip()[:400]


def _finding(case, expected, got, hint) -> Finding:
    return Finding(describe(case), str(expected), str(got), hint)


# ---- exercise 1: the spy ---------------------------------------------------------------------------

def _sum_all(*xs):
    """The function the spy watches: its result is irrelevant, so it costs no compilation."""
    del xs
    return 0.0


def _spy_case(rng, nested, unmapped=False):
    """Shapes and in_axes of 1-3 arguments (with ``unmapped``, at least one of them None); with
    ``nested``, outer axes too, and every argument the inner vmap leaves alone is outer-mapped."""
    n = int(rng.integers(2 if unmapped else 1, 4))
    size, outer_size = int(rng.integers(2, 6)), int(rng.integers(2, 6))
    while True:
        inner = [None if rng.random() < 0.3 else 0 for _ in range(n)]
        if unmapped:
            inner[int(rng.integers(0, n))] = None
        if any(a is not None for a in inner):
            break
    shapes, inner_axes, outer_axes = [], [], []
    for a in inner:
        base = _shape(rng, int(rng.integers(0, 3)))
        level = base
        if a is not None:
            a = _axis(rng, len(base) + 1)
            level = _insert(base, a, size)
        inner_axes.append(a)
        shapes.append(level)
    if nested:
        # An argument the inner vmap leaves alone is mapped by the outer one: the trap to report.
        outer_axes = [_axis(rng, len(s) + 1) if (a is None or rng.random() < 0.8) else None
                      for s, a in zip(shapes, inner_axes)]
        if all(o is None for o in outer_axes):
            outer_axes[0] = 0
        shapes = [s if o is None else _insert(s, o, outer_size) for s, o in zip(shapes, outer_axes)]
    return {"shapes": tuple(shapes), "in_axes": tuple(inner_axes),
            "outer_axes": tuple(outer_axes) if nested else None}


VISIBLE_SPY = (
    {"shapes": ((3, 7, 5), (5,)), "in_axes": (1, None), "outer_axes": None},
    {"shapes": ((7, 3, 5), (5,)), "in_axes": (0, None), "outer_axes": None},
    {"shapes": ((2, 3, 4), (4, 6)), "in_axes": (-1, 0), "outer_axes": None},
    {"shapes": ((6, 4, 3), (6, 5)), "in_axes": (-1, None), "outer_axes": (0, 0)},
)


def cases_spy(rng, hidden: bool) -> list[dict]:
    if not hidden:
        return [dict(c) for c in VISIBLE_SPY]
    # Two cases of each kind are sure to hold an argument the spy's own vmap leaves alone.
    return fresh_cases(lambda i: _spy_case(rng, nested=i >= 6, unmapped=i in (0, 1, 6, 7)),
                       VISIBLE_SPY, 10)


def _zeros(shapes):
    # device_put, not jnp.asarray: JAX 0.10's asarray compiles a copy for every new shape.
    return [jax.device_put(np.zeros(s, np.float32)) for s in shapes]


def expect_spy(case) -> list[tuple]:
    """What JAX says each argument looked like at the spy's own (innermost) vmap level."""
    layers = None if case["outer_axes"] is None else [case["outer_axes"]]
    _, views = core.observe(_sum_all, case["in_axes"], *_zeros(case["shapes"]), layers=layers)
    report = []
    for view, axis in zip(views, case["in_axes"]):
        if axis is None:   # not in this vmap: whatever arrived, concrete or an outer tracer
            report.append((None, view.shape, view.shape))
        else:
            level = view.levels[0]
            report.append((level.batch_dim, level.shape, level.val_shape))
    return report


def _plain_report(report):
    try:
        rows = []
        for bd, seen, val in report:
            rows.append((None if bd is None else int(bd), tuple(int(d) for d in seen),
                         tuple(int(d) for d in val)))
        return rows
    except (TypeError, ValueError) as err:
        return {"error": f"the report is not a list of (batch_dim, shape, value_shape) tuples "
                         f"({_error(err)})"}


def observe_spy(spy, case):
    """Call the student's spy directly, or from inside an outer vmap for nested cases."""
    args = _zeros(case["shapes"])
    try:
        if case["outer_axes"] is None:
            report = spy(_sum_all, case["in_axes"], *args)
        else:
            box = []

            def outer_body(*xs):
                box.append(spy(_sum_all, case["in_axes"], *xs))
                return 0.0

            jax.vmap(outer_body, in_axes=case["outer_axes"])(*args)
            report = box[-1]
    except Exception as err:  # the student's bug is the observation
        return {"error": _error(err)}
    return _plain_report(report)


def _spy_hint(case, i, exp, got) -> str:
    axis = case["in_axes"][i]
    nested = case["outer_axes"] is not None
    (ebd, eseen, eval_), (gbd, gseen, gval) = exp, got
    if gbd != ebd:
        if axis is None and nested:
            return (f"argument {i} has in_axes None in your vmap, so it is not in your vmap at "
                    f"all: it arrives as it was outside, here a tracer of the OUTER vmap. Report "
                    f"(None, shape, shape) for it: the in_axes you were given says which "
                    f"arguments your vmap maps.")
        if axis is not None and gbd == axis:
            return ("JAX normalises a negative in_axes: the tracer's batch_dim is non-negative. "
                    "Read x.batch_dim instead of copying in_axes.")
        if axis is None:
            return "an argument with in_axes None has no batch dim: report None for it."
        return "read the batch dim off the tracer: x.batch_dim."
    if gseen != eseen:
        if gseen == eval_:
            return ("the shape the function sees is x.shape (the batch axis hidden); you reported "
                    "the value underneath.")
        return "the shape the function sees is x.shape, the per-example shape."
    if gval != eval_:
        if gval == eseen and axis is not None:
            return "x.shape hides the batch axis; x.val.shape does not."
        if nested and len(gval) > len(eval_):
            return ("report one level only: x.val is the value one vmap down (in a nested vmap, "
                    "a tracer of the outer vmap); do not peel further.")
        return "the value underneath is x.val; report x.val.shape."
    return ""


def compare_spy(case, expected, got):
    if isinstance(got, dict):
        err = got["error"]
        hint = ("an argument with in_axes None is not a BatchTracer (it has no .val or "
                ".batch_dim): it arrives as it was, so handle it separately."
                if "AttributeError" in err else "run your spy on the example above and read the error.")
        return _finding(case, expected, err, hint)
    expected = [tuple(r) for r in expected]
    if len(got) != len(expected):
        return _finding(case, expected, got, "report one tuple per argument, in argument order.")
    for i, (exp, g) in enumerate(zip(expected, got)):
        if tuple(g) != tuple(exp):
            return _finding(case, expected, got, f"argument {i}: " + _spy_hint(case, i, exp, g))
    return None


# ---- exercise 2 and 4: batching rules ---------------------------------------------------------------

def _loop(fn, in_axes):
    """``fn`` mapped over examples with a Python loop: the meaning vmap must reproduce."""
    def looped(*xs):
        size = next(np.shape(x)[a] for x, a in zip(xs, in_axes) if a is not None)
        outs = [fn(*(x if a is None else np.take(x, b, axis=a) for x, a in zip(xs, in_axes)))
                for b in range(size)]
        return np.stack(outs, axis=0)
    return looped


def _data(case):
    rng = np.random.default_rng(case["seed"])
    return [rng.integers(-4, 5, size=s).astype(np.float32) for s in case["shapes"]]


def _batched(prim, case):
    params = dict(case["params"])
    fn = jax.vmap(lambda *xs: prim.bind(*xs, **params), in_axes=case["in_axes"])
    if case["outer_axes"] is not None:
        fn = jax.vmap(fn, in_axes=case["outer_axes"])
    return fn


def expect_rule(case) -> dict:
    params = dict(case["params"])
    fn = _loop(lambda *xs: REFERENCES[case["prim"]](*xs, **params), case["in_axes"])
    if case["outer_axes"] is not None:
        fn = _loop(fn, case["outer_axes"])
    out = fn(*_data(case))
    return {"shape": tuple(int(d) for d in out.shape), "values": out.ravel().tolist()}


def observe_rule(rule, case) -> dict:
    """Install ``rule`` on a fresh primitive, run the batched call, and summarise its jaxpr."""
    prim = getattr(make_primitives(), case["prim"] + "_p")
    install(prim, rule)
    try:
        fn, args = _batched(prim, case), [jax.device_put(a) for a in _data(case)]
        try:
            out = np.asarray(fn(*args), dtype=np.float32)
            eqns = core.summarize(jax.make_jaxpr(fn)(*args), recursive=True)
        except Exception as err:  # the student's rule raised (or made JAX raise)
            return {"error": _error(err)}
        mine = tuple((e.in_shapes, e.out_shapes, e.param("axes")) for e in eqns
                     if e.primitive == prim.name)
        return {"shape": tuple(int(d) for d in out.shape), "values": out.ravel().tolist(),
                "eqns": mine}
    finally:
        core.unregister_rule(prim)


def _error_hint(prim_name, err) -> str:
    if "same rank" in err:
        return ("an unmapped operand went into the primitive without an axis where the batch is: "
                "give it a size-1 axis there (jnp.expand_dims(y, 0) once the mapped operand's "
                "batch axis is at the front) and let the primitive's broadcasting do the rest.")
    if "incompatible shapes" in err:
        return ("the operands' batch axes don't line up: move every batch axis to the same place "
                "(the front, with jnp.moveaxis) before binding.")
    if "rowmax takes" in err:
        return ("rowmax only accepts a rank-2 matrix, so binding it on the batched value as it is "
                "(what defvectorized would do) breaks its contract. Move the batch axis next to "
                "the rows, fold it into them with a reshape, bind once, and unfold the result.")
    if "sumsq: axes" in err:
        return ("the axes parameter you passed does not fit the batched operand: it has one more "
                "axis than an example, so axes at or after batch_dim move up by one.")
    if "out of range" in err or "out of bounds" in err:
        return ("an axis number is out of range: the out_dim you return must name an axis of the "
                "value you return (count the axes the primitive removed or added).")
    if "batch dim should be int" in err or "must be an int" in err:
        return "return the output batch dim as a plain Python int (int(...)), or None."
    if err.startswith("NotImplementedError"):
        return "your rule raised NotImplementedError: it is not written yet."
    if "unexpected keyword" in err or ("missing" in err and "required" in err):
        return (f"a rule receives the primitive's parameters as keyword arguments (**params) and "
                f"must pass them on to {prim_name}_p.bind.")
    return "run your rule on the example in the exercise and read the error."


def _batch_size(case):
    """The inner vmap's axis size (chosen different from every per-example dimension)."""
    return next(s[a] for s, a in zip(case["shapes"], case["in_axes"]) if a is not None)


def _structure_hint(case, eqns) -> str | None:
    """Why the batched jaxpr is not the one-equation program the rule should produce."""
    name = case["prim"]
    if len(eqns) != 1:
        return (f"the batched program should hold exactly one {name} equation, on the whole "
                f"batch; it holds {len(eqns)}" + (" (a loop over examples?)" if eqns else
                                                  " (you computed it without binding the primitive?)"))
    (in_shapes, out_shapes, axes), size = eqns[0], _batch_size(case)
    if name == "scaled_diff":
        for i, axis in enumerate(case["in_axes"]):
            if axis is None and size in in_shapes[i]:
                return (f"operand {i} is unmapped but entered {name} with the batch size "
                        f"{size} on an axis (shape {in_shapes[i]}): you materialised a copy per "
                        f"example. Give it a size-1 axis instead; the primitive broadcasts it.")
    if name == "sumsq":
        batch_axes = [i for i, d in enumerate(in_shapes[0]) if d == size]
        if axes is None or len(axes) != len(dict(case["params"])["axes"]) or \
                any(a in axes for a in batch_axes):
            return (f"{name}'s axes parameter {axes} on operand {in_shapes[0]} reduces the wrong "
                    f"axes: every axis at or after batch_dim moves up by one.")
    return None


def compare_rule(case, expected, got):
    name = case["prim"]
    if "error" in got:
        return _finding(case, f"a result of shape {expected['shape']}", got["error"],
                        _error_hint(name, got["error"]))
    if got["shape"] != expected["shape"]:
        if sorted(got["shape"]) == sorted(expected["shape"]):
            hint = ("the output's batch axis is not where the out_dim you returned says: return "
                    "the index of the batch axis in the value you return.")
        elif name == "sumsq" and case["outer_axes"] is None and \
                _batch_size(case) not in got["shape"]:
            hint = ("your rule reduced the batch axis too: the axes parameter counts the axes of "
                    "one example, so every axis at or after batch_dim moves up by one.")
        else:
            hint = ("the result has the wrong shape compared with a loop over examples: does your "
                    "rule use the batch dim it is given (dims), rather than assume the batch axis "
                    "is at the front?")
        return _finding(case, f"shape {expected['shape']}", f"shape {got['shape']}", hint)
    if not np.allclose(got["values"], expected["values"], rtol=1e-5, atol=1e-6):
        hint = ("same shape as a loop over examples but different numbers: check the out_dim you "
                "return, that the operands' batch axes line up, and that you pass **params on.")
        return _finding(case, "the values of a loop over examples", "different values", hint)
    if case["outer_axes"] is None and name != "rowmax":
        hint = _structure_hint(case, got["eqns"])
        if hint:
            return _finding(case, f"one {name} equation", got["eqns"], hint)
    return None


def _rule_case(prim, rng, nested, force=None):
    """One case; ``force`` ("unmapped" or "mapped") fixes whether a binary case has a None axis."""
    size, outer_size = int(rng.integers(6, 8)), int(rng.integers(6, 8))
    if prim == "softsign":
        base, params = [_shape(rng, int(rng.integers(0, 3)))], ()
    elif prim == "rowmax":
        base, params = [_shape(rng, 2)], ()
    elif prim == "sumsq":
        rank = int(rng.integers(1, 4))
        base = [_shape(rng, rank)]
        k = int(rng.integers(1, rank + 1))
        params = (("axes", tuple(sorted(int(a) for a in rng.choice(rank, k, replace=False)))),)
    else:  # scaled_diff: same rank, broadcast-compatible per-example shapes
        rank = int(rng.integers(0, 3))
        x = _shape(rng, rank)
        y = tuple(1 if rng.random() < 0.25 else d for d in x)
        x = tuple(1 if (yd != 1 and rng.random() < 0.2) else d for d, yd in zip(x, y))
        base = [x, y] if rng.random() < 0.5 else [y, x]
        params = (("scale", float(rng.choice([0.5, 2.0, -1.5, 3.0]))),)
    while True:
        axes = [None if (len(base) > 1 and rng.random() < 0.35) else _axis(rng, len(b) + 1)
                for b in base]
        if len(base) > 1 and force == "unmapped":
            axes[int(rng.integers(0, 2))] = None
        if len(base) > 1 and force == "mapped" and None in axes:
            continue
        if any(a is not None for a in axes):
            break
    shapes = [b if a is None else _insert(b, a, size) for b, a in zip(base, axes)]
    outer = None
    if nested:
        while True:
            outer = [None if (len(base) > 1 and rng.random() < 0.35) else _axis(rng, len(s) + 1)
                     for s in shapes]
            if any(o is not None for o in outer):
                break
        shapes = [s if o is None else _insert(s, o, outer_size) for s, o in zip(shapes, outer)]
        outer = tuple(outer)
    return {"prim": prim, "shapes": tuple(shapes), "in_axes": tuple(axes), "outer_axes": outer,
            "params": params, "seed": int(rng.integers(0, 2 ** 31))}


def _visible(prim, shapes, in_axes, params=(), outer=None, seed=0):
    return {"prim": prim, "shapes": shapes, "in_axes": in_axes, "outer_axes": outer,
            "params": params, "seed": seed}


VISIBLE_RULES = {
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


def _rule_cases(prim):
    def cases(rng, hidden: bool) -> list[dict]:
        visible = [dict(c) for c in VISIBLE_RULES[prim]]
        if not hidden:
            return visible
        force = {0: "unmapped", 1: "unmapped", 2: "mapped", 3: "mapped"}
        return fresh_cases(lambda i: _rule_case(prim, rng, nested=i >= 7, force=force.get(i)),
                           visible, 10)
    return cases


# ---- exercise 3: reading the rule tables on any layout ------------------------------------------

class Proxy09:
    """Stands in for the write-only proxies of jax 0.9+ (and ``axis_primitive_batchers`` since 0.4.36)."""

    def __init__(self, fancy):
        self._fancy = fancy

    def __setitem__(self, prim, rule):
        self._fancy[prim] = rule

    def __delitem__(self, prim):
        del self._fancy[prim]


class Proxy082(Proxy09):
    """Stands in for ``primitive_batchers`` on jax 0.8.2/0.8.3: readable with ``[]``, but ``in``
    raises KeyError(0) and ``len`` TypeError."""

    def __getitem__(self, prim):
        return self._fancy[prim]

    def __contains__(self, prim):
        raise KeyError(0)

    def __len__(self):
        raise TypeError("object of type 'PrimitiveBatchersProxy' has no len()")


def _rule_stub(*args, **params):
    raise NotImplementedError("a stand-in rule: never called")


POOL = ("sin", "cos", "tanh", "exp", "add", "mul", "sub", "max", "reduce_sum", "reduce_max",
        "transpose", "dot_general", "reshape", "broadcast_in_dim", "concatenate", "select_n")
AXIS_POOL = ("psum", "pmax", "all_gather", "all_to_all", "ppermute", "axis_index", "pbroadcast",
             "cond", "while", "scan", "pjit", "remat2", "custom_vjp_call_jaxpr")
# Primitives with a rule in every release's tables from import time on (no lazy registration).
INSTALLED_POOL = ("sin", "cos", "add", "mul", "reduce_sum", "transpose", "dot_general",
                  "broadcast_in_dim", "cond", "while", "scan", "psum", "all_gather")
LAYOUTS = ("split", "collapsed-0.8.2", "collapsed-0.9", "legacy")


def _members(rng, pool, low, high):
    k = int(rng.integers(low, high + 1))
    return tuple(str(n) for n in rng.choice(pool, size=min(k, len(pool)), replace=False))


def _tables_for(layout, rng):
    """Member names per table for one stand-in layout (``pbroadcast`` twice, as in 0.4.x)."""
    plain = _members(rng, POOL, 3, 8)
    axis = tuple(n for n in _members(rng, AXIS_POOL, 3, 8) if n != "pbroadcast") + ("pbroadcast",)
    if layout == "split":
        return {"primitive_batchers": plain + ("pbroadcast",), "fancy_primitive_batchers": axis}
    if layout == "legacy":
        tables = {"primitive_batchers": plain + ("pbroadcast",), "axis_primitive_batchers": axis}
        if rng.random() < 0.5:
            tables["spmd_axis_primitive_batchers"] = _members(rng, ("psum_spmd", "pmax_spmd"), 1, 2)
        return tables
    return {"fancy_primitive_batchers": plain + axis}


def standin(case):
    """A module shaped like one batching layout, and its primitives: ``(module, {table: [prims]})``."""
    if case["layout"] == "installed":
        return _jax.batching, {}
    objects = {t: [_jax.new_primitive(n) for n in names] for t, names in case["tables"].items()}
    dicts = {t: {p: _rule_stub for p in prims} for t, prims in objects.items()}
    attrs = dict(dicts, BatchTracer=_jax.BatchTracer, defvectorized=_rule_stub,
                 vmappables={}, spec_types=set())
    fancy = dicts.get("fancy_primitive_batchers")
    if case["layout"] == "split":
        attrs["axis_primitive_batchers"] = Proxy09(fancy)
        # A real dict whose name ends in "batchers" but holds predicates, not rules (0.4.36-0.9.0).
        attrs["skippable_batchers"] = {p: _rule_stub for p in objects["fancy_primitive_batchers"][:2]}
    elif case["layout"] == "collapsed-0.8.2":
        attrs["primitive_batchers"] = Proxy082(fancy)
        attrs["axis_primitive_batchers"] = Proxy09(fancy)
    elif case["layout"] == "collapsed-0.9":
        attrs["primitive_batchers"] = Proxy09(fancy)
        attrs["axis_primitive_batchers"] = Proxy09(fancy)
    return types.SimpleNamespace(**attrs), objects


def query_prim(case, objects):
    """The Primitive object a case asks about: one held by a table, or a fresh look-alike."""
    where, key = case["query"]
    if where == "fresh":
        return _jax.new_primitive(key)
    if case["layout"] == "installed":
        for table in core.real_tables().values():
            for prim in table:
                if prim.name == key:
                    return prim
        raise LookupError(f"no primitive named {key!r} has a rule on this JAX")
    return objects[where][key]


def _table_case(rng, layout):
    tables = _tables_for(layout, rng)
    names = list(tables)
    roll = rng.random()
    if roll < 0.2:    # a look-alike: same name as a member, but not the same object
        query = ("fresh", str(rng.choice(tables[names[0]])))
    elif roll < 0.45:  # one of the two same-named primitives
        holder = [t for t in names if "pbroadcast" in tables[t]]
        t = holder[int(rng.integers(0, len(holder)))]
        query = (t, tables[t].index("pbroadcast"))
    else:
        t = names[int(rng.integers(0, len(names)))]
        query = (t, int(rng.integers(0, len(tables[t]))))
    return {"layout": layout, "tables": tables, "query": query}


VISIBLE_TABLES = (
    {"layout": "split", "query": ("fancy_primitive_batchers", 1),
     "tables": {"primitive_batchers": ("sin", "add", "reduce_sum", "pbroadcast"),
                "fancy_primitive_batchers": ("psum", "cond", "pbroadcast")}},
    {"layout": "split", "query": ("primitive_batchers", 3),
     "tables": {"primitive_batchers": ("sin", "add", "reduce_sum", "pbroadcast"),
                "fancy_primitive_batchers": ("psum", "cond", "pbroadcast")}},
    {"layout": "split", "query": ("fresh", "sin"),
     "tables": {"primitive_batchers": ("sin", "add", "reduce_sum", "pbroadcast"),
                "fancy_primitive_batchers": ("psum", "cond", "pbroadcast")}},
    {"layout": "collapsed-0.8.2", "query": ("fancy_primitive_batchers", 0),
     "tables": {"fancy_primitive_batchers": ("sin", "add", "psum", "scan")}},
    {"layout": "collapsed-0.9", "query": ("fancy_primitive_batchers", 2),
     "tables": {"fancy_primitive_batchers": ("sin", "transpose", "dot_general", "while")}},
    {"layout": "legacy", "query": ("axis_primitive_batchers", 1),
     "tables": {"primitive_batchers": ("sin", "add", "pbroadcast"),
                "axis_primitive_batchers": ("psum", "pbroadcast", "all_gather")}},
    {"layout": "installed", "query": ("registered", "sin"), "tables": {}},
    {"layout": "installed", "query": ("registered", "psum"), "tables": {}},
    {"layout": "installed", "query": ("fresh", "add"), "tables": {}},
)


def cases_which_table(rng, hidden: bool) -> list[dict]:
    if not hidden:
        return [dict(c) for c in VISIBLE_TABLES]
    return fresh_cases(lambda i: _table_case(rng, LAYOUTS[i % len(LAYOUTS)]) if i < 11 else
                       _installed_case(rng, "fresh" if i == 13 else "registered"),
                       VISIBLE_TABLES, 14)


def _installed_case(rng, where: str) -> dict:
    return {"layout": "installed", "tables": {}, "query": (where, str(rng.choice(INSTALLED_POOL)))}


def expect_which_table(case):
    module, objects = standin(case)
    holders = core.tables_holding(query_prim(case, objects), module)
    return holders[0] if holders else None


def observe_which_table(which_table, case):
    module, objects = standin(case)
    prim = query_prim(case, objects)
    try:
        got = which_table(module, prim)
    except Exception as err:
        return {"error": _error(err)}
    return got if got is None or isinstance(got, str) else {"error": f"returned a "
                                                                     f"{type(got).__name__}, "
                                                                     f"not a str or None"}


def _proxy_hint(err: str) -> str | None:
    if err.startswith(("KeyError", "TypeError")):
        return ("one of the tables is a proxy, not a dict: `in`, len() and [] raise on it (the "
                "0.8.2 proxy raises KeyError: 0 for `in`, later ones TypeError). Check "
                "isinstance(table, dict) before asking it anything.")
    if err.startswith("AttributeError"):
        return ("not every layout has every table: use getattr(module, name, None) and skip "
                "what is missing.")
    return None


def compare_which_table(case, expected, got):
    if isinstance(got, dict):
        hint = _proxy_hint(got["error"]) or "run your function on the example and read the error."
        return _finding(case, repr(expected), got["error"], hint)
    if got == expected:
        return None
    where, key = case["query"]
    name = key if where in ("fresh", "registered") else case["tables"][where][key]
    if expected is None:
        hint = (f"this {name!r} is a fresh primitive that only shares its name with a registered "
                f"one. Tables are keyed by the Primitive object: test `prim in table` (identity), "
                f"not names.")
    elif name == "pbroadcast" or got in TABLE_NAMES:
        hint = ("two different primitives can share a name (pbroadcast in jax 0.4.x): look the "
                "object up (`prim in table`), never its name.")
    else:
        hint = ("only the tables named in TABLE_NAMES hold rules, and only those that are real "
                "dicts (a proxy holds nothing; skippable_batchers is not a rule table).")
    return _finding(case, repr(expected), repr(got), hint)


def cases_table_sizes(rng, hidden: bool) -> list[dict]:
    """Stand-ins only: the installed JAX's counts move with imports, so they differ by process."""
    if not hidden:
        return [dict(c) for c in VISIBLE_TABLES if c["layout"] != "installed"][2:]
    return fresh_cases(lambda i: _table_case(rng, LAYOUTS[i % len(LAYOUTS)]), VISIBLE_TABLES, 8)


def expect_table_sizes(case) -> dict:
    module, _ = standin(case)
    return {name: len(table) for name, table in core.real_tables(module).items()}


def observe_table_sizes(table_sizes, case):
    module, _ = standin(case)
    try:
        got = table_sizes(module)
        return {str(k): int(v) for k, v in dict(got).items()}
    except Exception as err:
        return {"__error__": _error(err)}


def compare_table_sizes(case, expected, got):
    if "__error__" in got:
        hint = _proxy_hint(got["__error__"]) or "run your function on the example and read the error."
        return _finding(case, expected, got["__error__"], hint)
    if got == expected:
        return None
    extra = sorted(set(got) - set(expected))
    if any(n not in TABLE_NAMES for n in extra):
        hint = ("only the tables named in TABLE_NAMES hold rules: skippable_batchers, vmappables "
                "and the rest are other bookkeeping.")
    elif extra:
        hint = "a proxy is not a table: leave out every table that is not a real dict."
    elif set(got) != set(expected):
        hint = "include every real dict among TABLE_NAMES that this module has."
    else:
        hint = "count the entries of each table with len(table)."
    return _finding(case, expected, got, hint)


# ---- the graded exercises, by grade_id ----------------------------------------------------------

def _rule_exercise(prim, needs):
    return Exercise(f"check_{needs}", (needs,), _rule_cases(prim), expect_rule, observe_rule,
                    compare_rule, crash_hint="Run your rule on the example in the exercise.")


EXERCISES = {
    "spy": Exercise("check_spy", ("spy",), cases_spy, expect_spy, observe_spy, compare_spy),
    "softsign_rule": _rule_exercise("softsign", "softsign_rule"),
    "scaled_diff_rule": _rule_exercise("scaled_diff", "scaled_diff_rule"),
    "sumsq_rule": _rule_exercise("sumsq", "sumsq_rule"),
    "which_table": Exercise("check_which_table", ("which_table",), cases_which_table,
                            expect_which_table, observe_which_table, compare_which_table),
    "table_sizes": Exercise("check_table_sizes", ("table_sizes",), cases_table_sizes,
                            expect_table_sizes, observe_table_sizes, compare_table_sizes),
    "rowmax_rule": _rule_exercise("rowmax", "rowmax_rule"),
}


def _checker(grade_id: str):
    """The notebook's instant check for one graded exercise: the same Exercise the judge runs."""
    def check(answer, hidden=False, seed=None) -> Result:
        return EXERCISES[grade_id].check(answer, hidden=hidden, seed=seed)
    check.__name__ = check.__qualname__ = EXERCISES[grade_id].name
    check.__doc__ = (f"Check your answer for ``{grade_id}`` on the visible cases "
                     "(``hidden=True``: on cases drawn now).")
    return check


check_spy = _checker("spy")
check_softsign_rule = _checker("softsign_rule")
check_scaled_diff_rule = _checker("scaled_diff_rule")
check_sumsq_rule = _checker("sumsq_rule")
check_which_table = _checker("which_table")
check_table_sizes = _checker("table_sizes")
check_rowmax_rule = _checker("rowmax_rule")


# ---- ungraded self-checks: answers one make_jaxpr (or one print) would reveal -------------------

def _selfcheck(name, expected, answer, hint) -> Result:
    if answer == expected:
        return result(name, 1, [], note="Right. Now confirm it by running the call yourself.")
    return result(name, 1, [Finding("your prediction", repr(expected), repr(answer), hint)])


def selfcheck_tracer(answer) -> Result:
    """(batch_dim, x.shape, x.val.shape) inside ``jax.vmap(f, in_axes=-1)`` over a (2, 3, 4) array."""
    _, (view,) = core.observe(lambda x: x, -1, jnp.zeros((2, 3, 4)))
    expected = (view.batch_dim, view.shape, view.val_shape)
    return _selfcheck("selfcheck_tracer", expected, answer,
                      "in_axes=-1 names the last axis, and the tracer stores it normalised (as a "
                      "non-negative index); x.shape is the value's shape without that axis.")


def sin_route() -> str:
    """The route ``lax.sin`` of an unmapped argument takes through process_primitive on this JAX."""
    steps = core.trace_routes(jax.vmap(lambda x, y: jax.lax.add(x, jax.lax.sin(y)),
                                       in_axes=(0, None)), jnp.ones((4, 3)), jnp.ones(3))
    return next(s.route for s in steps if s.primitive == "sin")


def selfcheck_route(answer) -> Result:
    """"shortcut" or "rule": what ``lax.sin`` of an unmapped input does under vmap on this JAX."""
    return _selfcheck("selfcheck_route", sin_route(), answer,
                      "up to the split layout, an old-style primitive with only unmapped inputs "
                      "skips its rule (the shortcut); once every rule lives in the one table "
                      "(jax 0.8.2+), sin's rule is called and returns an unmapped result.")


def selfcheck_reduce_axes(answer) -> Result:
    """(axes, output shape) of the reduce_sum in ``vmap(lambda x: jnp.sum(x, axis=1), in_axes=2)``."""
    eqns = core.summarize_fn(jax.vmap(lambda x: jnp.sum(x, axis=1), in_axes=2),
                             jnp.zeros((3, 4, 5)))
    red = next(e for e in eqns if e.primitive == "reduce_sum")
    expected = (red.param("axes"), red.out_shapes[0])
    return _selfcheck("selfcheck_reduce_axes", expected, answer,
                      "only axes at or after the batch dim move up by one; an axis before it "
                      "keeps its number. The batch axis survives the reduction.")


def selfcheck_rowmax_equation(answer, rule) -> Result:
    """(name, input shape, output shape) of the rowmax equation in ``vmap(rowmax)`` of a (4, 3, 5)."""
    name = "selfcheck_rowmax_equation"
    prim = make_primitives().rowmax_p
    install(prim, rule)
    try:
        eqns = core.summarize_fn(jax.vmap(prim.bind), jnp.zeros((4, 3, 5)), recursive=True)
    except Exception as err:
        return result(name, 1, [Finding("your rule", "a batched rowmax", _error(err),
                                        "make check_rowmax_rule pass first.")])
    finally:
        core.unregister_rule(prim)
    mine = [(e.primitive, e.in_shapes[0], e.out_shapes[0]) for e in eqns if e.primitive == "rowmax"]
    if len(mine) != 1:
        return result(name, 1, [Finding("your rule", "one rowmax equation", f"{len(mine)}",
                                        "a rule should bind rowmax once, on the whole batch.")])
    return _selfcheck(name, mine[0], answer,
                      "print jax.make_jaxpr(jax.vmap(P.rowmax_p.bind))(x) and read the rowmax line.")


__all__ = [
    "EXERCISES", "TABLE_NAMES", "Proxy082", "Proxy09", "check_rowmax_rule", "check_scaled_diff_rule",
    "check_softsign_rule", "check_spy", "check_sumsq_rule", "check_table_sizes", "check_which_table",
    "install", "make_primitives", "selfcheck_reduce_axes", "selfcheck_route",
    "selfcheck_rowmax_equation", "selfcheck_tracer", "sin_route", "standin",
]
