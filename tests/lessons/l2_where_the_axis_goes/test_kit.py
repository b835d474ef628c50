"""Lesson 2's kit (grader/lessons/l2_where_the_axis_goes/kit/): the programs as plain data, and the
observers, which return plain data and let the student's errors raise, labelled."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from grader import wire
from grader.lessons import l2_where_the_axis_goes as L2
from grader.lessons.l2_where_the_axis_goes.kit import observe

from .. import contract
from . import answers as A

PROGRAM = {"inputs": (("A", (2, 3)), ("v", (3,))),
           "steps": (("s1", "sin", "A"), ("s2", "matmul", "s1", "v"), ("s3", "sum", "s1", 0),
                     ("s4", "concat", "s1", "s1", 1))}


def test_a_program_is_the_function_it_describes():
    A_, v = jnp.arange(6.0).reshape(2, 3), jnp.arange(3.0)
    assert np.allclose(L2.as_function(PROGRAM)(A_, v), jnp.concatenate([jnp.sin(A_)] * 2, axis=1))
    assert L2.example_shapes(PROGRAM) == {"A": (2, 3), "v": (3,), "s1": (2, 3), "s2": (2,),
                                          "s3": (3,), "s4": (2, 6)}
    with_outputs = dict(PROGRAM, outputs=("s2", "s3"))
    assert [o.shape for o in L2.as_function(with_outputs)(A_, v)] == [(2,), (3,)]


@pytest.mark.parametrize("op", sorted(L2.OPS))
def test_every_op_runs_under_vmap(op):
    fn, n = L2.OPS[op]
    extra = {"sum": (0,), "concat": (0,), "spread": (2,)}.get(op, ())
    shapes = {"matmul": [(2, 3), (3,)], "dot": [(3,), (3,)]}.get(op, [(3,)] * n)
    args = [jnp.ones((7,) + s) for s in shapes]
    out = jax.vmap(lambda *xs: fn(*xs, *extra))(*args)
    assert out.shape[0] == 7


def test_observers_return_plain_data():
    case = {"program": PROGRAM, "in_dims": {"A": 1, "v": None}, "_size": 7}
    assert observe.where_it_lands(A.where_it_lands, case) == {"s1": 1, "s2": 1, "s3": 0, "s4": 0}
    wcase = L2.visible_widened()[0]
    assert observe.widened(A.widened, wcase) == [[0, [0]]]
    where = observe.cheap_where(A.cheap_where, {"shapes": ((7, 3), (7, 3), (3,)),
                                                "levels": ((0, 0, None),), "_seed": 1})
    assert where["shape"] == (7, 3) and where["graph"]["eqns"]
    for value in (where,):
        assert wire.loads(wire.dumps(value)) == value


def test_the_graph_follows_a_jit_into_its_program():
    closed = jax.make_jaxpr(lambda p, x, y: jnp.where(p, x, y))(
        jnp.ones(3, bool), jnp.ones(3), jnp.ones(3))
    graph = observe.graph(closed)
    (jit,) = [e for e in graph["eqns"] if e[3] is not None]
    assert jit[0] == "jit" and jit[3]["links"] and jit[3]["invars"] == jit[1]
    assert {o for o, _ in jit[2]} == {outer for _, outer in jit[3]["links"]}


def test_the_student_is_handed_copies():
    case = {"program": PROGRAM, "in_dims": {"A": 1, "v": None}, "_size": 7}

    def vandal(program, in_dims):
        program["steps"] = ()
        in_dims.clear()
        return {}
    observe.where_it_lands(vandal, case)
    assert case["program"] is PROGRAM and PROGRAM["steps"] and case["in_dims"]


@pytest.mark.parametrize("observer, answer, case, stage", [
    (observe.where_it_lands, lambda program, in_dims: [1, 2],
     {"program": PROGRAM, "in_dims": {"A": 1, "v": None}, "_size": 7}, "answer"),
    (observe.widened, lambda jaxpr, in_axes, size: 3, L2.visible_widened()[0], "answer"),
    (observe.cheap_where, lambda p, x, y: 1 / 0,
     {"shapes": ((7, 3), (7, 3), (3,)), "levels": ((0, 0, None),), "_seed": 1}, "batched call"),
])
def test_a_student_error_becomes_a_failure_of_its_stage(observer, answer, case, stage):
    got = wire.observe_safely(observer, (answer,), case)
    assert isinstance(got, wire.Failure) and got.stage == stage, got


def test_a_student_error_propagates_from_the_observer():
    with pytest.raises(RuntimeError, match="student bug"):
        observe.widened(contract.student_bug, L2.visible_widened()[0])
