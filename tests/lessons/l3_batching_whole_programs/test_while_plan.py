"""Exercise 3, ``while_plan`` (grader/lessons/l3_batching_whole_programs/while_plan.py)."""
import pytest

from grader.lessons.l3_batching_whole_programs import while_plan as W

from .. import contract
from . import answers as A


def test_reference_passes_visible_and_hidden():
    contract.assert_passes(W.WHILE_PLAN, A.while_plan)


@pytest.mark.parametrize("wrong, words", [
    (A.while_as_scan, "EVERY carry batched"),
    (A.while_every_example_runs_max, "held"),
    (A.while_trips_per_example, "slowest example"),
])
def test_each_mistake_gets_its_hint(wrong, words):
    res = W.WHILE_PLAN.check(wrong, hidden=True, seed=6)
    assert not res.passed and any(words in f.hint for f in res.findings), res.summary()


def test_the_pattern_matching_student_earns_nothing_on_hidden_cases():
    learnt = A.lookup(W.VISIBLE, A.while_plan, A.while_as_scan)
    assert W.WHILE_PLAN.check(learnt).passed
    for seed in range(5):
        assert not W.WHILE_PLAN.check(learnt, hidden=True, seed=seed).passed


def test_the_expectation_is_what_jax_does():
    assert W.expect(W.VISIBLE[0]) == {"pred_batched": True, "carry": [True, True], "trips": 5,
                                      "held": [3, 0, 4, 2]}


def test_a_raising_answer_is_a_failed_result():
    contract.assert_raising_answer_fails(W.WHILE_PLAN)


def test_hidden_cases_are_fresh_and_never_visible():
    contract.assert_fresh(W.WHILE_PLAN)


def test_a_draw_repeating_a_visible_case_is_drawn_again(monkeypatch):
    contract.assert_repeat_is_drawn_again(monkeypatch, W, "_draw", W.WHILE_PLAN, W.VISIBLE[0])


def test_cases_observations_and_expectations_are_plain_data():
    contract.assert_plain_and_judged_alike(W.WHILE_PLAN, A.while_plan)
