"""Exercise 4, ``score_batch`` (grader/lessons/l2_where_the_axis_goes/score_batch.py)."""
import numpy as np
import pytest

from grader.lessons.l2_where_the_axis_goes import score_batch as S
from grader.lessons.l2_where_the_axis_goes.kit import observe
from grader.wire import unpack

from .. import contract
from . import answers as A


def test_reference_passes_visible_and_hidden():
    contract.assert_passes(S.SCORE_BATCH, A.score_batch)


@pytest.mark.parametrize("wrong, words", [
    (A.naive_score_batch, "elementwise product"),
    (A.copied_weight, "in_axes=None"),
    (A.no_tanh, "tanh(x @ w)"),
    (A.hand_batched, "let vmap batch"),
])
def test_score_batch_mistakes(wrong, words):
    assert words in A.hints(S.check_score_batch(wrong))


def test_checking_the_same_answer_again_gives_the_same_verdict():
    # A student re-running the cell: nothing cached from the first check may change the second.
    first, second = S.check_score_batch(A.score_batch), S.check_score_batch(A.score_batch)
    assert first.passed and second.to_dict() == first.to_dict(), second.summary()


def test_a_raising_answer_is_a_failed_result():
    contract.assert_raising_answer_fails(S.SCORE_BATCH)


def test_expectation_is_one_score_per_row():
    for case in S.VISIBLE:
        w, xs = observe.score_inputs(case)
        want = np.stack([np.tanh(x @ w) for x in xs])
        assert np.allclose(unpack(S.expect(case)), want, atol=1e-5)


def test_hidden_cases_are_fresh_and_never_visible():
    contract.assert_fresh(S.SCORE_BATCH)


def test_a_draw_repeating_a_visible_case_is_drawn_again(monkeypatch):
    contract.assert_repeat_is_drawn_again(monkeypatch, S, "_case", S.SCORE_BATCH, S.VISIBLE[1])


def test_cases_observations_and_expectations_are_plain_data():
    contract.assert_plain_and_judged_alike(S.SCORE_BATCH, A.score_batch)
    contract.assert_plain_and_judged_alike(S.SCORE_BATCH, A.copied_weight)
