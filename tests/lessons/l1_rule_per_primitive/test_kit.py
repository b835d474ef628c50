"""Lesson 1's kit (grader/lessons/l1_rule_per_primitive/kit/): the primitives, their installers and
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
    mean, centred = prims.moments_p.bind(x, axis=1)
    assert mean.tolist() == [1.0, 4.0] and centred.shape == (2, 3)
    assert prims.stack2_p.bind(x, x, axis=2).shape == (2, 3, 2)
    assert core.primitives(core.summarize_fn(lambda v: prims.stack2_p.bind(v, v, axis=0), x)) == [
        "stack2"]
    for bind in (lambda v: prims.moments_p.bind(v, axis=0), lambda v: prims.stack2_p.bind(v, v, axis=0),
                 lambda v: prims.prefix_p.bind(v, axis_name="i")):
        with pytest.raises(NotImplementedError, match="moments|stack2|prefix"):
            jax.vmap(bind, axis_name="i")(jnp.ones((4, 2, 3)))
    assert L1.make_primitives().moments_p is not prims.moments_p


@pytest.mark.parametrize("call, message", [
    (lambda P: P.stack2_p.bind(jnp.ones(3), jnp.ones((1, 3)), axis=0), "same shape"),
    (lambda P: P.stack2_p.bind(jnp.ones(3), jnp.ones(3), axis=2), "not a non-negative axis"),
    (lambda P: P.moments_p.bind(jnp.ones(3), axis=-1), "not a non-negative axis"),
    (lambda P: P.prefix_p.bind(jnp.ones(3), axis_name="i"), "unbound axis name"),
])
def test_each_contract_is_enforced_eagerly_and_when_traced(call, message):
    prims = L1.make_primitives()
    with pytest.raises((TypeError, NameError), match=message):
        call(prims)
    if message != "unbound axis name":
        with pytest.raises(TypeError, match=message):
            jax.make_jaxpr(lambda: call(prims))()


def test_each_primitive_computes_its_reference():
    rng = np.random.default_rng(0)
    x, y = (rng.standard_normal((2, 3)).astype(np.float32) for _ in range(2))
    prims = L1.make_primitives()
    for got, want in zip(prims.moments_p.bind(x, axis=0), L1.REFERENCES["moments"](x, axis=0)):
        assert np.allclose(np.asarray(got), want, rtol=1e-6)
    assert np.allclose(np.asarray(prims.stack2_p.bind(x, y, axis=1)),
                       L1.REFERENCES["stack2"](x, y, axis=1))


def test_install_and_uninstall_both_kinds_of_rule():
    prims = L1.make_primitives()
    before = {n: len(t) for n, t in core.real_tables().items()}
    L1.install(prims.stack2_p, A.stack2_rule)
    L1.install_collective(prims.prefix_p, A.prefix_rule)
    try:
        assert jax.vmap(lambda v: prims.stack2_p.bind(v, v, axis=0))(jnp.ones((4, 3))).shape == (4, 2, 3)
        out = jax.vmap(lambda v: prims.prefix_p.bind(v, axis_name="i"), axis_name="i")(jnp.ones(4))
        assert out.tolist() == [1.0, 2.0, 3.0, 4.0]
    finally:
        L1.uninstall(prims.stack2_p)
        L1.uninstall(prims.prefix_p)
    assert {n: len(t) for n, t in core.real_tables().items()} == before


def test_current_trace_is_the_innermost_vmaps_inside_a_vmapped_function():
    seen = []

    def f(x):
        trace = L1.current_trace()
        seen.append((isinstance(trace, L1.BatchTrace), x._trace is trace,
                     isinstance(trace.parent_trace, L1.BatchTrace)))
        return x
    jax.vmap(jax.vmap(f))(jnp.ones((2, 3)))
    assert seen == [(True, True, True)]
    assert not isinstance(L1.current_trace(), L1.BatchTrace)


# ---- the observers: plain data back, the student's errors raised with their stage -----------------

SPY_CASE = {"shapes": ((3, 7, 5), (5,)), "in_axes": (1, None), "outer_axes": ()}
RULE_CASE = {"prim": "moments", "shapes": ((6, 3),), "in_axes": (0,), "outer_axes": None,
             "params": (("axis", 0),), "_seed": 0}


def test_observers_return_plain_data():
    assert observe.spy(A.spy, SPY_CASE) == [[1], [None]]
    got = observe.rule(A.moments_rule, RULE_CASE)
    assert [o["shape"] for o in got["outs"]] == [(6,), (6, 3)] and [e[0] for e in got["eqns"]] == [
        "moments"]
    assert got["calls"][0]["out_dims"] == [0, 0] and got["calls"][0]["lists"]
    collective = observe.collective(A.prefix_rule, {"name": "i", "levels": (
        {"name": "i", "in_axes": 0, "size": 4},), "example": (3,), "shapes": ((4, 3),),
        "closed": False, "_seed": 0})
    assert collective["shape"] == (4, 3) and collective["calls"][0]["axis"] == ("i", 4)
    for value in (got, collective):
        assert wire.loads(wire.dumps(value)) == value


def test_a_student_error_propagates_from_the_observer():
    with pytest.raises(RuntimeError, match="student bug"):
        observe.spy(contract.student_bug, SPY_CASE)


@pytest.mark.parametrize("observer, answer, case, stage", [
    (observe.spy, lambda f, in_axes, *args: (jax.vmap(f, in_axes=in_axes)(*args), 3)[1],
     SPY_CASE, "report"),
    (observe.spy, lambda f, in_axes, *args: [[1], [None]], SPY_CASE, "ran"),
    (observe.rule, lambda prim, vals, dims, **params: 1 / 0, RULE_CASE, "batched call"),
    (observe.rule, lambda prim, vals, dims, **params: (prim.bind(*vals, **params), [9, 9]),
     RULE_CASE, "batched call"),
])
def test_a_student_error_becomes_a_failure_of_its_stage(observer, answer, case, stage):
    got = wire.observe_safely(observer, (answer,), case)
    assert isinstance(got, wire.Failure) and got.stage == stage, got


def test_the_rule_observer_uninstalls_a_failing_rule():
    before = {n: len(t) for n, t in core.real_tables().items()}
    assert isinstance(wire.observe_safely(observe.rule, (contract.student_bug,), RULE_CASE),
                      wire.Failure)
    assert {n: len(t) for n, t in core.real_tables().items()} == before
