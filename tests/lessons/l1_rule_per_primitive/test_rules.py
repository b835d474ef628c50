"""Exercises 2 and 4, the batching rules (grader/lessons/l1_rule_per_primitive/rules.py)."""
import numpy as np
import pytest

from grader import core
from grader.lessons.l1_rule_per_primitive import rules as R
from grader.lessons.l1_rule_per_primitive.kit import observe

from .. import contract
from . import answers as A

RULES = {"softsign": (R.SOFTSIGN, A.softsign_rule), "scaled_diff": (R.SCALED_DIFF, A.scaled_diff_rule),
         "sumsq": (R.SUMSQ, A.sumsq_rule), "rowmax": (R.ROWMAX, A.rowmax_rule)}


@pytest.mark.parametrize("prim", sorted(RULES))
def test_reference_passes_visible_and_hidden(prim):
    exercise, answer = RULES[prim]
    contract.assert_passes(exercise, answer, min_cases=3)


def test_checks_leave_no_rules_behind():
    before = {n: len(t) for n, t in core.real_tables().items()}
    R.check_sumsq_rule(A.sumsq_rule)
    R.check_rowmax_rule(lambda *a, **k: 1 / 0)
    assert {n: len(t) for n, t in core.real_tables().items()} == before


@pytest.mark.parametrize("prim, wrong, hint", [
    ("softsign", A.softsign_front, "out_dim you returned"),
    ("softsign", A.softsign_loop, "a loop over examples"),
    ("scaled_diff", A.scaled_diff_materialised, "materialised a copy per example"),
    ("scaled_diff", A.scaled_diff_no_size1, "size-1 axis"),
    ("scaled_diff", A.scaled_diff_drops_scale, "**params"),
    ("sumsq", A.sumsq_unshifted, "at or after batch_dim"),
    ("rowmax", A.rowmax_vectorized, "defvectorized"),
    ("rowmax", A.rowmax_assumes_front, "dims"),
])
def test_wrong_rules_get_their_hint(prim, wrong, hint):
    assert hint in A.hints(RULES[prim][0].check(wrong))


def test_materialising_rule_also_fails_hidden():
    assert not R.check_scaled_diff_rule(A.scaled_diff_materialised, hidden=True).passed


@pytest.mark.parametrize("prim", sorted(RULES))
def test_a_raising_answer_is_a_failed_result(prim):
    contract.assert_raising_answer_fails(RULES[prim][0])


def test_release_stub_gets_a_helpful_hint():
    def stub(*args, **kwargs):
        raise NotImplementedError()
    assert "not written yet" in A.hints(R.check_softsign_rule(stub))


def test_rule_expectation_is_a_loop_over_examples():
    case = R.VISIBLE["scaled_diff"][0]
    x, y = observe.inputs(case)
    loop = np.stack([2.0 * (x[b] - y) for b in range(x.shape[0])])
    assert R.expect(case) == {"shape": loop.shape, "values": loop.ravel().tolist()}


def test_hidden_cases_cover_none_nesting_and_unlike_axes():
    rules = R.SCALED_DIFF.cases(np.random.default_rng(3), True)
    assert any(None in c["in_axes"] for c in rules) and any(c["outer_axes"] for c in rules)
    assert any(c["in_axes"][0] is not None and c["in_axes"][1] is not None
               and c["in_axes"][0] != c["in_axes"][1]
               for c in rules + R.SCALED_DIFF.cases(np.random.default_rng(0), False))


def test_hidden_binary_cases_always_include_each_kind():
    for _ in range(5):
        cases = R.SCALED_DIFF.cases(np.random.default_rng(), True)
        flat = [c for c in cases if c["outer_axes"] is None]
        assert sum(None in c["in_axes"] for c in flat) >= 2
        assert sum(None not in c["in_axes"] for c in flat) >= 2


@pytest.mark.parametrize("prim", sorted(RULES))
def test_hidden_cases_are_fresh_and_never_visible(prim):
    contract.assert_fresh(RULES[prim][0])


@pytest.mark.parametrize("prim", sorted(RULES))
def test_a_draw_repeating_a_visible_case_in_a_new_seed_is_drawn_again(monkeypatch, prim):
    visible = R.VISIBLE[prim][1]
    assert visible in RULES[prim][0].cases(np.random.default_rng(0), False)
    # The comparison the old test made (whole cases, seeds included) could not see this repeat.
    assert contract.renewed(visible) not in R.VISIBLE[prim]
    contract.assert_repeat_is_drawn_again(monkeypatch, R, "_rule_case", RULES[prim][0], visible)


@pytest.mark.parametrize("prim", sorted(RULES))
def test_cases_observations_and_expectations_are_plain_data(prim):
    exercise, answer = RULES[prim]
    contract.assert_plain_and_judged_alike(exercise, answer)


def test_wrong_answers_are_judged_alike_through_the_wire():
    judged = contract.assert_plain_and_judged_alike(R.SCALED_DIFF, A.scaled_diff_materialised)
    assert not judged.passed
    judged = contract.assert_plain_and_judged_alike(R.ROWMAX, contract.student_bug)
    assert judged.failed == judged.cases
