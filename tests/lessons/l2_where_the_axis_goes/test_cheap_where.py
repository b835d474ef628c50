"""Exercise 3, a where that widens nothing (grader/lessons/l2_where_the_axis_goes/cheap_where.py)."""
import numpy as np
import pytest

from grader.lessons.l2_where_the_axis_goes import cheap_where as CW

from .. import contract
from . import answers as A


def test_reference_passes_visible_and_hidden():
    contract.assert_passes(CW.CHEAP_WHERE, A.cheap_where, min_cases=3)


# jnp.where itself (the lesson's select_n cell, copied), lax.select and lax.select_n (JAX's own
# selections), and one that is right on the visible cases' shapes only.
PATTERN_MATCHERS = [A.where_copied, A.where_select, A.where_select_n, A.where_fitted]


@pytest.mark.parametrize("answer", PATTERN_MATCHERS, ids=lambda a: a.__name__)
def test_a_pattern_matching_where_earns_what_a_blank_earns(answer):
    contract.assert_earns_what_a_blank_earns(CW.CHEAP_WHERE, answer)


def test_the_honest_where_earns_every_point_through_the_wire():
    contract.assert_honest_earns_everything(CW.CHEAP_WHERE, A.cheap_where)


def test_every_hidden_case_mixes_mapped_and_unmapped_operands():
    for seed in range(4):
        for case in CW.cases(np.random.default_rng(seed), True):
            mapped = [a is not None for axes in case["levels"] for a in axes]
            assert any(mapped) and not all(mapped), case


def test_the_expectation_is_jnp_where_on_each_example():
    case = CW.VISIBLE[0]
    p, x, y = CW.observe.where_args(case)
    want = np.where(p, x, y[None, :])
    assert np.array_equal(CW.unpack(CW.expect(case)), want)


def test_a_raising_answer_is_a_failed_result():
    contract.assert_raising_answer_fails(CW.CHEAP_WHERE)


def test_hidden_cases_are_fresh_and_never_visible():
    contract.assert_fresh(CW.CHEAP_WHERE)


def test_cases_observations_and_expectations_are_plain_data():
    contract.assert_plain_and_judged_alike(CW.CHEAP_WHERE, A.cheap_where)
