"""Exercise 3, ``pairwise`` (grader/lessons/l2_where_the_axis_goes/pairwise.py)."""
import numpy as np
import pytest

from grader.lessons.l2_where_the_axis_goes import pairwise as P
from grader.lessons.l2_where_the_axis_goes.kit import observe
from grader.wire import unpack

from .. import contract
from . import answers as A


def test_reference_passes_visible_and_hidden():
    contract.assert_passes(P.PAIRWISE, A.pairwise)


@pytest.mark.parametrize("wrong, words", [
    (A.swapped_nesting, "LEFT operand"),
    (A.elementwise_pair, "dot"),
    (A.ignores_order, "other order"),
    (A.widened_operand, "in_axes=None"),
])
def test_pairwise_mistakes(wrong, words):
    assert words in A.hints(P.check_pairwise(wrong))


def test_checking_the_same_answer_again_gives_the_same_verdict():
    # A student re-running the cell: nothing cached from the first check may change the second.
    first, second = P.check_pairwise(A.pairwise), P.check_pairwise(A.pairwise)
    assert first.passed and second.to_dict() == first.to_dict(), second.summary()


def test_a_raising_answer_is_a_failed_result():
    contract.assert_raising_answer_fails(P.PAIRWISE)


def test_expectation_is_every_pair_of_rows():
    for case in P.VISIBLE:
        x, y = observe.pair_inputs(case)
        pairs = np.array([[a @ b for b in y] for a in x])
        want = pairs if case["order"] == "ij" else pairs.T
        assert np.allclose(unpack(P.expect(case)), want, atol=1e-5)


def test_hidden_cases_are_fresh_and_never_visible():
    contract.assert_fresh(P.PAIRWISE)


def test_a_draw_repeating_a_visible_case_is_drawn_again(monkeypatch):
    contract.assert_repeat_is_drawn_again(monkeypatch, P, "_case", P.PAIRWISE, P.VISIBLE[0])


def test_cases_observations_and_expectations_are_plain_data():
    contract.assert_plain_and_judged_alike(P.PAIRWISE, A.pairwise)
    contract.assert_plain_and_judged_alike(P.PAIRWISE, A.swapped_nesting)


def test_an_einsum_beside_a_decoy_vmap_is_not_the_grid_of_vmapped_dots():
    import jax
    import jax.numpy as jnp

    def decoy(x, y, order="ij"):
        jax.vmap(jnp.sin)(x)                          # a vmap, but not of the dot
        return jnp.einsum("id,jd->ij", x, y) if order == "ij" else jnp.einsum("jd,id->ji", y, x)

    res = P.check_pairwise(decoy)
    assert not res.passed and "vmap batched only" in res.findings[0].got


def test_a_jitted_grid_of_vmapped_dots_is_seen_batching_every_time():
    import jax
    grid = jax.jit(jax.vmap(jax.vmap(lambda a, b: a @ b, in_axes=(None, 0)), in_axes=(0, None)))

    def jitted(x, y, order="ij"):
        return grid(x, y) if order == "ij" else grid(y, x)

    assert P.check_pairwise(jitted).passed and P.check_pairwise(jitted).passed
