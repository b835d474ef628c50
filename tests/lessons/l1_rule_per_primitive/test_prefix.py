"""Exercise 4, a collective of the student's own (grader/lessons/l1_rule_per_primitive/prefix.py)."""
import numpy as np
import pytest

from grader.lessons.l1_rule_per_primitive import prefix as P
from grader.lessons.l1_rule_per_primitive.kit import observe

from .. import contract
from . import answers as A


def test_reference_passes_visible_and_hidden():
    contract.assert_passes(P.PREFIX, A.prefix_rule, min_cases=4)


# psum's rule transcribed (a total, unmapped), the lesson's vectorized rule copied into the table
# (no question whose axis it is, nothing for an unmapped value), and one fitted to the visible cases.
PATTERN_MATCHERS = [A.prefix_psum, A.prefix_vectorized,
                    A.fitted(P.PREFIX, A.prefix_rule, A.prefix_vectorized)]


@pytest.mark.parametrize("answer", PATTERN_MATCHERS, ids=lambda a: a.__name__)
def test_a_pattern_matching_rule_earns_what_a_blank_earns(answer):
    contract.assert_earns_what_a_blank_earns(P.PREFIX, answer)


def test_the_honest_rule_earns_every_point_through_the_wire():
    contract.assert_honest_earns_everything(P.PREFIX, A.prefix_rule)


def test_the_expectation_is_each_members_prefix():
    case = P.VISIBLE[0]
    (x,) = observe.inputs(case)
    assert np.allclose(P.expect(case)["values"], np.cumsum(x, axis=0).ravel())
    closed = P.VISIBLE[2]
    (x,) = observe.inputs(closed)
    c = observe.constant(closed)
    want = x + np.arange(1, 5)[:, None] * c
    assert np.allclose(P.expect(closed)["values"], want.ravel())


def test_hidden_cases_ask_every_kind():
    for seed in range(3):
        cases = P.cases(np.random.default_rng(seed), True)
        assert any(c["closed"] for c in cases) and any(len(c["levels"]) == 2 for c in cases)
        assert any(c["name"] == c["levels"][0]["name"] and len(c["levels"]) == 2 for c in cases)
        assert any(c["name"] == c["levels"][-1]["name"] and len(c["levels"]) == 2 for c in cases)


def test_a_raising_answer_is_a_failed_result():
    contract.assert_raising_answer_fails(P.PREFIX)


def test_hidden_cases_are_fresh_and_never_visible():
    contract.assert_fresh(P.PREFIX)


def test_a_draw_repeating_a_visible_case_is_drawn_again(monkeypatch):
    contract.assert_repeat_is_drawn_again(monkeypatch, P, "_case", P.PREFIX, P.VISIBLE[1])


def test_cases_observations_and_expectations_are_plain_data():
    contract.assert_plain_and_judged_alike(P.PREFIX, A.prefix_rule)
