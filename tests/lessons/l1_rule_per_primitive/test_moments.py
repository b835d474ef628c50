"""Exercise 2, a primitive with two outputs (grader/lessons/l1_rule_per_primitive/moments.py)."""
import numpy as np
import pytest

from grader.lessons.l1_rule_per_primitive import moments as M
from grader.lessons.l1_rule_per_primitive.kit import observe

from .. import contract
from . import answers as A


def test_reference_passes_visible_and_hidden():
    contract.assert_passes(M.MOMENTS, A.moments_rule, min_cases=3)


# Copying the lesson's vectorized rule, transcribing JAX's reducer_batcher (right on the axis,
# wrong on the centred output's batch dim), moving the batch to the front as broadcast_batcher
# does, and a rule fitted to the visible cases: each earns what a blank earns.
PATTERN_MATCHERS = [A.moments_vectorized, A.moments_reducer, A.moments_to_the_front,
                    A.fitted(M.MOMENTS, A.moments_rule, A.moments_reducer)]


@pytest.mark.parametrize("answer", PATTERN_MATCHERS, ids=lambda a: a.__name__)
def test_a_pattern_matching_rule_earns_what_a_blank_earns(answer):
    contract.assert_earns_what_a_blank_earns(M.MOMENTS, answer)


def test_the_honest_rule_earns_every_point_through_the_wire():
    contract.assert_honest_earns_everything(M.MOMENTS, A.moments_rule)


def test_the_fitted_rule_passes_what_it_was_fitted_to():
    assert M.check_moments_rule(A.fitted(M.MOMENTS, A.moments_rule, A.moments_reducer)).passed


def test_hidden_cases_ask_both_sides_of_the_batch_and_nest():
    for seed in range(5):
        cases = M.cases(np.random.default_rng(seed), True)
        flat = [c for c in cases if c["outer_axes"] is None]
        before = [dict(c["params"])["axis"] < c["in_axes"][0] % len(c["shapes"][0]) for c in flat]
        assert sum(before) >= 2 and len(before) - sum(before) >= 2
        assert any(c["outer_axes"] for c in cases)


def test_expectation_is_a_loop_over_examples():
    case = M.VISIBLE[1]
    (x,) = observe.inputs(case)
    mean = np.stack([x[:, b].mean(axis=1) for b in range(x.shape[1])])
    assert np.allclose(M.R.expect(case)["outs"][0]["values"], mean.ravel())


def test_a_raising_answer_is_a_failed_result():
    contract.assert_raising_answer_fails(M.MOMENTS)


def test_hidden_cases_are_fresh_and_never_visible():
    contract.assert_fresh(M.MOMENTS)


def test_a_draw_repeating_a_visible_case_is_drawn_again(monkeypatch):
    contract.assert_repeat_is_drawn_again(monkeypatch, M, "_case", M.MOMENTS, M.VISIBLE[1])


def test_cases_observations_and_expectations_are_plain_data():
    contract.assert_plain_and_judged_alike(M.MOMENTS, A.moments_rule)
    assert not contract.assert_plain_and_judged_alike(M.MOMENTS, A.moments_reducer).passed
