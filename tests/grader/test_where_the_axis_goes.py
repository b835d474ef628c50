"""Lesson 2's checks: the reference passes, realistic mistakes fail with the right hint.

Runs on both JAX versions of the course (``.venv`` and ``.venv-jax0438``).
"""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from grader import where_the_axis_goes as L2
from grader.viz import axis_flow


# ---- reference solutions (the exercise notebook's) ----------------------------------------------

def my_matchaxis(src, dst, x, size, sum_match=False):
    if src == dst:
        return x
    if isinstance(src, int) and isinstance(dst, int):
        return jnp.moveaxis(x, src, dst)
    if src is None:
        axis = dst + x.ndim + 1 if dst < 0 else dst
        return jnp.broadcast_to(jnp.expand_dims(x, axis), x.shape[:axis] + (size,) + x.shape[axis:])
    if sum_match:
        return x.sum(src)
    raise ValueError("mapped output, unmapped destination")


def choose_axes(layout):
    args = layout["args"]
    in_axes = tuple(a["batch"] for a in args)
    if layout["out"] != "free":
        return in_axes, layout["out"]
    pos = [None if a["batch"] is None else a["batch"] % a["rank"] for a in args]
    fn = layout["fn"]
    if fn in ("scale", "mul"):
        out = next(p for p in pos if p is not None)
    elif fn == "mv":
        A, v = pos
        out = 0 if (A is not None and v is not None) or A == 0 else 1
    elif fn == "colsum":
        out = max(pos[0] - 1, 0)
    else:
        out = (pos[1], pos[0])
    return in_axes, out


def pairwise(x, y, order="ij"):
    grid = jax.vmap(jax.vmap(lambda a, b: a @ b, in_axes=(None, 0)), in_axes=(0, None))
    return grid(x, y) if order == "ij" else grid(y, x)


def score_batch(w, xs):
    return jax.vmap(lambda w, x: jnp.tanh(x @ w), in_axes=(None, 0))(w, xs)


REFERENCE = [(L2.check_matchaxis, my_matchaxis), (L2.check_choose_axes, choose_axes),
             (L2.check_pairwise, pairwise), (L2.check_score_batch, score_batch)]


def hints(res):
    return " ".join(f.hint for f in res.findings)


# ---- the reference passes, visible and hidden ---------------------------------------------------

@pytest.mark.parametrize("check, answer", REFERENCE, ids=lambda v: getattr(v, "__name__", ""))
def test_reference_passes_visible_and_hidden(check, answer):
    assert check(answer).passed, check(answer).summary()
    hidden = check(answer, hidden=True)
    assert hidden.passed, hidden.summary()


def test_every_exercise_is_registered_for_the_judge():
    assert set(L2.EXERCISES) == {"l2_matchaxis", "l2_choose_axes", "l2_pairwise", "l2_score_batch"}
    assert [e.needs for e in L2.EXERCISES.values()] == [
        ("my_matchaxis",), ("choose_axes",), ("pairwise",), ("score_batch",)]


# ---- hidden cases are fresh ---------------------------------------------------------------------

@pytest.mark.parametrize("cases", [L2.cases_matchaxis, L2.cases_choose_axes, L2.cases_pairwise,
                                   L2.cases_score_batch])
def test_hidden_cases_differ_from_visible_and_between_draws(cases):
    visible = cases(np.random.default_rng(0), False)
    one = cases(np.random.default_rng(), True)
    two = cases(np.random.default_rng(), True)
    assert cases(np.random.default_rng(1), False) == visible           # visible cases are fixed
    strip = lambda c: repr({k: v for k, v in c.items() if k != "_seed"})
    assert not {strip(c) for c in one} & {strip(c) for c in visible}
    assert [strip(c) for c in one] != [strip(c) for c in two]


def test_hidden_matchaxis_cases_cover_every_kind():
    for _ in range(3):
        kinds = {L2.matchaxis_kind(c["src"], c["dst"], c["sum_match"])
                 for c in L2.cases_matchaxis(np.random.default_rng(), True)}
        assert {"move", "broadcast", "sum", "error"} <= kinds


# ---- expectations come from JAX -----------------------------------------------------------------

def test_matchaxis_expectation_is_what_vmap_does():
    case = {"shape": (4, 2, 3), "src": 0, "dst": 2, "size": 4, "sum_match": False}
    x = L2.matchaxis_input(case)
    want = np.asarray(jax.vmap(lambda r: r, in_axes=0, out_axes=2)(x))
    exp = L2.expect_matchaxis(case)
    assert exp["shape"] == want.shape and exp["data"] == want.tobytes()
    err = L2.expect_matchaxis({**case, "dst": None})
    assert err["raised"]


def test_layout_expectation_matches_vmap():
    case = L2.cases_choose_axes(np.random.default_rng(0), False)[2]     # mv, v batched
    args = L2.layout_args(case)
    exp = L2.expect_choose_axes(case)
    got = np.asarray(jax.vmap(L2.FUNCTIONS["mv"][0], in_axes=(None, 0))(*args))
    assert np.allclose(L2._unpack(exp["outs"][0]), got, atol=1e-5)
    assert exp["natural"] == (1,)


# ---- realistic mistakes, with the hint that names them ------------------------------------------

def swapaxes_matchaxis(src, dst, x, size, sum_match=False):
    if isinstance(src, int) and isinstance(dst, int) and src != dst:
        return jnp.swapaxes(x, src, dst)
    return my_matchaxis(src, dst, x, size, sum_match)


def ndim_matchaxis(src, dst, x, size, sum_match=False):
    if src is None and isinstance(dst, int):
        axis = dst + x.ndim if dst < 0 else dst          # forgets the result's extra axis
        return jnp.broadcast_to(jnp.expand_dims(x, axis), x.shape[:axis] + (size,) + x.shape[axis:])
    return my_matchaxis(src, dst, x, size, sum_match)


def always_sum_matchaxis(src, dst, x, size, sum_match=False):
    if isinstance(src, int) and dst is None:
        return x.sum(src)
    return my_matchaxis(src, dst, x, size, sum_match)


def none_raises_matchaxis(src, dst, x, size, sum_match=False):
    if dst is None:
        raise ValueError("not mapped")
    return my_matchaxis(src, dst, x, size, sum_match)


def reshape_matchaxis(src, dst, x, size, sum_match=False):
    if isinstance(src, int) and isinstance(dst, int) and src != dst:
        return x.reshape(jnp.moveaxis(x, src, dst).shape)
    return my_matchaxis(src, dst, x, size, sum_match)


@pytest.mark.parametrize("wrong, words", [
    (swapaxes_matchaxis, "swapaxes"),
    (ndim_matchaxis, "ndim + 1"),
    (always_sum_matchaxis, "raises"),
    (none_raises_matchaxis, "None == None"),
    (reshape_matchaxis, "reshape"),
])
def test_matchaxis_mistakes(wrong, words):
    res = L2.check_matchaxis(wrong)
    assert not res.passed and words in hints(res), res.summary()


def default_out_axes(layout):
    in_axes, _ = choose_axes(layout)
    return in_axes, 0 if layout["fn"] != "pair" else (0, 0)


def front_in_axes(layout):
    _, out = choose_axes(layout)
    return tuple(0 for _ in layout["args"]), out


def broadcasts_unbatched(layout):
    in_axes, out = choose_axes(layout)
    if layout["fn"] == "pair":
        out = tuple(0 if o is None else o for o in out)
    return in_axes, out


def test_choose_axes_default_out_axes_costs_a_transpose():
    res = L2.check_choose_axes(default_out_axes)
    assert not res.passed and "transpose" in hints(res), res.summary()


def test_choose_axes_in_axes_must_describe_the_data():
    res = L2.check_choose_axes(front_in_axes)
    assert not res.passed and "in_axes describes the data" in hints(res), res.summary()


def test_choose_axes_unbatched_output_should_stay_unmapped():
    res = L2.check_choose_axes(broadcasts_unbatched)
    assert not res.passed and "out_axes=None keeps it unmapped" in hints(res), res.summary()


def test_choose_axes_bad_answer_shape():
    res = L2.check_choose_axes(lambda layout: 0)
    assert not res.passed and "exactly two things" in hints(res)


def swapped_nesting(x, y, order="ij"):
    inner = (None, 0) if order == "ij" else (0, None)
    outer = (0, None) if order == "ij" else (None, 0)
    return jax.vmap(jax.vmap(lambda a, b: a @ b, in_axes=inner), in_axes=outer)(x, y)


def elementwise_pair(x, y, order="ij"):
    grid = jax.vmap(jax.vmap(lambda a, b: jnp.sum(a * b), in_axes=(None, 0)), in_axes=(0, None))
    return grid(x, y) if order == "ij" else grid(y, x)


def ignores_order(x, y, order="ij"):
    return pairwise(x, y)


def widened_operand(x, y, order="ij"):
    ys = jnp.broadcast_to(y, (x.shape[0],) + y.shape)
    grid = jax.vmap(jax.vmap(lambda a, b: a @ b, in_axes=(None, 0)), in_axes=(0, 0))
    out = grid(x, ys)
    return out if order == "ij" else pairwise(x, y, "ji")


@pytest.mark.parametrize("wrong, words", [
    (swapped_nesting, "LEFT operand"),
    (elementwise_pair, "dot"),
    (ignores_order, "other order"),
    (widened_operand, "in_axes=None"),
])
def test_pairwise_mistakes(wrong, words):
    res = L2.check_pairwise(wrong)
    assert not res.passed and words in hints(res), res.summary()


def naive_score_batch(w, xs):
    def naive(w, x):
        return jnp.tanh((w * x.reshape((-1,) + (1,) * (w.ndim - 1))).sum(axis=0))
    return jax.vmap(naive, in_axes=(None, 0))(w, xs)


def copied_weight(w, xs):
    ws = jnp.broadcast_to(w, (xs.shape[0],) + w.shape)
    return jax.vmap(lambda w, x: jnp.tanh(x @ w))(ws, xs)


def no_tanh(w, xs):
    return jax.vmap(lambda w, x: x @ w, in_axes=(None, 0))(w, xs)


@pytest.mark.parametrize("wrong, words", [
    (naive_score_batch, "elementwise product"),
    (copied_weight, "in_axes=None"),
    (no_tanh, "tanh(x @ w)"),
])
def test_score_batch_mistakes(wrong, words):
    res = L2.check_score_batch(wrong)
    assert not res.passed and words in hints(res), res.summary()


@pytest.mark.parametrize("check", [L2.check_matchaxis, L2.check_choose_axes, L2.check_pairwise,
                                   L2.check_score_batch])
def test_a_raising_answer_is_a_failed_result(check):
    def broken(*args, **kwargs):
        raise NotImplementedError()
    res = check(broken)
    assert not res.passed and res.findings
    assert "NotImplementedError" in " ".join(f.got for f in res.findings)


# ---- self-checks and the lesson's facts ---------------------------------------------------------

def test_mv_table_facts():
    rows = {r["row"]: r for r in L2.mv_table()}
    assert rows[3]["eqns"] == rows[4]["eqns"]
    assert "transpose" in rows[5]["prims"] and "transpose" not in rows[7]["prims"]
    assert rows[5]["eqns"][0] == rows[7]["eqns"][0]


def test_mv_selfcheck_right_partial_and_wrong():
    truth = {r["row"]: (r["shape"], r["prims"]) for r in L2.mv_table()}
    assert L2.selfcheck_mv_table(truth).passed
    partial = L2.selfcheck_mv_table({1: truth[1]})
    assert not partial.passed and not partial.findings and "2" in partial.note
    wrong = L2.selfcheck_mv_table({**truth, 5: (truth[5][0], ["dot_general"])})
    assert not wrong.passed and len(wrong.findings) == 1 and "transpose" in wrong.findings[0].hint


def test_dimension_numbers_and_reduce_selfchecks():
    dots = {n: L2.dot_numbers(n) for n in range(1, len(L2.DOT_CALLS) + 1)}
    assert L2.selfcheck_dimension_numbers(dots).passed
    assert not L2.selfcheck_dimension_numbers({**dots, 2: (((1,), (1,)), ((), ()))}).passed
    axes = {n: L2.reduce_axes(n) for n in range(1, len(L2.REDUCE_CALLS) + 1)}
    assert L2.selfcheck_reduce_axes(axes).passed
    assert L2.selfcheck_reduce_axes({**axes, 1: [1]}).passed          # lists are fine
    assert not L2.selfcheck_reduce_axes({**axes, 1: (0,)}).passed


def test_watch_matchaxis_sees_the_sum_case():
    @jax.custom_vjp
    def scale(w, x):
        return w * x
    scale.defvjp(lambda w, x: (w * x, (w, x)), lambda res, g: (g * res[1], g * res[0]))
    xs = jnp.ones((4, 3))
    with L2.watch_matchaxis() as calls:
        jax.grad(lambda w: jnp.sum(jax.vmap(scale, in_axes=(None, 0))(w, xs)))(jnp.ones(3))
    assert (0, None, True) in calls
    assert L2._jax.batching.matchaxis is not None and "recording" not in repr(
        L2._jax.batching.matchaxis)


def test_axis_flow_finds_the_batch_axis():
    f = lambda x: jnp.sin(x) * 2.0
    moved = jax.make_jaxpr(jax.vmap(f, in_axes=1))(jnp.ones((3, 7)))
    assert axis_flow.positions(axis_flow.flow(moved, 7)) == [(1,), (1,), (0,)]
    kept = jax.make_jaxpr(jax.vmap(f, in_axes=1, out_axes=1))(jnp.ones((3, 7)))
    assert axis_flow.positions(axis_flow.flow(kept, 7)) == [(1,), (1,)]
    fig = axis_flow.draw(moved, 7, title="t")
    assert len(fig.axes) == 1
