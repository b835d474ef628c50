"""Exercise 2, ``choose_axes`` (grader/lessons/l2_where_the_axis_goes/choose_axes.py)."""
import jax
import numpy as np

from grader.exercise import canonical
from grader.lessons.l2_where_the_axis_goes import choose_axes as C
from grader.lessons.l2_where_the_axis_goes.kit import FUNCTIONS, observe
from grader.wire import unpack

from .. import contract
from . import answers as A


def layout_key(case):
    """The key choose_axes's hidden cases are fresh by: the question, not its batch size or seed."""
    return canonical((case["layout"], case["dims"]))


def test_reference_passes_visible_and_hidden():
    contract.assert_passes(C.CHOOSE_AXES, A.choose_axes)


def test_default_out_axes_costs_a_transpose():
    assert "transpose" in A.hints(C.check_choose_axes(A.default_out_axes))


def test_in_axes_must_describe_the_data():
    assert "in_axes describes the data" in A.hints(C.check_choose_axes(A.front_in_axes))


def test_unbatched_output_should_stay_unmapped():
    assert "out_axes=None keeps it unmapped" in A.hints(C.check_choose_axes(A.broadcasts_unbatched))


def test_bad_answer_shape():
    assert "exactly two things" in A.hints(C.check_choose_axes(lambda layout: 0))


def test_a_spec_vmap_refuses_is_reported_as_vmaps():
    res = C.check_choose_axes(lambda layout: ((7,) * len(layout["args"]), 0))
    assert "vmap refused the spec" in A.hints(res)


def test_a_raising_answer_is_a_failed_result():
    contract.assert_raising_answer_fails(C.CHOOSE_AXES)


def test_layout_expectation_matches_vmap():
    case = C.cases(np.random.default_rng(0), False)[2]     # mv, v batched
    args = observe.layout_args(case)
    exp = C.expect(case)
    got = np.asarray(jax.vmap(FUNCTIONS["mv"], in_axes=(None, 0))(*args))
    assert np.allclose(unpack(exp["outs"][0]), got, atol=1e-5)
    assert exp["natural"] == (1,)


def test_visible_layouts_are_the_visible_cases():
    assert C.visible_layouts() == C.cases(np.random.default_rng(), False)


def test_hidden_cases_are_fresh_and_never_visible():
    contract.assert_fresh(C.CHOOSE_AXES)
    contract.assert_fresh(C.CHOOSE_AXES, key=layout_key)


def test_a_draw_repeating_a_visible_case_is_drawn_again(monkeypatch):
    visible = C.visible_cases()[3]
    contract.assert_repeat_is_drawn_again(monkeypatch, C, "_draw", C.CHOOSE_AXES, visible,
                                          key=layout_key)
    # The same question with another batch size is still the visible question.
    assert contract.overlap([visible], [{**visible, "B": visible["B"] + 1}], key=layout_key)


def test_cases_observations_and_expectations_are_plain_data():
    contract.assert_plain_and_judged_alike(C.CHOOSE_AXES, A.choose_axes)
    contract.assert_plain_and_judged_alike(C.CHOOSE_AXES, A.default_out_axes)
