"""Exercise 2, ``clipped_scale`` (grader/lessons/l4_vmap_meets_autodiff/clipped_scale.py)."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from grader.lessons.l4_vmap_meets_autodiff import clipped_scale as C
from grader.lessons.l4_vmap_meets_autodiff.kit import observe
from grader.wire import unpack

from .. import contract
from . import answers as A

MISTAKES = {"no clip": ("without the clip",), "wrong shape": ("wrong shape",),
            "not custom": ("Only a custom VJP",)}


def test_reference_passes_visible_and_hidden():
    contract.assert_passes(C.CLIPPED_SCALE, A.clipped_scale, min_cases=3)


@pytest.mark.parametrize("wrong, mistake", [
    (A.unclipped_scale, "no clip"), (A.batch_summing_scale, "wrong shape"),
    (A.lesson_clipped_scale, "wrong shape"), (A.plain_scale, "not custom")])
def test_each_mistake_gets_its_own_hint(wrong, mistake):
    contract.assert_hints_name(C.check_clipped_scale(wrong), MISTAKES, mistake)


@pytest.mark.parametrize("matcher", [A.lesson_clipped_scale, A.visible_clipped_scale,
                                     A.batch_summing_scale],
                         ids=["copied lesson cell", "visible lookup", "sums the batch itself"])
def test_the_pattern_matching_student_earns_nothing_on_hidden_cases(matcher):
    for seed in range(4):
        assert not C.CLIPPED_SCALE.check(matcher, hidden=True, seed=seed).passed, seed


def test_every_hidden_draw_holds_a_shared_broadcast_w_a_full_w_and_a_scalar_w():
    for seed in range(30):
        drawn = C.cases(np.random.default_rng(seed), True)
        assert any(c["w_shape"] == () for c in drawn)
        assert any(c["w_shape"] == c["x_shape"] for c in drawn)
        assert any(len(c["x_shape"]) - len(c["w_shape"]) >= 2 and c["in_axes"][0] is None
                   for c in drawn)


def test_the_expectation_is_the_clipped_gradient_jax_would_take():
    # The same numbers from JAX's own autodiff of w * x, with the cotangent clipped by hand.
    case = C.VISIBLE[1]
    w, x, c = observe.scale_inputs(case)
    g = np.clip(c, -1, 1)
    vjp = lambda w, x, g: jax.vjp(lambda w, x: w * x, w, x)[1](g)     # noqa: E731
    gw, gx = jax.vmap(vjp, in_axes=(None, 0, 0))(w, x, g)
    exp = C.expect(case)
    assert np.allclose(unpack(exp["per_example"][0]), gw, atol=1e-5)
    assert np.allclose(unpack(exp["per_example"][1]), gx, atol=1e-5)
    assert np.allclose(unpack(exp["summed"][0]), np.asarray(gw).sum(0), atol=1e-4)


def test_the_clip_matters_on_every_visible_case():
    for case in C.VISIBLE:
        _, _, c = observe.scale_inputs(case)
        assert (np.abs(c) > 1).any() and (np.abs(c) < 1).any()


def test_a_raising_answer_is_a_failed_result():
    contract.assert_raising_answer_fails(C.CLIPPED_SCALE)


def test_hidden_cases_are_fresh_and_never_visible():
    contract.assert_fresh(C.CLIPPED_SCALE)


def test_a_draw_repeating_a_visible_case_is_drawn_again(monkeypatch):
    contract.assert_repeat_is_drawn_again(monkeypatch, C, "_case", C.CLIPPED_SCALE, C.VISIBLE[1])


def test_cases_observations_and_expectations_are_plain_data():
    contract.assert_plain_and_judged_alike(C.CLIPPED_SCALE, A.clipped_scale)
    contract.assert_plain_and_judged_alike(C.CLIPPED_SCALE, A.unclipped_scale)


def test_the_observer_reports_whether_it_is_a_custom_vjp():
    case = C.VISIBLE[0]
    assert observe.clipped_scale(A.clipped_scale, case)["custom_vjp"]
    assert not observe.clipped_scale(lambda w, x: jnp.asarray(w) * x, case)["custom_vjp"]
