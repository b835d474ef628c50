"""Lesson 1's kit (grader/lessons/l1_rule_per_primitive/kit/): the primitives, the stand-ins and
the observers, which return plain data and let the student's errors raise, labelled."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from grader import core, wire
from grader.lessons import l1_rule_per_primitive as L1
from grader.lessons.l1_rule_per_primitive.kit import observe

from .. import contract
from . import answers as A


# ---- the primitives ------------------------------------------------------------------------------

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


@pytest.mark.parametrize("name, args, params", [
    ("softsign", [(2, 3)], {}), ("scaled_diff", [(2, 3), (1, 3)], {"scale": -1.5}),
    ("sumsq", [(2, 3, 4)], {"axes": (0, 2)}), ("rowmax", [(3, 4)], {})])
def test_each_primitive_computes_its_reference(name, args, params):
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal(s).astype(np.float32) for s in args]
    got = getattr(L1.make_primitives(), f"{name}_p").bind(*xs, **params)
    assert np.allclose(np.asarray(got), L1.REFERENCES[name](*xs, **params), rtol=1e-6)


def test_install_and_uninstall_a_rule():
    prim = L1.make_primitives().softsign_p
    assert core.rule_for(prim) == (None, None)
    L1.install(prim, A.softsign_rule)
    try:
        assert core.rule_for(prim)[0] is not None
        assert jax.vmap(prim.bind)(jnp.ones((4, 3))).shape == (4, 3)
    finally:
        L1.uninstall(prim)
    assert core.rule_for(prim) == (None, None)


# ---- the stand-ins -------------------------------------------------------------------------------

def test_standins_misbehave_like_the_releases():
    split = {"primitive_batchers": ("sin",), "fancy_primitive_batchers": ("psum",)}
    for layout, expected in [("split", "split"), ("collapsed-readable", "collapsed"),
                             ("collapsed-writeonly", "collapsed"), ("legacy", "legacy")]:
        tables = split if layout == "split" else (
            {"primitive_batchers": ("sin",), "axis_primitive_batchers": ("psum",)}
            if layout == "legacy" else {"fancy_primitive_batchers": ("sin", "psum")})
        module, _ = L1.standin({"layout": layout, "tables": tables})
        assert core.layout(module) == expected
    module, objects = L1.standin({"layout": "collapsed-readable",
                                  "tables": {"fancy_primitive_batchers": ("sin",)}})
    with pytest.raises(KeyError):
        objects["fancy_primitive_batchers"][0] in module.primitive_batchers
    with pytest.raises(TypeError):
        len(module.primitive_batchers)
    assert module.primitive_batchers[objects["fancy_primitive_batchers"][0]] is not None
    module, objects = L1.standin({"layout": "collapsed-writeonly",
                                  "tables": {"fancy_primitive_batchers": ("sin",)}})
    with pytest.raises(TypeError):
        objects["fancy_primitive_batchers"][0] in module.primitive_batchers


def test_split_standin_has_a_batchers_dict_that_is_not_a_rule_table():
    module, objects = L1.standin({"layout": "split", "tables": {
        "primitive_batchers": ("sin",), "fancy_primitive_batchers": ("psum", "cond")}})
    assert isinstance(module.skippable_batchers, dict) and module.skippable_batchers
    assert "skippable_batchers" not in core.real_tables(module)


def test_installed_standin_is_jax_itself():
    module, objects = L1.standin({"layout": "installed", "tables": {}})
    assert module is L1.batching and objects == {}
    assert L1.installed_primitive("sin") is jax.lax.sin_p
    with pytest.raises(LookupError, match="no_such_thing_p"):
        L1.installed_primitive("no_such_thing")


def test_a_fresh_query_is_a_look_alike_not_the_registered_object():
    case = {"layout": "installed", "tables": {}, "query": ("fresh", "sin")}
    prim = L1.query_prim(case, {})
    assert prim.name == "sin" and prim is not jax.lax.sin_p
    assert L1.query_prim({**case, "query": ("registered", "sin")}, {}) is jax.lax.sin_p


# ---- the observers: plain data back, the student's errors raised with their stage -----------------

def test_observers_return_plain_data():
    case = {"shapes": ((3, 7, 5), (5,)), "in_axes": (1, None), "outer_axes": None}
    assert observe.spy(A.spy, case) == [(1, (3, 5), (3, 7, 5)), (None, (5,), (5,))]
    rule_case = {"prim": "softsign", "shapes": ((6, 3),), "in_axes": (0,), "outer_axes": None,
                 "params": (), "seed": 0}
    got = observe.rule(A.softsign_rule, rule_case)
    assert got["shape"] == (6, 3) and [e[0] for e in got["eqns"]] == ["softsign"]
    for value in (got, observe.table_sizes(A.table_sizes, {"layout": "installed", "tables": {}})):
        assert wire.loads(wire.dumps(value)) == value


def test_a_student_error_propagates_from_the_observer():
    case = {"shapes": ((3, 7, 5),), "in_axes": (1,), "outer_axes": None}
    with pytest.raises(RuntimeError, match="student bug"):
        observe.spy(contract.student_bug, case)


@pytest.mark.parametrize("observer, answer, case, stage", [
    (observe.spy, lambda f, in_axes, *args: (jax.vmap(f, in_axes=in_axes)(*args), 3)[1],
     {"shapes": ((3, 7, 5),), "in_axes": (1,), "outer_axes": None}, "report"),
    (observe.spy, lambda f, in_axes, *args: [(1, (3, 5), (3, 7, 5))],
     {"shapes": ((3, 7, 5),), "in_axes": (1,), "outer_axes": None}, "ran"),
    (observe.which_table, lambda module, prim: 3,
     {"layout": "installed", "tables": {}, "query": ("registered", "sin")}, "answer"),
    (observe.table_sizes, lambda module: [1, 2],
     {"layout": "installed", "tables": {}}, "answer"),
    (observe.rule, lambda prim, vals, dims, **params: 1 / 0,
     {"prim": "softsign", "shapes": ((6, 3),), "in_axes": (0,), "outer_axes": None, "params": (),
      "seed": 0}, "batched call"),
    (observe.rule, lambda prim, vals, dims, **params: (prim.bind(*vals), 5),
     {"prim": "softsign", "shapes": ((6, 3),), "in_axes": (0,), "outer_axes": None, "params": (),
      "seed": 0}, "batched call"),
])
def test_a_student_error_becomes_a_failure_of_its_stage(observer, answer, case, stage):
    got = wire.observe_safely(observer, (answer,), case)
    assert isinstance(got, wire.Failure) and got.stage == stage, got


def test_the_rule_observer_uninstalls_a_failing_rule():
    before = {n: len(t) for n, t in core.real_tables().items()}
    case = {"prim": "rowmax", "shapes": ((6, 3, 5),), "in_axes": (0,), "outer_axes": None,
            "params": (), "seed": 0}
    assert isinstance(wire.observe_safely(observe.rule, (contract.student_bug,), case), wire.Failure)
    assert {n: len(t) for n, t in core.real_tables().items()} == before
