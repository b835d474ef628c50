"""Lesson 1's checks: right answers pass, typical wrong ones fail with the hint that names the
misconception, student crashes become findings, and cases are plain data drawn afresh when hidden.

Runs on both venvs (jax 0.10.2 and 0.4.38).
"""
import json

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from grader import core
from grader import rule_per_primitive as L1
from grader.judge.child import plain, unplain


# ---- reference solutions (the same as the exercise notebook's) ---------------------------------

def spy(f, in_axes, *args):
    report = []

    def watched(*xs):
        report[:] = [(None, tuple(x.shape), tuple(x.shape)) if axis is None
                     else (int(x.batch_dim), tuple(x.shape), tuple(x.val.shape))
                     for x, axis in zip(xs, in_axes)]
        return f(*xs)

    jax.vmap(watched, in_axes=in_axes)(*args)
    return report


def softsign_rule(prim, vals, dims, **params):
    (x,), (d,) = vals, dims
    return prim.bind(x, **params), d


def scaled_diff_rule(prim, vals, dims, **params):
    moved = [jnp.expand_dims(v, 0) if d is None else jnp.moveaxis(v, d, 0)
             for v, d in zip(vals, dims)]
    return prim.bind(*moved, **params), 0


def sumsq_rule(prim, vals, dims, *, axes):
    (x,), (d,) = vals, dims
    return prim.bind(x, axes=tuple(a + 1 if a >= d else a for a in axes)), \
        d - sum(1 for a in axes if a < d)


def rowmax_rule(prim, vals, dims, **params):
    (x,), (d,) = vals, dims
    x = jnp.moveaxis(x, d, 0)
    b, n, m = x.shape
    return prim.bind(x.reshape(b * n, m), **params).reshape(b, n), 0


def which_table(module, prim):
    for name in L1.TABLE_NAMES:
        table = getattr(module, name, None)
        if isinstance(table, dict) and prim in table:
            return name
    return None


def table_sizes(module):
    return {n: len(t) for n in L1.TABLE_NAMES
            if isinstance(t := getattr(module, n, None), dict)}


REFERENCE = {"spy": spy, "softsign_rule": softsign_rule, "scaled_diff_rule": scaled_diff_rule,
             "sumsq_rule": sumsq_rule, "which_table": which_table, "table_sizes": table_sizes,
             "rowmax_rule": rowmax_rule}


@pytest.mark.parametrize("grade_id", sorted(REFERENCE))
def test_reference_passes_visible_and_hidden(grade_id):
    exercise = L1.EXERCISES[grade_id]
    for hidden in (False, True):
        res = exercise.check(REFERENCE[grade_id], hidden=hidden)
        assert res.passed, res.summary()
        assert res.cases >= 3


def test_checks_leave_no_rules_behind():
    before = {n: len(t) for n, t in core.real_tables().items()}
    L1.check_sumsq_rule(sumsq_rule)
    L1.check_rowmax_rule(lambda *a, **k: 1 / 0)
    assert {n: len(t) for n, t in core.real_tables().items()} == before


# ---- wrong solutions fail, with the hint that names the misconception ---------------------------

def _hints(res):
    assert not res.passed
    return " | ".join(f.hint for f in res.findings)


def spy_copies_in_axes(f, in_axes, *args):
    report = []

    def watched(*xs):
        report[:] = [(a, tuple(x.shape), tuple(x.shape) if a is None else tuple(x.val.shape))
                     for x, a in zip(xs, in_axes)]
        return f(*xs)

    jax.vmap(watched, in_axes=in_axes)(*args)
    return report


def spy_reports_seen_shape(f, in_axes, *args):
    report = []

    def watched(*xs):
        report[:] = [(None, x.shape, x.shape) if a is None else (x.batch_dim, x.shape, x.shape)
                     for x, a in zip(xs, in_axes)]
        return f(*xs)

    jax.vmap(watched, in_axes=in_axes)(*args)
    return report


def spy_assumes_tracers(f, in_axes, *args):
    report = []

    def watched(*xs):
        report[:] = [(x.batch_dim, x.shape, x.val.shape) for x in xs]
        return f(*xs)

    jax.vmap(watched, in_axes=in_axes)(*args)
    return report


def spy_trusts_hasattr(f, in_axes, *args):
    report = []

    def watched(*xs):
        report[:] = [(x.batch_dim, x.shape, x.val.shape) if hasattr(x, "batch_dim")
                     else (None, x.shape, x.shape) for x in xs]
        return f(*xs)

    jax.vmap(watched, in_axes=in_axes)(*args)
    return report


@pytest.mark.parametrize("wrong, hint", [
    (spy_copies_in_axes, "normalises a negative in_axes"),
    (spy_reports_seen_shape, "x.shape hides the batch axis"),
    (spy_assumes_tracers, "is not a BatchTracer"),
    (spy_trusts_hasattr, "OUTER vmap"),
])
def test_wrong_spies_get_their_hint(wrong, hint):
    assert hint in _hints(L1.check_spy(wrong))


def test_nested_trap_is_in_the_hidden_cases_too():
    hidden = L1.cases_spy(np.random.default_rng(), hidden=True)
    assert any(c["outer_axes"] is not None and None in c["in_axes"] for c in hidden)
    assert "OUTER vmap" in _hints(L1.check_spy(spy_trusts_hasattr, hidden=True))


def softsign_front(prim, vals, dims, **params):
    return prim.bind(vals[0], **params), 0


def softsign_loop(prim, vals, dims, **params):
    x = jnp.moveaxis(vals[0], dims[0], 0)
    return jnp.stack([prim.bind(row, **params) for row in x]), 0


def scaled_diff_materialised(prim, vals, dims, **params):
    size = next(v.shape[d] for v, d in zip(vals, dims) if d is not None)
    moved = [jnp.broadcast_to(v, (size,) + v.shape) if d is None else jnp.moveaxis(v, d, 0)
             for v, d in zip(vals, dims)]
    return prim.bind(*moved, **params), 0


def scaled_diff_no_size1(prim, vals, dims, **params):
    moved = [v if d is None else jnp.moveaxis(v, d, 0) for v, d in zip(vals, dims)]
    return prim.bind(*moved, **params), 0


def scaled_diff_drops_scale(prim, vals, dims, **params):
    moved = [jnp.expand_dims(v, 0) if d is None else jnp.moveaxis(v, d, 0)
             for v, d in zip(vals, dims)]
    return prim.bind(*moved, scale=1.0), 0


def sumsq_unshifted(prim, vals, dims, *, axes):
    return prim.bind(vals[0], axes=axes), dims[0]


def rowmax_vectorized(prim, vals, dims, **params):
    return prim.bind(vals[0], **params), dims[0]


def rowmax_assumes_front(prim, vals, dims, **params):
    b, n, m = vals[0].shape
    return prim.bind(vals[0].reshape(b * n, m)).reshape(b, n), 0


@pytest.mark.parametrize("grade_id, wrong, hint", [
    ("softsign_rule", softsign_front, "out_dim you returned"),
    ("softsign_rule", softsign_loop, "a loop over examples"),
    ("scaled_diff_rule", scaled_diff_materialised, "materialised a copy per example"),
    ("scaled_diff_rule", scaled_diff_no_size1, "size-1 axis"),
    ("scaled_diff_rule", scaled_diff_drops_scale, "**params"),
    ("sumsq_rule", sumsq_unshifted, "at or after batch_dim"),
    ("rowmax_rule", rowmax_vectorized, "defvectorized"),
    ("rowmax_rule", rowmax_assumes_front, "dims"),
])
def test_wrong_rules_get_their_hint(grade_id, wrong, hint):
    assert hint in _hints(L1.EXERCISES[grade_id].check(wrong))


def test_materialising_rule_also_fails_hidden():
    assert not L1.check_scaled_diff_rule(scaled_diff_materialised, hidden=True).passed


def which_table_asks_proxies(module, prim):
    for name in L1.TABLE_NAMES:
        table = getattr(module, name, None)
        if table is not None and prim in table:
            return name
    return None


def which_table_by_name(module, prim):
    for name in L1.TABLE_NAMES:
        table = getattr(module, name, None)
        if isinstance(table, dict) and prim.name in {p.name for p in table}:
            return name
    return None


def table_sizes_every_batchers_dict(module):
    return {k: len(v) for k, v in vars(module).items()
            if k.endswith("batchers") and isinstance(v, dict)}


def table_sizes_counts_proxies(module):
    return {n: len(getattr(module, n)) for n in L1.TABLE_NAMES if hasattr(module, n)}


@pytest.mark.parametrize("check, wrong, hint", [
    (L1.check_which_table, which_table_asks_proxies, "isinstance(table, dict)"),
    (L1.check_which_table, which_table_by_name, "not names"),
    (L1.check_which_table, which_table_by_name, "share a name"),
    (L1.check_table_sizes, table_sizes_every_batchers_dict, "skippable_batchers"),
    (L1.check_table_sizes, table_sizes_counts_proxies, "proxy"),
])
def test_wrong_table_readers_get_their_hint(check, wrong, hint):
    assert hint in _hints(check(wrong))


# ---- crashes, plain data, fresh hidden cases ------------------------------------------------------

def _raises(*args, **kwargs):
    raise RuntimeError("student bug")


@pytest.mark.parametrize("grade_id", sorted(REFERENCE))
def test_a_raising_answer_is_a_failed_result(grade_id):
    res = L1.EXERCISES[grade_id].check(_raises)
    assert not res.passed and res.failed == res.cases
    assert "student bug" in res.findings[0].got


def test_release_stub_gets_a_helpful_hint():
    def stub(*args, **kwargs):
        raise NotImplementedError()
    assert "not written yet" in _hints(L1.check_softsign_rule(stub))


@pytest.mark.parametrize("grade_id", sorted(REFERENCE))
def test_hidden_cases_are_fresh_and_never_visible(grade_id):
    exercise = L1.EXERCISES[grade_id]
    visible = exercise.cases(np.random.default_rng(0), False)
    first = exercise.cases(np.random.default_rng(), True)
    second = exercise.cases(np.random.default_rng(), True)
    assert first != second
    assert not any(c in visible for c in first)
    assert exercise.cases(np.random.default_rng(0), False) == visible


@pytest.mark.parametrize("grade_id", sorted(REFERENCE))
def test_cases_observations_and_expectations_are_plain_data(grade_id):
    exercise = L1.EXERCISES[grade_id]
    for case in exercise.cases(np.random.default_rng(1), True)[:4]:
        assert unplain(json.loads(json.dumps(plain(case)))) == case
        for value in (exercise.expect(case), exercise.observe(REFERENCE[grade_id], case)):
            json.dumps(plain(value))


def test_hidden_cases_cover_none_negative_axes_and_nesting():
    cases = [c for seed in range(3) for c in L1.cases_spy(np.random.default_rng(seed), True)]
    axes = [a for c in cases for a in c["in_axes"]]
    assert None in axes and any(a is not None and a < 0 for a in axes)
    assert any(c["outer_axes"] for c in cases)
    rules = L1.EXERCISES["scaled_diff_rule"].cases(np.random.default_rng(3), True)
    assert any(None in c["in_axes"] for c in rules) and any(c["outer_axes"] for c in rules)
    assert any(c["in_axes"][0] is not None and c["in_axes"][1] is not None
               and c["in_axes"][0] != c["in_axes"][1] for c in rules + [
                   *L1.EXERCISES["scaled_diff_rule"].cases(np.random.default_rng(0), False)])
    layouts = {c["layout"] for c in L1.cases_which_table(np.random.default_rng(), True)}
    assert layouts == {"split", "collapsed-0.8.2", "collapsed-0.9", "legacy", "installed"}


# ---- expectations come from JAX, not from hard-coded answers ----------------------------------

def test_spy_expectation_is_what_jax_shows():
    case = L1.VISIBLE_SPY[0]
    _, views = core.observe(lambda x, y: x, case["in_axes"], jnp.ones(case["shapes"][0]),
                            jnp.ones(case["shapes"][1]))
    assert L1.expect_spy(case) == [(views[0].batch_dim, views[0].shape, views[0].val_shape),
                                   (None, views[1].shape, views[1].shape)]
    assert L1.expect_spy(case) == spy(lambda x, y: x * y, (1, None), jnp.ones((3, 7, 5)), jnp.ones(5))


def test_rule_expectation_is_a_loop_over_examples():
    case = L1.VISIBLE_RULES["scaled_diff"][0]
    x, y = L1._data(case)
    loop = np.stack([2.0 * (x[b] - y) for b in range(x.shape[0])])
    assert L1.expect_rule(case) == {"shape": loop.shape, "values": loop.ravel().tolist()}


def test_table_expectations_come_from_the_core():
    for case in L1.VISIBLE_TABLES:
        module, objects = L1.standin(case)
        holders = core.tables_holding(L1.query_prim(case, objects), module)
        assert L1.expect_which_table(case) == (holders[0] if holders else None)
    installed = next(c for c in L1.VISIBLE_TABLES if c["query"] == ("registered", "sin"))
    assert L1.expect_which_table(installed) == core.rule_for(jax.lax.sin_p)[0]


# ---- the primitives and stand-ins behave as the exercises say -------------------------------------

def test_primitives_run_trace_and_are_refused_by_vmap():
    prims = L1.make_primitives()
    x = jnp.arange(6.0).reshape(2, 3)
    assert prims.sumsq_p.bind(x, axes=(1,)).shape == (2,)
    assert prims.rowmax_p.bind(x).tolist() == [2.0, 5.0]
    assert prims.scaled_diff_p.bind(x, jnp.ones((1, 3)), scale=2.0).shape == (2, 3)
    eqns = core.summarize_fn(lambda v: prims.softsign_p.bind(v), x)
    assert core.primitives(eqns) == ["softsign"]
    for name in ("softsign", "rowmax"):
        with pytest.raises(NotImplementedError, match=name):
            jax.vmap(getattr(prims, name + "_p").bind)(jnp.ones((4, 2, 3)))
    with pytest.raises(TypeError, match="rank-2|rows, cols"):
        prims.rowmax_p.bind(jnp.ones((4, 2, 3)))
    assert L1.make_primitives().rowmax_p is not prims.rowmax_p


def test_standins_misbehave_like_the_releases():
    split = {"primitive_batchers": ("sin",), "fancy_primitive_batchers": ("psum",)}
    for layout, expected in [("split", "split"), ("collapsed-0.8.2", "collapsed"),
                             ("collapsed-0.9", "collapsed"), ("legacy", "legacy")]:
        tables = split if layout == "split" else (
            {"primitive_batchers": ("sin",), "axis_primitive_batchers": ("psum",)}
            if layout == "legacy" else {"fancy_primitive_batchers": ("sin", "psum")})
        module, _ = L1.standin({"layout": layout, "tables": tables})
        assert core.layout(module) == expected
    module, objects = L1.standin({"layout": "collapsed-0.8.2",
                                  "tables": {"fancy_primitive_batchers": ("sin",)}})
    with pytest.raises(KeyError):
        objects["fancy_primitive_batchers"][0] in module.primitive_batchers
    with pytest.raises(TypeError):
        len(module.primitive_batchers)
    assert module.primitive_batchers[objects["fancy_primitive_batchers"][0]] is not None
    module, objects = L1.standin({"layout": "collapsed-0.9",
                                  "tables": {"fancy_primitive_batchers": ("sin",)}})
    with pytest.raises(TypeError):
        objects["fancy_primitive_batchers"][0] in module.primitive_batchers


# ---- self-checks ------------------------------------------------------------------------------------

def test_selfchecks_accept_the_truth_and_reject_guesses():
    assert L1.selfcheck_tracer((2, (2, 3), (2, 3, 4))).passed
    assert not L1.selfcheck_tracer((-1, (2, 3), (2, 3, 4))).passed
    route = "rule" if core.layout() == "collapsed" else "shortcut"
    assert L1.sin_route() == route
    assert L1.selfcheck_route(route).passed and not L1.selfcheck_route("refused").passed
    assert L1.selfcheck_reduce_axes(((1,), (3, 5))).passed
    assert not L1.selfcheck_reduce_axes(((2,), (3, 5))).passed
    assert L1.selfcheck_rowmax_equation(("rowmax", (12, 5), (12,)), rowmax_rule).passed
    assert not L1.selfcheck_rowmax_equation(("rowmax", (4, 3, 5), (4, 3)), rowmax_rule).passed
    assert not L1.selfcheck_rowmax_equation(("rowmax", (12, 5), (12,)), _raises).passed


def test_figures_have_fixed_sizes():
    from grader.viz import rules
    fig = rules.hidden_axis((3, 7, 5), 1)
    assert tuple(fig.get_size_inches()) == (10.0, 2.8) and len(fig.axes) == 2
    fig = rules.table_counts({"a": {"primitive_batchers": 180}, "b": {"fancy_primitive_batchers": 3}})
    assert tuple(fig.get_size_inches()) == (9.0, 3.6)


def test_hidden_binary_cases_always_include_each_kind():
    for _ in range(5):
        cases = L1.EXERCISES["scaled_diff_rule"].cases(np.random.default_rng(), True)
        flat = [c for c in cases if c["outer_axes"] is None]
        assert sum(None in c["in_axes"] for c in flat) >= 2
        assert sum(None not in c["in_axes"] for c in flat) >= 2
