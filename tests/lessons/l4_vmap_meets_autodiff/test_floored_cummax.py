"""Exercise 3, ``floored_cummax`` (grader/lessons/l4_vmap_meets_autodiff/floored_cummax.py)."""
import jax
import numpy as np
import pytest

from grader.lessons.l4_vmap_meets_autodiff import floored_cummax as F
from grader.lessons.l4_vmap_meets_autodiff.kit import kernels, observe
from grader.wire import unpack

from .. import contract
from . import answers as A

MISTAKES = {"loop": ("loops over the examples",), "no kernel": ("The kernel must do the work",),
            "outer vmap": ("the outer one batches your rule's own code",),
            "no broadcast": ("the kernel does not broadcast",),
            "out_batched": ("must return (out, out_batched)", "the result is batched"),
            "decoy": ("returns something else",), "through": ("computes the answer before",)}


def test_reference_passes_visible_and_hidden():
    contract.assert_passes(F.FLOORED_CUMMAX, A.floored_cummax, min_cases=4)


@pytest.mark.parametrize("wrong, mistake, hidden", [
    (A.sequential_floored_cummax, "loop", False), (A.lax_floored_cummax, "no kernel", False),
    (A.visible_floored_cummax, "outer vmap", True), (A.decoy_floored_cummax, "decoy", False),
    (A.through_floored_cummax, "through", False)])
def test_each_mistake_gets_its_own_hint(wrong, mistake, hidden):
    res = F.FLOORED_CUMMAX.check(wrong, hidden=hidden, seed=1)
    if mistake == "no kernel":      # not a custom_vmap at all: that finding comes first
        assert not res.passed and "custom_vmap" in res.findings[0].hint
        return
    contract.assert_hints_name(res, MISTAKES, mistake)


def test_a_rule_that_calls_the_kernel_without_broadcasting_is_told_so():
    res = F.check_floored_cummax(A.lesson_floored_cummax)
    assert not res.passed and any("does not broadcast" in f.hint for f in res.findings)


def test_a_rule_claiming_an_unbatched_result_is_told_what_out_batched_is():
    res = F.check_floored_cummax(A.unbatched_claim)
    assert not res.passed
    assert all("out_batched" in f.hint or "the result is batched" in f.hint for f in res.findings)


@pytest.mark.parametrize("matcher", [A.lesson_floored_cummax, A.visible_floored_cummax,
                                     A.sequential_floored_cummax, A.decoy_floored_cummax,
                                     A.through_floored_cummax],
                         ids=["copied lesson rule", "visible lookup", "sequential_vmap",
                              "kernel called for show", "answer passed through the kernel"])
def test_the_pattern_matching_student_earns_nothing_on_hidden_cases(matcher):
    for seed in range(4):
        assert not F.FLOORED_CUMMAX.check(matcher, hidden=True, seed=seed).passed, seed


def test_every_hidden_draw_leaves_each_argument_unbatched_once_and_nests_once():
    for seed in range(30):
        drawn = F.cases(np.random.default_rng(seed), True)
        patterns = {c["batched"] for c in drawn}
        assert {(False, True), (True, False)} <= patterns
        assert any(c["outer"] for c in drawn)


def test_the_kernel_refuses_vmap_and_takes_leading_axes():
    x, floor = np.arange(6.0, dtype=np.float32).reshape(2, 3) % 4, np.zeros(2, np.float32)
    with pytest.raises(NotImplementedError, match="running_max"):
        jax.vmap(kernels.running_max)(x, floor)
    assert np.allclose(kernels.running_max(x, floor), np.maximum.accumulate(x, axis=-1))
    with pytest.raises(TypeError, match="does not broadcast"):
        kernels.running_max(x, np.float32(0.0))


def test_the_expectation_is_a_loop_over_the_examples():
    case = F.VISIBLE[2]          # x batched along axis 1, floor shared
    x, floor = observe.floor_inputs(case)
    want = np.stack([np.maximum.accumulate(np.maximum(x[:, i], floor)) for i in range(case["B"])])
    assert np.allclose(unpack(F.expect(case)["out"]), want)


def test_a_raising_answer_is_a_failed_result():
    contract.assert_raising_answer_fails(F.FLOORED_CUMMAX)


def test_hidden_cases_are_fresh_and_never_visible():
    contract.assert_fresh(F.FLOORED_CUMMAX)


def test_a_draw_repeating_a_visible_case_is_drawn_again(monkeypatch):
    contract.assert_repeat_is_drawn_again(monkeypatch, F, "_case", F.FLOORED_CUMMAX, F.VISIBLE[1])


def test_cases_observations_and_expectations_are_plain_data():
    contract.assert_plain_and_judged_alike(F.FLOORED_CUMMAX, A.floored_cummax)
    contract.assert_plain_and_judged_alike(F.FLOORED_CUMMAX, A.visible_floored_cummax)


@pytest.mark.parametrize("way", sorted(A.COPIES))
def test_an_honest_rule_may_copy_an_unbatched_argument_any_way(way):
    contract.assert_passes(F.FLOORED_CUMMAX, A.copying_floored_cummax(A.COPIES[way]), min_cases=4)


def test_the_values_come_from_the_program_the_checks_read():
    """Round 16: a rule that looked whether it was traced showed the kernel to the checks and
    looped over the examples when run. The observation traces once and runs that program, so
    the rule only ever runs traced, and what it does then is what is graded."""
    seen = []

    @jax.custom_batching.custom_vmap
    def floored(x, floor):
        return A.L4.running_max(x, floor)

    @floored.def_vmap
    def _rule(axis_size, in_batched, x, floor):
        seen.append(isinstance(x, jax.core.Tracer))
        return A._two_faced_rule(axis_size, in_batched, x, floor)

    for case in F.VISIBLE:
        observe.floored_cummax(floored, case)
    assert seen and all(seen), seen
    contract.assert_passes(F.FLOORED_CUMMAX, A.two_faced_floored_cummax, min_cases=4)
