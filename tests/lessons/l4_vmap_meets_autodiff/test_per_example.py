"""Exercise 1, ``per_example_grads`` (grader/lessons/l4_vmap_meets_autodiff/per_example.py)."""
import numpy as np
import pytest

from grader.lessons.l4_vmap_meets_autodiff import per_example as P
from grader.lessons.l4_vmap_meets_autodiff.kit import models
from grader.wire import unpack

from .. import contract
from . import answers as A

MISTAKES = {"loop": ("Python loop",), "mapped params": ("maps the parameters",),
            "summed": ("gradient of the whole batch's loss",), "batch last": ("goes first",),
            "axes": ("vmap refused your axes",)}


def test_reference_passes_visible_and_hidden():
    contract.assert_passes(P.PER_EXAMPLE, A.per_example_grads, min_cases=2)


@pytest.mark.parametrize("wrong, mistake", [
    (A.looped_grads, "loop"), (A.mapped_params, "mapped params"), (A.summed_grads, "summed"),
    (A.batch_last_grads, "batch last"), (A.lesson_per_example_grads, "axes")])
def test_each_mistake_gets_its_own_hint(wrong, mistake):
    res = P.PER_EXAMPLE.check(wrong, hidden=True, seed=3)
    contract.assert_hints_name(res, MISTAKES, mistake)


@pytest.mark.parametrize("matcher", [A.lesson_per_example_grads, A.visible_per_example_grads],
                         ids=["copied lesson cell", "visible lookup"])
def test_the_pattern_matching_student_earns_nothing_on_hidden_cases(matcher):
    # Visible cases may pass; every hidden draw holds a case it gets wrong: a blank's points.
    for seed in range(4):
        assert not P.PER_EXAMPLE.check(matcher, hidden=True, seed=seed).passed, seed


def test_every_hidden_draw_asks_for_a_shared_entry_and_a_moved_axis():
    for seed in range(30):
        drawn = P.cases(np.random.default_rng(seed), True)
        assert any(None in c["axes"].values() for c in drawn)
        assert any(a is not None and a % (len(models.data_shapes(c["model"], 1, 1)[n]) + 1)
                   for c in drawn for n, a in c["axes"].items())


def test_the_expectation_is_a_loop_of_grad():
    import jax
    case = P.VISIBLE[1]
    params, batch = models.draw(case)
    loss = models.LOSSES[case["model"]]
    want = [jax.grad(loss)(params, models.example(batch, case["axes"], i)) for i in range(case["B"])]
    got = {n: unpack(p) for n, p in P.expect(case).items()}
    for name in params:
        assert np.allclose(got[name], np.stack([g[name] for g in want]), atol=1e-6)


def test_a_raising_answer_is_a_failed_result():
    contract.assert_raising_answer_fails(P.PER_EXAMPLE)


def test_hidden_cases_are_fresh_and_never_visible():
    contract.assert_fresh(P.PER_EXAMPLE)


def test_a_draw_repeating_a_visible_case_is_drawn_again(monkeypatch):
    contract.assert_repeat_is_drawn_again(monkeypatch, P, "_case", P.PER_EXAMPLE, P.VISIBLE[0])


def test_cases_observations_and_expectations_are_plain_data():
    contract.assert_plain_and_judged_alike(P.PER_EXAMPLE, A.per_example_grads)
    contract.assert_plain_and_judged_alike(P.PER_EXAMPLE, A.mapped_params)
