"""Exercise 1, the spy at every level (grader/lessons/l1_rule_per_primitive/spy.py)."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from grader.lessons.l1_rule_per_primitive import spy as S
from grader.wire import Failure

from .. import contract
from . import answers as A


def test_reference_passes_visible_and_hidden():
    contract.assert_passes(S.SPY, A.spy, min_cases=4)


# The pattern-matching students: the last lesson's spy copied (in_axes and one tracer), the
# course's tracer view transcribed (peel every BatchTracer), the two combined, the lesson's trace
# chain walked from the tracer's own trace, and the visible cases looked up. Each earns what a
# blank earns on the hidden cases; the honest spy earns it all.
PATTERN_MATCHERS = [A.spy_copies_the_lesson, A.spy_peels_tracers, A.spy_peels_after_in_axes,
                    A.spy_walks_from_the_tracer, A.fitted_spy(S.SPY, A.spy_peels_after_in_axes)]


@pytest.mark.parametrize("answer", PATTERN_MATCHERS, ids=lambda a: a.__name__)
def test_a_pattern_matching_spy_earns_what_a_blank_earns(answer):
    contract.assert_earns_what_a_blank_earns(S.SPY, answer)


def test_the_honest_spy_earns_every_point_through_the_wire():
    contract.assert_honest_earns_everything(S.SPY, A.spy)


def test_the_fitted_spy_passes_what_it_was_fitted_to():
    assert S.check_spy(A.fitted_spy(S.SPY, A.spy_peels_tracers)).passed


def test_every_hidden_case_runs_inside_other_vmaps_with_a_trap():
    for seed in range(5):
        hidden = S.cases(np.random.default_rng(seed), True)
        assert all(c["outer_axes"] for c in hidden)
        assert sum(len(c["outer_axes"]) == 2 for c in hidden) >= 5
        for case in hidden:
            patterns = {tuple(d is not None for d in r) for r in S.expect(case)}
            assert patterns & set(S.TRAPS[len(case["outer_axes"]) + 1]), case


def test_expectation_is_what_jax_shows():
    assert S.expect(S.VISIBLE[3]) == [[0, 1], [None, 1]]
    assert S.expect(S.VISIBLE[0]) == [[1], [None]]
    # worked out from the case, it is what the tracers say, level by level (tag by tag): what the
    # instructor's spy (the exercise notebook's solution) reads from them, case by case
    for seed in range(3):
        for case in S.cases(np.random.default_rng(seed), True):
            assert S.SPY.observe_safely((A.spy,), case) == S.expect(case), case


def test_a_raising_answer_is_a_failed_result():
    contract.assert_raising_answer_fails(S.SPY)


def test_failure_hints_name_the_stage():
    case = S.VISIBLE[0]
    assert "one list of batch dims" in S.failure_hint(case, Failure("report", "TypeError: x"))
    assert "ask whose tracer it is" in S.failure_hint(
        case, Failure("call", "AttributeError: 'ArrayImpl' object has no attribute 'val'"))
    ran_then_three = lambda f, ax, *a: (jax.vmap(f, in_axes=ax)(*a), 3)[1]  # noqa: E731
    assert "one list of batch dims" in A.hints(S.check_spy(ran_then_three))
    assert "never ran f under a vmap of its own" in A.hints(S.check_spy(lambda f, ax, *a: [[1]]))


def test_a_spy_that_runs_only_the_outer_vmap_did_not_run_its_own():
    def borrowed(f, in_axes, *args):
        f(*args)
        return [[None] for _ in args]
    assert "never ran f under a vmap of its own" in A.hints(S.check_spy(borrowed))


def test_hidden_cases_are_fresh_and_never_visible():
    contract.assert_fresh(S.SPY)


def test_a_draw_repeating_a_visible_case_is_drawn_again(monkeypatch):
    contract.assert_repeat_is_drawn_again(monkeypatch, S, "_draw", S.SPY, S.VISIBLE[3])


def test_cases_observations_and_expectations_are_plain_data():
    contract.assert_plain_and_judged_alike(S.SPY, A.spy)
    contract.assert_plain_and_judged_alike(S.SPY, A.spy_peels_tracers)


def test_the_example_in_the_exercise():
    assert A.spy(lambda x, y: x * y, (1, None), jnp.ones((3, 7, 5)), jnp.ones(5)) == [[1], [None]]
