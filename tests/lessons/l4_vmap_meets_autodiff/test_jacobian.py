"""Exercise 4, ``vmap_jacobian`` (grader/lessons/l4_vmap_meets_autodiff/jacobian.py)."""
import jax
import numpy as np
import pytest

from grader.lessons.l4_vmap_meets_autodiff import jacobian as J
from grader.lessons.l4_vmap_meets_autodiff.kit import functions
from grader.wire import unpack

from .. import contract
from . import answers as A

MISTAKES = {"loop": ("a Python loop over the basis",), "mode": ("this f is tall", "this f is wide"),
            "transposed": ("yours is the transpose",)}


def test_reference_passes_visible_and_hidden():
    contract.assert_passes(J.VMAP_JACOBIAN, A.vmap_jacobian, min_cases=2)


@pytest.mark.parametrize("wrong, mistake", [
    (A.looped_jacobian, "loop"), (A.transcribed_jacrev, "mode"), (A.transcribed_jacfwd, "mode"),
    (A.transposed_jacobian, "transposed"), (A.both_modes_jacobian, "mode")])
def test_each_mistake_gets_its_own_hint(wrong, mistake):
    contract.assert_hints_name(J.check_vmap_jacobian(wrong), MISTAKES, mistake)


@pytest.mark.parametrize("matcher", [A.transcribed_jacrev, A.transcribed_jacfwd,
                                     A.visible_jacobian],
                         ids=["jacrev transcribed", "jacfwd transcribed", "visible lookup"])
def test_the_pattern_matching_student_earns_nothing_on_hidden_cases(matcher):
    for seed in range(4):
        assert not J.VMAP_JACOBIAN.check(matcher, hidden=True, seed=seed).passed, seed


def test_every_hidden_draw_holds_tall_and_wide_functions():
    for seed in range(30):
        drawn = J.cases(np.random.default_rng(seed), True)
        assert any(c["n"] < c["m"] for c in drawn) and any(c["n"] > c["m"] for c in drawn)


def test_the_expectation_is_jaxs_jacobian_and_the_cheaper_modes_count():
    for case in J.VISIBLE:
        f, x = functions.make(case), functions.point(case)
        exp = J.expect(case)
        assert np.allclose(unpack(exp), jax.jacrev(f)(x), atol=1e-5)
        assert exp["count"] > 0


def test_the_honest_answer_stays_within_the_slack_on_every_function():
    from grader.core.jaxprs import Eqn
    from grader.lessons.l4_vmap_meets_autodiff.kit import observe
    for name in functions.NAMES:
        for n, m in ((3, 15), (15, 3)):
            case = {"f": name, "n": n, "m": m, "_seed": 5}
            got, exp = observe.jacobian(A.vmap_jacobian, case), J.expect(case)
            count = observe.counted([Eqn.from_plain(e) for e in got["eqns"]])
            assert count <= exp["count"] + J.slack(exp["count"]), (name, n, m, count, exp["count"])


def test_a_raising_answer_is_a_failed_result():
    contract.assert_raising_answer_fails(J.VMAP_JACOBIAN)


def test_hidden_cases_are_fresh_and_never_visible():
    contract.assert_fresh(J.VMAP_JACOBIAN)


def test_a_draw_repeating_a_visible_case_is_drawn_again(monkeypatch):
    contract.assert_repeat_is_drawn_again(monkeypatch, J, "_case", J.VMAP_JACOBIAN, J.VISIBLE[0])


def test_cases_observations_and_expectations_are_plain_data():
    contract.assert_plain_and_judged_alike(J.VMAP_JACOBIAN, A.vmap_jacobian)
    contract.assert_plain_and_judged_alike(J.VMAP_JACOBIAN, A.looped_jacobian)
