"""Exercise 2, ``scan_plan`` (grader/lessons/l3_batching_whole_programs/scan_plan.py)."""
import numpy as np

from grader.lessons.l3_batching_whole_programs import scan_plan as S

from .. import contract
from . import answers as A


def test_reference_passes_visible_and_hidden():
    contract.assert_passes(S.SCAN_PLAN, A.scan_plan)


def test_no_fixpoint_fails_hidden_cases_with_the_chain_named():
    res = S.SCAN_PLAN.check(A.scan_one_pass, hidden=True, seed=4)
    assert not res.passed and any("<-" in f.hint and "fixpoint" in f.hint for f in res.findings)


def test_no_broadcast_is_told_about_the_broadcast():
    res = S.SCAN_PLAN.check(A.scan_no_broadcast, hidden=True, seed=4)
    assert not res.passed and all("broadcast to the full batch" in f.hint or "carry c" in f.hint
                                  for f in res.findings)


def test_half_the_hidden_cases_need_the_fixpoint():
    cases = S.cases(np.random.default_rng(2), True)
    assert sum(S._interesting(c) for c in cases) >= 3


def test_the_pattern_matching_student_earns_nothing_on_hidden_cases():
    learnt = A.lookup(S.VISIBLE, A.scan_plan, A.scan_one_pass)
    assert S.SCAN_PLAN.check(learnt).passed
    for seed in range(5):
        assert not S.SCAN_PLAN.check(learnt, hidden=True, seed=seed).passed


def test_the_expectation_is_what_jax_does():
    assert S.expect(S.VISIBLE[0]) == {"carry": [True, False], "ys": [False], "broadcast": [0]}


def test_a_raising_answer_is_a_failed_result():
    contract.assert_raising_answer_fails(S.SCAN_PLAN)


def test_hidden_cases_are_fresh_and_never_visible():
    contract.assert_fresh(S.SCAN_PLAN)


def test_a_draw_repeating_a_visible_case_is_drawn_again(monkeypatch):
    contract.assert_repeat_is_drawn_again(monkeypatch, S, "_draw", S.SCAN_PLAN, S.VISIBLE[1])


def test_cases_observations_and_expectations_are_plain_data():
    contract.assert_plain_and_judged_alike(S.SCAN_PLAN, A.scan_plan)
