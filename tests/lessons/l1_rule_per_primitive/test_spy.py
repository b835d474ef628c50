"""Exercise 1, the spy (grader/lessons/l1_rule_per_primitive/spy.py)."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from grader import core
from grader.lessons.l1_rule_per_primitive import spy as S
from grader.wire import Failure

from .. import contract
from . import answers as A


def test_reference_passes_visible_and_hidden():
    contract.assert_passes(S.SPY, A.spy, min_cases=3)


@pytest.mark.parametrize("wrong, hint", [
    (A.spy_copies_in_axes, "normalises a negative in_axes"),
    (A.spy_reports_seen_shape, "x.shape hides the batch axis"),
    (A.spy_assumes_tracers, "is not a BatchTracer"),
    (A.spy_trusts_hasattr, "OUTER vmap"),
])
def test_wrong_spies_get_their_hint(wrong, hint):
    assert hint in A.hints(S.check_spy(wrong))


def test_nested_trap_is_in_the_hidden_cases_too():
    hidden = S.cases(np.random.default_rng(), hidden=True)
    assert any(c["outer_axes"] is not None and None in c["in_axes"] for c in hidden)
    assert "OUTER vmap" in A.hints(S.check_spy(A.spy_trusts_hasattr, hidden=True))


def test_hidden_cases_cover_none_negative_axes_and_nesting():
    cases = [c for seed in range(3) for c in S.cases(np.random.default_rng(seed), True)]
    axes = [a for c in cases for a in c["in_axes"]]
    assert None in axes and any(a is not None and a < 0 for a in axes)
    assert any(c["outer_axes"] for c in cases)


def test_expectation_is_what_jax_shows():
    case = S.VISIBLE[0]
    _, views = core.observe(lambda x, y: x, case["in_axes"], jnp.ones(case["shapes"][0]),
                            jnp.ones(case["shapes"][1]))
    assert S.expect(case) == [(views[0].batch_dim, views[0].shape, views[0].val_shape),
                              (None, views[1].shape, views[1].shape)]
    assert S.expect(case) == A.spy(lambda x, y: x * y, (1, None), jnp.ones((3, 7, 5)), jnp.ones(5))


def test_a_raising_answer_is_a_failed_result():
    contract.assert_raising_answer_fails(S.SPY)


def test_failure_hints_name_the_stage():
    case = S.VISIBLE[0]
    assert "one (batch_dim, shape, value_shape) tuple" in S.failure_hint(
        case, Failure("report", "TypeError: 'int' object is not iterable"))
    assert "not a BatchTracer" in S.failure_hint(
        case, Failure("call", "AttributeError: 'ArrayImpl' object has no attribute 'val'"))
    ran_then_three = lambda f, ax, *a: (jax.vmap(f, in_axes=ax)(*a), 3)[1]  # noqa: E731
    assert "one (batch_dim, shape, value_shape)" in A.hints(S.check_spy(ran_then_three))
    assert "never called f under a vmap" in A.hints(S.check_spy(lambda f, ax, *a: 3))


def test_hidden_cases_are_fresh_and_never_visible():
    contract.assert_fresh(S.SPY)


def test_a_draw_repeating_a_visible_case_is_drawn_again(monkeypatch):
    contract.assert_repeat_is_drawn_again(monkeypatch, S, "_spy_case", S.SPY, S.VISIBLE[3])


def test_cases_observations_and_expectations_are_plain_data():
    contract.assert_plain_and_judged_alike(S.SPY, A.spy)
    contract.assert_plain_and_judged_alike(S.SPY, A.spy_trusts_hasattr)
