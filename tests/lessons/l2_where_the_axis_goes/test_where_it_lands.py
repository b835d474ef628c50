"""Exercise 1, where the batch lands (grader/lessons/l2_where_the_axis_goes/where_it_lands.py)."""
import numpy as np
import pytest

from grader.lessons.l2_where_the_axis_goes import where_it_lands as W

from .. import contract
from . import answers as A


def test_reference_passes_visible_and_hidden():
    contract.assert_passes(W.WHERE_IT_LANDS, A.where_it_lands, min_cases=3)


def test_the_rules_the_wrong_answers_swap_are_the_solution_unswapped():
    # each wrong answer is landing() with one rule swapped: with none swapped it is the solution
    for seed in range(3):
        for case in W.cases(np.random.default_rng(seed), True):
            assert A.lands_by_the_rules(case["program"], case["in_dims"]) == \
                A.where_it_lands(case["program"], case["in_dims"]), case


# Lesson 2's "nothing moves" copied (every batch stays where it arrived), broadcast_batcher's move
# to the front taken for every rule, and the visible cases looked up: each earns what a blank
# earns. (vmap asked to say where the axis lands is the fourth: it needs the judge's watch, and
# goes to a human: tests/lessons/test_pattern_matchers_judged.py.)
PATTERN_MATCHERS = [A.lands_stays, A.lands_front_always, A.lands_fitted(W.WHERE_IT_LANDS)]


@pytest.mark.parametrize("answer", PATTERN_MATCHERS, ids=lambda a: a.__name__)
def test_a_pattern_matching_answer_earns_what_a_blank_earns(answer):
    contract.assert_earns_what_a_blank_earns(W.WHERE_IT_LANDS, answer)


def test_the_honest_answer_earns_every_point_through_the_wire():
    contract.assert_honest_earns_everything(W.WHERE_IT_LANDS, A.where_it_lands)


def test_asking_vmap_gives_the_expectation_in_the_kernel():
    # The threat is real: the lookup this exercise forbids passes where nothing watches it.
    assert W.check_where_it_lands(A.lands_by_vmap, hidden=True, seed=2).passed


def test_the_exercise_forbids_running_vmap_while_the_answer_works():
    calls = W.WHERE_IT_LANDS.delegation.calls
    assert W.WHERE_IT_LANDS.delegation.strict and "jax._src.api:vmap" in calls


def test_every_hidden_set_asks_every_rule_branch():
    for seed in range(4):
        drawn = W.cases(np.random.default_rng(seed), True)
        assert set().union(*(W._kinds(c, W.expect(c)) for c in drawn)) >= W.ALL_KINDS


def test_expectation_is_what_vmap_leaves():
    assert W.expect(W.VISIBLE[0]) == {"s1": 1, "s2": 1}
    assert W.expect(W.VISIBLE[1]) == {"s1": 0, "s2": 0, "s3": 2}


def test_a_raising_answer_is_a_failed_result():
    contract.assert_raising_answer_fails(W.WHERE_IT_LANDS)


def test_hidden_cases_are_fresh_and_never_visible():
    contract.assert_fresh(W.WHERE_IT_LANDS, key=lambda c: repr((c["program"], c["in_dims"])))


def test_cases_observations_and_expectations_are_plain_data():
    contract.assert_plain_and_judged_alike(W.WHERE_IT_LANDS, A.where_it_lands)
