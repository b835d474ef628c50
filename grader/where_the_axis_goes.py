"""Lesson 2, "Where the axis goes": the lesson's live tables and the exercises' checks.

Every expected answer is computed from the installed JAX (or, for values, from a NumPy loop over
the examples); nothing JAX can tell us is written down here. Each graded exercise is an
``Exercise`` (``grader.exercise``): ``cases_*`` draws plain-data cases, ``expect_*`` computes the
answer in trusted code, ``observe_*`` runs the student's object and returns plain data, and
``compare_*`` turns the two into a ``Finding`` with the likely misconception.
"""
from __future__ import annotations

import contextlib
import copy
import functools
import inspect

import jax
import jax.numpy as jnp
import numpy as np

from . import core
from .core import _jax
from .exercise import Exercise, canonical, describe, fresh_cases
from .feedback import Finding, Result, result

# ================================================================================================
# Small shared helpers
# ================================================================================================


def prims_of(fn, *args, **kwargs) -> list[str]:
    """Primitive names of ``fn(*args)``'s jaxpr, sub-jaxprs included."""
    return core.primitives(core.summarize_fn(fn, *args, recursive=True, **kwargs))


def canon(axis, ndim):
    """An axis spec in [0, ndim), or None: the form in which two specs can be compared."""
    if axis is None:
        return None
    return axis + ndim if axis < 0 else axis


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


def _array(rng, shape) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


def _pack(x) -> dict:
    """An array as plain data: shape, dtype name and raw bytes."""
    a = np.ascontiguousarray(np.asarray(x))
    return {"shape": tuple(int(d) for d in a.shape), "dtype": str(a.dtype), "data": a.tobytes()}


def _unpack(p) -> np.ndarray:
    return np.frombuffer(p["data"], dtype=np.dtype(p["dtype"])).reshape(p["shape"])


def _close(a, b, tol=1e-4) -> bool:
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=tol, atol=tol))


def _widening_broadcasts(eqns) -> list[tuple]:
    """broadcast_in_dim equations whose output has more elements than their input."""
    return [(e.in_shapes[0], e.out_shapes[0]) for e in eqns
            if e.primitive == "broadcast_in_dim"
            and int(np.prod(e.out_shapes[0])) > int(np.prod(e.in_shapes[0]))]


@contextlib.contextmanager
def watch_matchaxis():
    """Record every call of the installed JAX's ``matchaxis`` as ``(src, dst, sum_match)``.

    vmap's own output handling and the batched custom-VJP backward pass both look ``matchaxis``
    up in the batching module at call time, so replacing the module attribute sees them all.
    """
    module = _jax.batching
    original = module.matchaxis
    signature = inspect.signature(original)   # src, dst, sum_match are named alike in every release
    calls: list[tuple] = []

    def recording(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        a = bound.arguments
        calls.append((a["src"], a["dst"], bool(a["sum_match"])))
        return original(*args, **kwargs)

    module.matchaxis = recording
    try:
        yield calls
    finally:
        module.matchaxis = original


# ================================================================================================
# The lesson's eight calls of mv(A, v) = A @ v  (a live table and a predict-then-check)
# ================================================================================================

def mv(A, v):
    return A @ v


# (in_axes, out_axes, shapes of the stacked arguments). Rows 3 and 4 are one call written with a
# positive and a negative in_axes; rows 5 and 7 differ only in out_axes.
MV_CALLS = (
    ((0, None), 0, ((5, 2, 3), (3,))),
    ((0, None), 1, ((5, 2, 3), (3,))),
    ((1, None), 0, ((2, 5, 3), (3,))),
    ((-2, None), 0, ((2, 5, 3), (3,))),
    ((None, 0), 0, ((2, 3), (5, 3))),
    ((0, 0), 0, ((5, 2, 3), (5, 3))),
    ((None, 0), 1, ((2, 3), (5, 3))),
    ((2, -1), 0, ((2, 3, 5), (3, 5))),
)


def mv_table() -> list[dict]:
    """The eight calls traced on this JAX: result shape and equation list of each."""
    rows = []
    for number, (in_axes, out_axes, shapes) in enumerate(MV_CALLS, start=1):
        g = jax.vmap(mv, in_axes=in_axes, out_axes=out_axes)
        eqns = core.summarize_fn(g, *[jnp.ones(s) for s in shapes])
        out = jax.eval_shape(g, *[jnp.ones(s) for s in shapes])
        rows.append({"row": number, "in_axes": in_axes, "out_axes": out_axes,
                     "A": shapes[0], "v": shapes[1], "shape": tuple(out.shape),
                     "prims": core.primitives(eqns), "eqns": eqns})
    return rows


def format_mv_calls() -> str:
    """The eight calls without their results, for predicting."""
    lines = ["row  in_axes      out_axes  A          v"]
    for number, (in_axes, out_axes, shapes) in enumerate(MV_CALLS, start=1):
        lines.append(f"{number:<4} {str(in_axes):<12} {out_axes:<9} {str(shapes[0]):<10} "
                     f"{shapes[1]}")
    return "\n".join(lines)


def format_mv_table(rows) -> str:
    lines = ["row  in_axes      out_axes  A          v        result   equations"]
    for r in rows:
        lines.append(f"{r['row']:<4} {str(r['in_axes']):<12} {r['out_axes']:<9} "
                     f"{str(r['A']):<10} {str(r['v']):<8} {str(r['shape']):<8} "
                     f"{', '.join(r['prims'])}")
    return "\n".join(lines)


def _mv_hint(row, shape_pred, prims_pred) -> str:
    has_t, said_t = "transpose" in row["prims"], "transpose" in prims_pred
    if prims_pred == row["prims"]:
        return (f"The equations are right; the result's shape is the example's (2,) with the "
                f"batch of 5 inserted where out_axes={row['out_axes']} says.")
    if row["in_axes"][0] is not None and row["in_axes"][0] < 0:
        return ("A negative in_axes counts from the right of that argument: -2 on a rank-3 A "
                "is axis 1, so this row is the same call as the row written with 1.")
    if has_t and not said_t:
        return ("dot_general puts A's free axes first and v's after them; when that leaves the "
                "batch somewhere other than out_axes, vmap's final matchaxis moves it with a "
                "transpose.")
    if said_t and not has_t:
        return ("Here the batch already sits where out_axes asks for it (or dot_general keeps "
                "it in its batch dimensions, which come first), so nothing has to move.")
    return "Trace the batch axis through dot_general: A's free axes come first, then v's."


def selfcheck_mv_table(predictions) -> Result:
    """Compare predicted ``{row: (result_shape, [primitives])}`` with the live table.

    Only the rows you predicted are checked, so you can predict one at a time.
    """
    rows = {r["row"]: r for r in mv_table()}
    predictions = dict(predictions or {})
    findings = []
    for number, pred in sorted(predictions.items(), key=lambda item: str(item[0])):
        row = rows.get(number)
        if row is None:
            findings.append(Finding(f"row {number}", "a row number 1..8", str(number), ""))
            continue
        try:
            shape, prims = tuple(int(d) for d in pred[0]), [str(p) for p in pred[1]]
        except (TypeError, ValueError, IndexError):
            findings.append(Finding(f"row {number}", "(shape, [primitive names])", repr(pred),
                                    "Write each prediction as ((5, 2), ['dot_general'])."))
            continue
        if shape != row["shape"] or prims != row["prims"]:
            findings.append(Finding(
                f"row {number}: vmap(mv, in_axes={row['in_axes']}, out_axes={row['out_axes']})"
                f" on A{row['A']}, v{row['v']}",
                f"{row['shape']} {row['prims']}", f"{shape} {prims}", _mv_hint(row, shape, prims)))
    missing = sorted(set(rows) - set(predictions))
    note = f"not predicted yet: rows {missing}" if missing else ""
    res = result("selfcheck_mv_table", len(predictions), findings, note)
    res.passed = res.passed and not missing
    return res


# ================================================================================================
# Self-checks: dimension_numbers after batching, reduce axes after batching
# ================================================================================================

def dot(a, b):
    return a @ b


# dot(a, b) with a (8,) and b (8, 5): (in_axes, stacked shapes)
DOT_CALLS = (
    ((0, None), ((32, 8), (8, 5))),
    ((0, 0), ((32, 8), (32, 8, 5))),
    ((1, None), ((8, 32), (8, 5))),
    ((None, 2), ((8,), (8, 5, 32))),
)


def format_dot_calls() -> str:
    lines = ["call  in_axes      a          b"]
    for number, (in_axes, shapes) in enumerate(DOT_CALLS, start=1):
        lines.append(f"{number:<5} {str(in_axes):<12} {str(shapes[0]):<10} {shapes[1]}")
    return "\n".join(lines)


def dot_numbers(number: int):
    in_axes, shapes = DOT_CALLS[number - 1]
    eqns = core.summarize_fn(jax.vmap(dot, in_axes=in_axes), *[jnp.ones(s) for s in shapes])
    return next(e.param("dimension_numbers") for e in eqns if e.primitive == "dot_general")


def _answered(answer, numbers) -> tuple[dict, str]:
    """The answers given so far, and a note naming the ones still missing."""
    given = {n: v for n, v in dict(answer or {}).items() if v is not None}
    missing = [n for n in numbers if n not in given]
    return given, (f"not answered yet: {missing}" if missing else "")


def _selfcheck_numbered(name: str, answer, count: int, finding_for) -> Result:
    """A self-check over numbered calls 1..count; ``finding_for(number, got)`` judges one answer.

    Only the calls answered so far are checked; the note names the ones still missing.
    """
    given, note = _answered(answer, range(1, count + 1))
    findings = []
    for number in sorted(given, key=str):
        if not isinstance(number, int) or not 1 <= number <= count:
            findings.append(Finding(f"call {number}", f"a call number 1..{count}", str(number), ""))
            continue
        finding = finding_for(number, _as_int_tree(given[number]))
        if finding is not None:
            findings.append(finding)
    res = result(name, len(given), findings, note)
    res.passed = res.passed and not note
    return res


def selfcheck_dimension_numbers(answer) -> Result:
    """``answer = {call: ((lhs_contract, rhs_contract), (lhs_batch, rhs_batch))}`` for DOT_CALLS.

    Only the calls you answered are checked.
    """
    def finding_for(number, got):
        in_axes, shapes = DOT_CALLS[number - 1]
        expected = dot_numbers(number)
        if got == expected:
            return None
        hint = ("Both operands batched: the batch becomes a batch-dimension pair in the second "
                "half." if None not in in_axes else
                "One operand batched: its batch axis is one more free axis, and the "
                "contracting axis number shifts past it; the batch dimensions stay empty.")
        return Finding(f"call {number}: vmap(dot, in_axes={in_axes}) on "
                       f"a{shapes[0]}, b{shapes[1]}", str(expected), str(got), hint)
    return _selfcheck_numbered("selfcheck_dimension_numbers", answer, len(DOT_CALLS), finding_for)


def _as_int_tree(x):
    if isinstance(x, (list, tuple)):
        return tuple(_as_int_tree(v) for v in x)
    if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
        return int(x)
    return x


# (per-example reduction axis or None for "all", in_axes, stacked shape); per example x is (3, 5)
REDUCE_CALLS = (
    (0, 0, (4, 3, 5)),
    (0, 1, (3, 4, 5)),
    (0, 2, (3, 5, 4)),
    (1, 1, (3, 4, 5)),
    (None, 1, (3, 4, 5)),
)


def format_reduce_calls() -> str:
    lines = ["call  per example               in_axes  stacked x"]
    for number, (axis, in_axes, shape) in enumerate(REDUCE_CALLS, start=1):
        lines.append(f"{number:<5} {f'jnp.sum(x, axis={axis})':<25} {in_axes:<8} {shape}")
    return "\n".join(lines)


def reduce_axes(number: int):
    axis, in_axes, shape = REDUCE_CALLS[number - 1]
    eqns = core.summarize_fn(jax.vmap(lambda x: jnp.sum(x, axis=axis), in_axes=in_axes),
                             jnp.ones(shape))
    return next(e.param("axes") for e in eqns if e.primitive == "reduce_sum")


def selfcheck_reduce_axes(answer) -> Result:
    """``answer = {call: axes tuple}``: reduce_sum's ``axes`` after batching, for REDUCE_CALLS.

    Only the calls you answered are checked.
    """
    def finding_for(number, got):
        axis, in_axes, shape = REDUCE_CALLS[number - 1]
        expected = reduce_axes(number)
        if got == expected:
            return None
        return Finding(
            f"call {number}: vmap(lambda x: jnp.sum(x, axis={axis}), in_axes={in_axes}) on "
            f"{shape}", str(expected), str(got),
            "Number the axes of the stacked array: every per-example axis at or after the "
            "batch axis moves one to the right; the batch axis itself is never reduced.")
    return _selfcheck_numbered("selfcheck_reduce_axes", answer, len(REDUCE_CALLS), finding_for)


# ================================================================================================
# Exercise 1: my_matchaxis(src, dst, x, size, sum_match=False)
# ================================================================================================

def matchaxis_kind(src, dst, sum_match) -> str:
    """Which of matchaxis's cases applies, tested in JAX's order."""
    if src == dst:
        return "same"
    if isinstance(src, int) and isinstance(dst, int):
        return "move"
    if src is None:
        return "broadcast"
    return "sum" if sum_match else "error"


def matchaxis_input(case) -> np.ndarray:
    """The array of a case: distinct, exactly representable values, so any misplacement shows."""
    n = int(np.prod(case["shape"], dtype=int))
    return (np.arange(n, dtype=np.float32) * 0.5 + 1.0).reshape(case["shape"])


def _matchaxis_case(rng, rank=None) -> dict:
    rank = int(rng.integers(0, 4)) if rank is None else rank
    shape = tuple(int(d) for d in rng.integers(2, 5, size=rank))
    src = None if rank == 0 or rng.random() < 0.35 else int(rng.integers(0, rank))
    out_rank = rank if src is not None else rank + 1
    dst = None if rng.random() < 0.3 else int(rng.integers(-out_rank, out_rank))
    size = shape[src] if src is not None else int(rng.integers(1, 6))
    return {"shape": shape, "src": src, "dst": dst, "size": size,
            "sum_match": bool(rng.random() < 0.5)}


VISIBLE_MATCHAXIS = (
    {"shape": (2, 3), "src": 1, "dst": 1, "size": 3, "sum_match": False},
    {"shape": (4, 2, 3), "src": 0, "dst": 2, "size": 4, "sum_match": False},
    {"shape": (2, 3, 4), "src": 2, "dst": -3, "size": 4, "sum_match": False},
    {"shape": (2, 3), "src": None, "dst": 1, "size": 4, "sum_match": False},
    {"shape": (3,), "src": None, "dst": -1, "size": 2, "sum_match": False},
    {"shape": (4, 3), "src": 0, "dst": None, "size": 4, "sum_match": True},
    {"shape": (4, 3), "src": 0, "dst": None, "size": 4, "sum_match": False},
    {"shape": (2, 3), "src": None, "dst": None, "size": 5, "sum_match": False},
)


def cases_matchaxis(rng, hidden: bool) -> list[dict]:
    if not hidden:
        return [dict(c) for c in VISIBLE_MATCHAXIS]
    cases = fresh_cases(lambda i: _matchaxis_case(rng), VISIBLE_MATCHAXIS, 24)
    kinds = {matchaxis_kind(c["src"], c["dst"], c["sum_match"]) for c in cases}
    for kind in ("move", "broadcast", "sum", "error"):       # every case kind, every draw
        if kind not in kinds:
            cases += fresh_cases(lambda i: _matchaxis_case_of(rng, kind),
                                 [*VISIBLE_MATCHAXIS, *cases], 1)
    return cases


def _matchaxis_case_of(rng, kind: str) -> dict | None:
    case = _matchaxis_case(rng, rank=int(rng.integers(1, 4)))
    return case if matchaxis_kind(case["src"], case["dst"], case["sum_match"]) == kind else None


def _outcome_plain(fn) -> dict:
    try:
        out = fn()
    except Exception as err:  # raising *is* an outcome here
        return {"raised": True, "error": f"{type(err).__name__}: {err}"[:300]}
    return {"raised": False, **_pack(out)}


def expect_matchaxis(case) -> dict:
    # device_put, not jnp.asarray: JAX 0.10's asarray compiles a copy for every new shape.
    x = jax.device_put(matchaxis_input(case))
    return _outcome_plain(lambda: core.matchaxis(case["src"], case["dst"], x, case["size"],
                                                 case["sum_match"]))


def observe_matchaxis(my_matchaxis, case) -> dict:
    x = jax.device_put(matchaxis_input(case))
    return _outcome_plain(lambda: my_matchaxis(case["src"], case["dst"], x, case["size"],
                                               sum_match=case["sum_match"]))


def _shape_str(o) -> str:
    if o["raised"]:
        return f"raised {o['error']}"
    return f"array of shape {tuple(o['shape'])}"


def _matchaxis_hint(case, exp, got) -> str:
    src, dst, size = case["src"], case["dst"], case["size"]
    kind = matchaxis_kind(src, dst, case["sum_match"])
    x = matchaxis_input(case)
    if exp["raised"]:
        return ("Mapped (src is an int) to not mapped (dst is None) without sum_match has no "
                "meaning: JAX raises here. This is the error out_axes=None gives for an output "
                "that really was batched.")
    if got["raised"]:
        return {"same": "src == dst comes first, and None == None counts: nothing to do.",
                "sum": "With sum_match=True a mapped axis going to 'not mapped' is summed away: "
                       "x.sum(src).",
                "broadcast": "Not mapped to mapped is a broadcast: insert an axis of length "
                             "size at dst.",
                "move": "Two different ints: one moveaxis."}[kind] + " Your function raised."
    shape, want = tuple(got["shape"]), tuple(exp["shape"])
    if shape == want and got["dtype"] != exp["dtype"]:
        return f"Right shape but dtype {got['dtype']}: keep x's dtype ({exp['dtype']})."
    if kind == "same":
        return "src == dst: the axis is already where it was asked for, so return x unchanged."
    if kind == "move":
        if shape != want and shape == np.swapaxes(x, src, dst).shape:
            return ("swapaxes exchanges two axes; matchaxis uses moveaxis, which takes the axis "
                    "out and reinserts it at dst, shifting the axes in between.")
        if shape == want and got["data"] == x.reshape(want).tobytes():
            return "reshape keeps the element order; moving an axis needs moveaxis (a transpose)."
        return "Two different ints: move axis src to position dst (jnp.moveaxis)."
    if kind == "broadcast":
        if dst < 0 and dst + x.ndim >= 0 and shape != want and \
                shape == tuple(np.insert(np.array(x.shape, dtype=int), dst + x.ndim, size)):
            return ("A negative dst counts from the end of the RESULT, which has one more axis "
                    "than x: canonicalise it with ndim + 1, as JAX does.")
        return f"Not mapped to mapped: insert an axis of length size={size} at position dst."
    return "With sum_match=True, sum over the mapped axis: x.sum(src)."


def compare_matchaxis(case, exp, got) -> Finding | None:
    if exp["raised"] and got["raised"]:
        return None
    if not exp["raised"] and not got["raised"] and tuple(exp["shape"]) == tuple(got["shape"]) \
            and exp["dtype"] == got["dtype"] and exp["data"] == got["data"]:
        return None
    expected = "raises (mapped output, unmapped destination)" if exp["raised"] \
        else _shape_str(exp)
    if not exp["raised"] and not got["raised"] and tuple(exp["shape"]) == tuple(got["shape"]):
        expected += " (same shape, different elements)"
    return Finding(describe(case), expected, _shape_str(got), _matchaxis_hint(case, exp, got))


MATCHAXIS = Exercise("check_matchaxis", ("my_matchaxis",), cases_matchaxis, expect_matchaxis,
                     observe_matchaxis, compare_matchaxis,
                     "my_matchaxis(src, dst, x, size, sum_match) should return an array or raise.")


def check_matchaxis(my_matchaxis, hidden: bool = False) -> Result:
    return MATCHAXIS.check(my_matchaxis, hidden=hidden)


# ================================================================================================
# Exercise 2: choose_axes(layout) -> (in_axes, out_axes)
# ================================================================================================

# The functions a layout may name, with their per-example argument ranks and a NumPy reference.
FUNCTIONS = {
    "scale": (lambda x: jnp.sin(x) * 2.0, lambda x: np.sin(x) * 2.0),
    "mul": (lambda x, y: x * y + x, lambda x, y: x * y + x),
    "mv": (lambda A, v: A @ v, lambda A, v: A @ v),
    "colsum": (lambda x: jnp.sum(x, axis=0), lambda x: x.sum(axis=0)),
    "pair": (lambda x, y: (jnp.sin(y), x * 2.0), lambda x, y: (np.sin(y), x * 2.0)),
}


def _example_dims(rng, fn) -> tuple[tuple[int, ...], ...]:
    """Per-example shapes of the arguments of ``fn`` (sizes 2..5; the batch is 6..9)."""
    d = [int(v) for v in rng.permutation([2, 3, 4, 5])]
    if fn == "scale":
        return (tuple(d[:int(rng.integers(1, 4))]),)
    if fn == "mul":
        shape = tuple(d[:int(rng.integers(1, 3))])
        return (shape, shape)
    if fn == "mv":
        return ((d[0], d[1]), (d[1],))
    if fn == "colsum":
        return (tuple(d[:int(rng.integers(2, 4))]),)
    return ((d[0],), (d[1],))                    # pair


def stacked_shape(dims, batch, size) -> tuple[int, ...]:
    """The shape of an argument as the caller holds it: ``dims`` with the batch axis inserted."""
    if batch is None:
        return tuple(dims)
    shape = list(dims)
    shape.insert(canon(batch, len(dims) + 1), size)
    return tuple(shape)


def layout_args(case) -> list[np.ndarray]:
    rng = np.random.default_rng(case["_seed"])
    return [_array(rng, stacked_shape(dims, a["batch"], case["B"]))
            for dims, a in zip(case["dims"], case["layout"]["args"])]


def _layout_in_axes(layout) -> tuple:
    return tuple(a["batch"] for a in layout["args"])


def _natural(fn, in_axes, args):
    """Where the primitives leave each output's batch axis: read off the output tracers."""
    seen = []

    def spy(*xs):
        out = fn(*xs)
        seen[:] = [core.view(o).batch_dim for o in jax.tree_util.tree_leaves(out)]
        return out

    jax.eval_shape(jax.vmap(spy, in_axes=in_axes), *args)
    return tuple(seen)


def _spec(values, fn_name):
    """One spec per output as vmap takes it: a tuple for the two-output function."""
    return tuple(values) if fn_name == "pair" else values[0]


def _draw_layout_case(rng) -> dict | None:
    fn = str(rng.choice(list(FUNCTIONS)))
    dims = _example_dims(rng, fn)
    batches = [None if rng.random() < 0.3 else int(rng.integers(0, len(d) + 1)) for d in dims]
    if all(b is None for b in batches):
        return None
    batches = [b - (len(d) + 1) if b is not None and rng.random() < 0.3 else b
               for b, d in zip(batches, dims)]
    size = int(rng.integers(6, 10))
    case = {"layout": {"fn": fn, "args": [{"rank": len(d) + (b is not None), "batch": b}
                                          for d, b in zip(dims, batches)], "out": "free"},
            "dims": dims, "B": size, "_seed": int(rng.integers(0, 2**31))}
    natural = _natural(FUNCTIONS[fn][0], tuple(batches), layout_args(case))
    g = jax.vmap(FUNCTIONS[fn][0], in_axes=tuple(batches), out_axes=_spec(natural, fn))
    if "transpose" in prims_of(g, *layout_args(case)):
        return None                               # no spec avoids a move: not a fair question
    if rng.random() < 0.4:                        # a required position instead of a free one
        out_ranks = [len(np.shape(o)) for o in jax.eval_shape(
            lambda *a: jax.tree_util.tree_leaves(FUNCTIONS[fn][0](*a)),
            *[jnp.ones(d) for d in dims])]
        req = [n if n is None or rng.random() < 0.6 else n - (r + 1)
               for n, r in zip(natural, out_ranks)]
        case["layout"]["out"] = _spec(req, fn)
    return case


VISIBLE_LAYOUTS = (
    ("scale", ((3, 4),), (1,), "free"),
    ("mul", ((2, 3), (2, 3)), (0, None), 0),
    ("mv", ((2, 3), (3,)), (None, 0), "free"),
    ("mv", ((2, 3), (3,)), (-1, None), "free"),
    ("colsum", ((4, 3, 2),), (2,), "free"),
    ("pair", ((3,), (4,)), (0, None), "free"),
)


def _visible_layout_cases() -> list[dict]:
    cases = []
    for i, (fn, dims, batches, out) in enumerate(VISIBLE_LAYOUTS):
        cases.append({"layout": {"fn": fn, "args": [{"rank": len(d) + (b is not None), "batch": b}
                                                    for d, b in zip(dims, batches)], "out": out},
                      "dims": dims, "B": 7, "_seed": 100 + i})
    return cases


def cases_choose_axes(rng, hidden: bool) -> list[dict]:
    if not hidden:
        return _visible_layout_cases()
    return fresh_cases(lambda i: _draw_layout_case(rng), _visible_layout_cases(), 10,
                       key=lambda c: canonical((c["layout"], c["dims"])))


def expect_choose_axes(case) -> dict:
    """Each output stacked over the examples with the batch axis in front (a NumPy loop)."""
    fn = case["layout"]["fn"]
    reference = FUNCTIONS[fn][1]
    args = layout_args(case)
    batches = _layout_in_axes(case["layout"])
    per_example = []
    for b in range(case["B"]):
        xs = [a if ax is None else np.take(a, b, axis=ax) for a, ax in zip(args, batches)]
        out = reference(*xs)
        per_example.append(out if isinstance(out, tuple) else (out,))
    outs = [np.stack([np.asarray(o[i], dtype=np.float32) for o in per_example])
            for i in range(len(per_example[0]))]
    natural = _natural(FUNCTIONS[fn][0], batches, [jax.device_put(a) for a in args])
    return {"outs": [_pack(o) for o in outs], "natural": natural}


@functools.lru_cache(maxsize=512)
def _batched_layout(fn_name: str, in_axes, out_axes):
    """The vmapped layout function under jit, one per spec: each case compiles one program rather
    than one per primitive, and checking the same answer again compiles nothing."""
    return jax.jit(jax.vmap(FUNCTIONS[fn_name][0], in_axes=in_axes, out_axes=out_axes))


def observe_choose_axes(choose_axes, case) -> dict:
    answer = choose_axes(copy.deepcopy(case["layout"]))
    try:
        in_axes, out_axes = answer
        in_axes, out_axes = plain_spec(in_axes), plain_spec(out_axes)
    except (TypeError, ValueError) as err:
        return {"bad_answer": f"{type(answer).__name__}: {str(err)[:100]}"}
    fn = FUNCTIONS[case["layout"]["fn"]][0]
    args = [jax.device_put(a) for a in layout_args(case)]
    try:
        g = jax.vmap(fn, in_axes=in_axes, out_axes=out_axes)
        eqns = core.summarize_fn(g, *args, recursive=True)
        outs = _batched_layout(case["layout"]["fn"], in_axes, out_axes)(*args)
    except Exception as err:  # a spec vmap refuses is an observation
        return {"in_axes": in_axes, "out_axes": out_axes,
                "vmap_error": f"{type(err).__name__}: {err}"[:300]}
    return {"in_axes": in_axes, "out_axes": out_axes,
            "outs": [_pack(o) for o in jax.tree_util.tree_leaves(outs)],
            "prims": core.primitives(eqns), "widened": _widening_broadcasts(eqns)}


def _per_output(spec, n) -> tuple:
    """A student's out_axes as one entry per output (vmap broadcasts a single int or None)."""
    if isinstance(spec, tuple):
        return spec if len(spec) == n else (spec + (None,) * n)[:n]
    return (spec,) * n


def _in_axes_mismatch(case, in_axes) -> int | None:
    """Index of the first argument whose batch axis the student's in_axes misplaces."""
    args = case["layout"]["args"]
    spec = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args)
    if len(spec) != len(args):
        return 0
    for i, (s, a) in enumerate(zip(spec, args)):
        if s is not None and not isinstance(s, int):
            return i
        if canon(s, a["rank"]) != canon(a["batch"], a["rank"]):
            return i
    return None


def compare_choose_axes(case, exp, got) -> Finding | None:
    layout, where = case["layout"], describe({"layout": case["layout"], "dims": case["dims"],
                                              "B": case["B"]})
    if "bad_answer" in got:
        return Finding(where, "a pair (in_axes, out_axes) of ints, None and tuples",
                       got["bad_answer"], "Return exactly two things: in_axes, out_axes.")
    spec_text = f"in_axes={got['in_axes']}, out_axes={got['out_axes']}"
    bad_arg = _in_axes_mismatch(case, got["in_axes"])
    if bad_arg is not None:
        a = layout["args"][bad_arg]
        return Finding(where, f"in_axes that say where each argument's batch axis IS "
                              f"(argument {bad_arg}: {a['batch']})", spec_text,
                       "in_axes describes the data you hand to vmap, not where you would like the "
                       "batch to be; a negative entry counts from the right of that argument.")
    if "vmap_error" in got:
        hint = ("out_axes=None is only allowed for an output that does not depend on a batched "
                "input; this one does." if "out_axes" in got["vmap_error"] else
                "vmap refused the spec; read its message.")
        return Finding(where, "a spec vmap accepts", f"{spec_text} -> {got['vmap_error']}", hint)
    outs = [_unpack(p) for p in exp["outs"]]
    n = len(outs)
    student_out = _per_output(got["out_axes"], n)
    required = layout["out"]
    natural = exp["natural"]
    for i, (ref, packed) in enumerate(zip(outs, got["outs"])):
        mine = _unpack(packed)
        o = student_out[i] if i < len(student_out) else None
        if required != "free":
            req = _per_output(required, n)[i]
            want = ref[0] if req is None else np.moveaxis(ref, 0, canon(req, ref.ndim))
            if not _close(mine, want):
                return Finding(where, f"output {i} with its batch axis at {req}",
                               f"{spec_text} -> shape {mine.shape}",
                               "out_axes is where the caller wants the batch axis; the layout's "
                               "'out' says where that is.")
            continue
        batched = (np.moveaxis(mine, canon(o, mine.ndim), 0) if o is not None and mine.ndim
                   else None)
        if o is None:
            if not all(_close(mine, r) for r in ref):
                return Finding(where, f"output {i} batched (it depends on a batched input)",
                               f"{spec_text} -> unbatched output", "")
        elif batched is None or not _close(batched, ref):
            return Finding(where, f"output {i}: the per-example results, stacked",
                           f"{spec_text} -> different values (shape {mine.shape})",
                           "Check in_axes against the layout: the values of the loop must come "
                           "back.")
    if "transpose" in got["prims"]:
        leave = natural[0] if len(natural) == 1 else natural
        return Finding(where, f"no transpose (the primitives leave the batch at {leave})",
                       f"{spec_text} -> {got['prims']}",
                       "out_axes asks for the batch somewhere the primitives did not put it, so "
                       "vmap's matchaxis moves it with a transpose (rows 5 and 7 of the mv "
                       "table). Follow the batch axis through the function instead.")
    if got["widened"]:
        return Finding(where, "no output widened to the batch size",
                       f"{spec_text} -> broadcast_in_dim {got['widened'][0][0]} -> "
                       f"{got['widened'][0][1]}",
                       "An output that never depended on a batched input was given a batch axis "
                       "(matchaxis's broadcast case); out_axes=None keeps it unmapped.")
    return None


CHOOSE_AXES = Exercise("check_choose_axes", ("choose_axes",), cases_choose_axes,
                       expect_choose_axes, observe_choose_axes, compare_choose_axes,
                       "choose_axes(layout) should return (in_axes, out_axes).")


def check_choose_axes(choose_axes, hidden: bool = False) -> Result:
    return CHOOSE_AXES.check(choose_axes, hidden=hidden)


# ================================================================================================
# Exercise 3: pairwise(x, y, order="ij") by nested vmaps, one dot_general
# ================================================================================================

def _pair_inputs(case):
    rng = np.random.default_rng(case["_seed"])
    return _array(rng, (case["n"], case["d"])), _array(rng, (case["m"], case["d"]))


def cases_pairwise(rng, hidden: bool) -> list[dict]:
    if not hidden:
        return [{"n": 3, "m": 5, "d": 4, "order": "ij", "_seed": 1},
                {"n": 3, "m": 5, "d": 4, "order": "ji", "_seed": 2}]
    return fresh_cases(lambda i: _pair_case(rng, "ij" if i % 2 == 0 else "ji"),
                       cases_pairwise(rng, False), 4)


def _pair_case(rng, order: str) -> dict:
    n, m, d = (int(v) for v in rng.choice(np.arange(2, 12), size=3, replace=False))
    return {"n": n, "m": m, "d": d, "order": order, "_seed": int(rng.integers(2**31))}


def expect_pairwise(case) -> dict:
    x, y = _pair_inputs(case)
    s = x @ y.T
    return _pack(s if case["order"] == "ij" else s.T)


def observe_pairwise(pairwise, case) -> dict:
    x, y = (jax.device_put(a) for a in _pair_inputs(case))
    order = case["order"]
    out = pairwise(x, y, order=order)
    eqns = core.summarize_fn(lambda a, b: pairwise(a, b, order=order), x, y, recursive=True)
    return {**_pack(out), "prims": core.primitives(eqns), "widened": _widening_broadcasts(eqns)}


def compare_pairwise(case, exp, got) -> Finding | None:
    where = describe(case)
    want, mine = _unpack(exp), _unpack(got)
    if not _close(mine, want):
        other = want.T
        hint = ("That is the other order: with order='ji' the result's first axis runs over y."
                if _close(mine, other) else
                "S[i, j] = x[i] . y[j]: the outer vmap makes the result's first axis.")
        return Finding(where, f"scores of shape {want.shape}", f"shape {mine.shape}"
                       + (" (values differ)" if mine.shape == want.shape else ""), hint)
    count = got["prims"].count("dot_general")
    if count != 1:
        return Finding(where, "exactly one dot_general", f"{count}: {got['prims']}",
                       "Let vmap do the pairing: the pair function should be a dot (a @ b), and "
                       "two nested vmaps fold every pair into one dot_general." if count == 0 else
                       "One dot_general covers all pairs; do not loop or call per row.")
    if "transpose" in got["prims"]:
        return Finding(where, "no transpose", str(got["prims"]),
                       "dot_general lays out the left operand's free axis first. Swapping the "
                       "nesting order alone leaves the batch axes in the wrong order and vmap "
                       "transposes at the end; make the array that indexes the result's first "
                       "axis the LEFT operand of the dot.")
    if got["widened"]:
        return Finding(where, "no operand widened to the batch size",
                       f"broadcast_in_dim {got['widened'][0][0]} -> {got['widened'][0][1]}",
                       "The argument that does not vary in a vmap should get in_axes=None; it is "
                       "never copied per example.")
    return None


PAIRWISE = Exercise("check_pairwise", ("pairwise",), cases_pairwise, expect_pairwise,
                    observe_pairwise, compare_pairwise,
                    "pairwise(x, y, order='ij') should return the (n, m) or (m, n) scores.")


def check_pairwise(pairwise, hidden: bool = False) -> Result:
    return PAIRWISE.check(pairwise, hidden=hidden)


# ================================================================================================
# Exercise 4: score_batch(w, xs) without materialising w per example
# ================================================================================================

def _score_inputs(case):
    rng = np.random.default_rng(case["_seed"])
    w_shape = (case["d"],) if case["k"] is None else (case["d"], case["k"])
    return _array(rng, w_shape), _array(rng, (case["B"], case["d"]))


def cases_score_batch(rng, hidden: bool) -> list[dict]:
    if not hidden:
        return [{"d": 100, "k": None, "B": 8, "_seed": 3},
                {"d": 60, "k": 5, "B": 8, "_seed": 4}]
    return fresh_cases(lambda i: _score_case(rng, with_k=i % 2 == 1),
                       cases_score_batch(rng, False), 4)


def _score_case(rng, with_k: bool) -> dict:
    d, B, k = int(rng.integers(20, 200)), int(rng.integers(3, 17)), int(rng.integers(2, 9))
    return {"d": d, "k": k if with_k else None, "B": B, "_seed": int(rng.integers(2**31))}


def expect_score_batch(case) -> dict:
    w, xs = _score_inputs(case)
    return _pack(np.tanh(xs @ w))


def observe_score_batch(score_batch, case) -> dict:
    w, xs = (jax.device_put(a) for a in _score_inputs(case))
    out = score_batch(w, xs)
    eqns = core.summarize_fn(score_batch, w, xs, recursive=True)
    return {**_pack(out), "eqns": [(e.primitive, e.in_shapes, e.out_shapes) for e in eqns]}


def _materialised(case, eqns):
    """The first equation whose output is as large as a per-example copy of w."""
    w_size = case["d"] * (case["k"] or 1)
    for prim, ins, outs in eqns:
        for shape in outs:
            if case["B"] in shape and int(np.prod(shape)) >= case["B"] * w_size:
                return prim, ins, shape
    return None


def compare_score_batch(case, exp, got) -> Finding | None:
    where = describe(case)
    want, mine = _unpack(exp), _unpack(got)
    if not _close(mine, want):
        return Finding(where, f"tanh(x @ w) per example, shape {want.shape}",
                       f"shape {mine.shape}" + (" (values differ)" if mine.shape == want.shape
                                                else ""),
                       "Each row x of xs scores as tanh(x @ w); the batch axis comes first.")
    found = _materialised(case, got["eqns"])
    if found is not None:
        prim, ins, shape = found
        hint = ("You broadcast w to the batch yourself; pass it with in_axes=None instead and it "
                "stays the size it is." if prim == "broadcast_in_dim" else
                "An elementwise product of w with each example builds a copy of w's size per "
                "example before summing; a dot (x @ w) contracts directly, and dot_general takes "
                "the unmapped w as it is.")
        return Finding(where, f"no equation with an output of B x w.size elements",
                       f"{prim} {ins} -> {shape}", hint)
    return None


SCORE_BATCH = Exercise("check_score_batch", ("score_batch",), cases_score_batch,
                       expect_score_batch, observe_score_batch, compare_score_batch,
                       "score_batch(w, xs) should return one score (or k scores) per row of xs.")


def check_score_batch(score_batch, hidden: bool = False) -> Result:
    return SCORE_BATCH.check(score_batch, hidden=hidden)


# The judge finds the graded exercises here, keyed by the grade cells' ids.
EXERCISES = {
    "l2_matchaxis": MATCHAXIS,
    "l2_choose_axes": CHOOSE_AXES,
    "l2_pairwise": PAIRWISE,
    "l2_score_batch": SCORE_BATCH,
}
