"""Lesson 2's kit (grader/lessons/l2_where_the_axis_goes/kit/): the layout functions, the spec and
shape helpers, and the observers, which return plain data and let the student's errors raise."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from grader import core, wire
from grader.lessons import l2_where_the_axis_goes as L2
from grader.lessons.l2_where_the_axis_goes.kit import observe

from . import answers as A

CHOOSE = {"layout": {"fn": "mv", "args": [{"rank": 2, "batch": None}, {"rank": 2, "batch": 0}],
                     "out": "free"}, "dims": ((2, 3), (3,)), "B": 7, "_seed": 1}


def test_the_kit_is_the_packages_face():
    assert set(L2.FUNCTIONS) == {"scale", "mul", "mv", "colsum", "pair"}
    assert L2.summarize_fn is core.summarize_fn and L2.primitives is core.primitives


def test_plain_spec_keeps_ints_none_and_tuples_and_refuses_the_rest():
    assert observe.plain_spec((np.int64(1), None, [0, -1])) == (1, None, (0, -1))
    for bad in (True, 1.0, "0", {0: 1}):
        with pytest.raises(ValueError):
            observe.plain_spec(bad)


def test_canon_and_stacked_shape():
    assert observe.canon(-1, 3) == 2 and observe.canon(1, 3) == 1 and observe.canon(None, 3) is None
    assert observe.stacked_shape((2, 3), -1, 7) == (2, 3, 7)
    assert observe.stacked_shape((2, 3), 1, 7) == (2, 7, 3)
    assert observe.stacked_shape((2, 3), None, 7) == (2, 3)


def test_matchaxis_input_has_distinct_values():
    x = observe.matchaxis_input({"shape": (2, 3, 4)})
    assert x.shape == (2, 3, 4) and len(set(x.ravel().tolist())) == x.size


def test_counting_batched_counts_and_puts_process_primitive_back():
    original = core._jax.BatchTrace.process_primitive
    with observe.counting_batched() as count:
        jax.make_jaxpr(jax.vmap(jnp.sin))(jnp.ones((4, 3)))
    assert count[0] >= 1 and core._jax.BatchTrace.process_primitive is original
    with observe.counting_batched() as count:
        jax.make_jaxpr(A.hand_batched)(jnp.ones(3), jnp.ones((4, 3)))
    assert count[0] == 0


def test_observers_return_plain_data():
    got = observe.choose_axes(A.choose_axes, CHOOSE)
    assert (got["in_axes"], got["out_axes"]) == ((None, 0), 1)
    assert wire.unpack(got["outs"][0]).shape == (2, 7)
    pair = observe.pairwise(A.pairwise, {"n": 3, "m": 5, "d": 4, "order": "ij", "_seed": 1})
    score = observe.score_batch(A.score_batch, {"d": 10, "k": None, "B": 4, "_seed": 3})
    assert score["vmapped"] > 0 and tuple(pair["shape"]) == (3, 5)
    for value in (got, pair, score):
        assert wire.loads(wire.dumps(value)) == value


def test_the_answer_sees_a_copy_of_the_layout():
    def meddles(layout):
        layout["args"].clear()
        return A.choose_axes(CHOOSE["layout"])
    observe.choose_axes(meddles, CHOOSE)
    assert len(CHOOSE["layout"]["args"]) == 2


@pytest.mark.parametrize("answer, stage", [
    (lambda layout: 0, "answer"),
    (lambda layout: (0.5, 0), "answer"),
    (lambda layout: ((0, 0), 0), "vmap"),
    (lambda layout: ((None, 0), None), "vmap"),
])
def test_a_student_error_becomes_a_failure_of_its_stage(answer, stage):
    got = wire.observe_safely(observe.choose_axes, (answer,), CHOOSE)
    assert isinstance(got, wire.Failure) and got.stage == stage, got


def test_a_student_error_propagates_from_the_observer():
    with pytest.raises(ZeroDivisionError):
        observe.matchaxis(lambda *a, **k: 1 / 0, {"shape": (2,), "src": 0, "dst": 0, "size": 2,
                                                   "sum_match": False})
