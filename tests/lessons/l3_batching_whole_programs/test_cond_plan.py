"""Exercise 1, ``cond_plan`` (grader/lessons/l3_batching_whole_programs/cond_plan.py)."""
import pytest

from grader.lessons.l3_batching_whole_programs import cond_plan as C

from .. import contract
from . import answers as A

MISTAKES = {"kept": ["select_n picks", "the cond stays"], "widened": ["bdim_at_front"],
            "out": ["any branch", "every output comes out of a select_n", "stays unbatched"]}


def test_reference_passes_visible_and_hidden():
    contract.assert_passes(C.COND_PLAN, A.cond_plan)


@pytest.mark.parametrize("wrong, mistake", [(A.cond_always_kept, "kept"),
                                            (A.cond_size_one, "widened"),
                                            (A.cond_one_branch, "out")])
def test_each_mistake_gets_its_own_hint_on_hidden_cases(wrong, mistake):
    res = C.COND_PLAN.check(wrong, hidden=True, seed=11)
    contract.assert_hints_name(res, MISTAKES, mistake)


def test_the_pattern_matching_student_earns_nothing_on_hidden_cases():
    learnt = A.lookup(C.VISIBLE, A.cond_plan, A.cond_rule_of_thumb)
    assert C.COND_PLAN.check(learnt).passed                      # the visible cases, by heart
    for seed in range(5):
        assert not C.COND_PLAN.check(learnt, hidden=True, seed=seed).passed


def test_hidden_cases_hold_both_kinds_of_predicate_and_something_batched():
    cases = C.cases(__import__("numpy").random.default_rng(3), True)
    assert {c["pred"] for c in cases} == {True, False}
    assert all(c["pred"] or any(c["operands"]) for c in cases)


def test_the_expectation_is_what_jax_does():
    assert C.expect(C.VISIBLE[0]) == {"kept": True, "widened": [], "out_batched": [True]}
    assert C.expect(C.VISIBLE[1]) == {"kept": False, "widened": [1], "out_batched": [True]}


def test_a_raising_answer_is_a_failed_result():
    contract.assert_raising_answer_fails(C.COND_PLAN)


def test_hidden_cases_are_fresh_and_never_visible():
    contract.assert_fresh(C.COND_PLAN)


def test_a_draw_repeating_a_visible_case_is_drawn_again(monkeypatch):
    contract.assert_repeat_is_drawn_again(monkeypatch, C, "_draw", C.COND_PLAN, C.VISIBLE[0])


def test_cases_observations_and_expectations_are_plain_data():
    contract.assert_plain_and_judged_alike(C.COND_PLAN, A.cond_plan)
    contract.assert_plain_and_judged_alike(C.COND_PLAN, A.cond_size_one)


def test_an_answer_of_the_wrong_form_is_told_the_form():
    res = C.COND_PLAN.check(lambda spec: ["cond"])
    assert not res.passed and "keys" in res.findings[0].expected
