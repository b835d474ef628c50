"""Exercise 1, ``my_matchaxis`` (grader/lessons/l2_where_the_axis_goes/matchaxis.py)."""
import jax
import numpy as np
import pytest

from grader.lessons.l2_where_the_axis_goes import matchaxis as M
from grader.lessons.l2_where_the_axis_goes.kit import observe
from grader.wire import Failure

from .. import contract
from . import answers as A


def test_reference_passes_visible_and_hidden():
    contract.assert_passes(M.MATCHAXIS, A.my_matchaxis)


@pytest.mark.parametrize("wrong, words", [
    (A.swapaxes_matchaxis, "swapaxes"),
    (A.ndim_matchaxis, "ndim + 1"),
    (A.always_sum_matchaxis, "raises"),
    (A.none_raises_matchaxis, "None == None"),
    (A.reshape_matchaxis, "reshape"),
])
def test_matchaxis_mistakes(wrong, words):
    assert words in A.hints(M.check_matchaxis(wrong))


def test_a_raising_answer_is_a_failed_result():
    # Raising is right in the error case, so not every case fails.
    contract.assert_raising_answer_fails(M.MATCHAXIS, every_case=False)


def test_hidden_matchaxis_cases_cover_every_kind():
    for _ in range(3):
        kinds = {M.kind(c["src"], c["dst"], c["sum_match"])
                 for c in M.cases(np.random.default_rng(), True)}
        assert {"move", "broadcast", "sum", "error"} <= kinds


def test_expectation_is_what_vmap_does():
    case = {"shape": (4, 2, 3), "src": 0, "dst": 2, "size": 4, "sum_match": False}
    x = observe.matchaxis_input(case)
    want = np.asarray(jax.vmap(lambda r: r, in_axes=0, out_axes=2)(x))
    exp = M.expect(case)
    assert exp["shape"] == want.shape and exp["data"] == want.tobytes()
    err = M.expect({**case, "dst": None})
    assert isinstance(err, Failure)


def test_kind_follows_jaxs_order():
    assert M.kind(None, None, False) == "same" and M.kind(1, 1, True) == "same"
    assert M.kind(0, 2, False) == "move" and M.kind(None, 0, False) == "broadcast"
    assert M.kind(0, None, True) == "sum" and M.kind(0, None, False) == "error"


def test_hidden_cases_are_fresh_and_never_visible():
    contract.assert_fresh(M.MATCHAXIS)


def test_a_draw_repeating_a_visible_case_is_drawn_again(monkeypatch):
    contract.assert_repeat_is_drawn_again(monkeypatch, M, "_case", M.MATCHAXIS, M.VISIBLE[1])


def test_cases_observations_and_expectations_are_plain_data():
    contract.assert_plain_and_judged_alike(M.MATCHAXIS, A.my_matchaxis)
    contract.assert_plain_and_judged_alike(M.MATCHAXIS, A.none_raises_matchaxis)


def test_a_sum_to_a_scalar_keeps_its_rank():
    # x.sum(0) of a (3,) is 0-d; a (1,) answer holds the same number but is not JAX's result.
    case = {"shape": (3,), "src": 0, "dst": None, "size": 3, "sum_match": True}
    def keepdims(src, dst, x, size, sum_match=False):
        return x.sum(src, keepdims=True)
    assert M.compare(case, M.expect(case), observe.matchaxis(A.my_matchaxis, case)) is None
    finding = M.compare(case, M.expect(case), observe.matchaxis(keepdims, case))
    assert finding is not None and "shape ()" in finding.expected
