"""Exercise 3, a primitive that broadcasts nothing (grader/lessons/l1_rule_per_primitive/stack2.py)."""
import numpy as np
import pytest

from grader.lessons.l1_rule_per_primitive import stack2 as S2

from .. import contract
from . import answers as A


def test_reference_passes_visible_and_hidden():
    contract.assert_passes(S2.STACK2, A.stack2_rule, min_cases=4)


# broadcast_batcher transcribed (size 1 for the unmapped operand: stack2 refuses it), JAX's
# concatenate rule transcribed (right values, and every operand moved to the front), the lesson's
# vectorized rule copied, and a rule fitted to the visible cases.
PATTERN_MATCHERS = [A.stack2_broadcasting, A.stack2_concatenate_rule, A.stack2_vectorized,
                    A.fitted(S2.STACK2, A.stack2_rule, A.stack2_concatenate_rule)]


@pytest.mark.parametrize("answer", PATTERN_MATCHERS, ids=lambda a: a.__name__)
def test_a_pattern_matching_rule_earns_what_a_blank_earns(answer):
    contract.assert_earns_what_a_blank_earns(S2.STACK2, answer)


def test_the_honest_rule_earns_every_point_through_the_wire():
    contract.assert_honest_earns_everything(S2.STACK2, A.stack2_rule)


def test_the_concatenate_rule_is_right_in_value_and_moves_what_need_not_move():
    res = S2.check_stack2_rule(A.stack2_concatenate_rule, hidden=True, seed=3)
    assert not res.passed and all("moved" in f.hint for f in res.findings), res.summary()


def test_hidden_cases_ask_every_kind():
    for seed in range(5):
        kinds = [S2._kind(c) for c in S2.cases(np.random.default_rng(seed), True)
                 if c["outer_axes"] is None]
        assert set(kinds) == set(S2.KINDS)


def test_every_draw_has_a_case_where_moving_everything_to_the_front_is_a_needless_move():
    # The kinds' cases keep the batch off the front (an operand at the front would let the
    # concatenate rule's moves pass as needed ones): each draw, not only most, shows the mistake.
    for seed in range(200):
        for case in S2.cases(np.random.default_rng(seed), True)[:len(S2.KINDS)]:
            rank = len(case["shapes"][0]) - (case["in_axes"][0] is not None)
            mapped = [d % (rank + 1) for d in case["in_axes"] if d is not None]
            assert rank > 0 and 0 not in mapped, (seed, case)
    assert not any(S2.check_stack2_rule(A.stack2_concatenate_rule, hidden=True, seed=s).passed
                   for s in range(40))


def test_a_raising_answer_is_a_failed_result():
    contract.assert_raising_answer_fails(S2.STACK2)


def test_hidden_cases_are_fresh_and_never_visible():
    contract.assert_fresh(S2.STACK2)


def test_a_draw_repeating_a_visible_case_is_drawn_again(monkeypatch):
    contract.assert_repeat_is_drawn_again(monkeypatch, S2, "_case", S2.STACK2, S2.VISIBLE[1])


def test_cases_observations_and_expectations_are_plain_data():
    contract.assert_plain_and_judged_alike(S2.STACK2, A.stack2_rule)
