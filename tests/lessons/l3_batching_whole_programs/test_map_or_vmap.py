"""Exercise 4, ``run_batched`` (grader/lessons/l3_batching_whole_programs/map_or_vmap.py)."""
import pytest

from grader.lessons.l3_batching_whole_programs import map_or_vmap as M

from .. import contract
from . import answers as A


def test_reference_passes_visible_and_hidden():
    contract.assert_passes(M.MAP_OR_VMAP, A.run_batched)


@pytest.mark.parametrize("wrong, words", [
    (A.always_vmap, "no array over"),
    (A.always_map, "as many as fit"),
    (A.fixed_batch_size, "batch_size"),
    (A.python_chunks, "Python loop"),
    (A.map_when_it_fits, "one-trip scan"),
])
def test_each_pattern_matching_answer_earns_nothing_on_hidden_cases(wrong, words):
    for seed in range(3):
        res = M.MAP_OR_VMAP.check(wrong, hidden=True, seed=seed)
        assert not res.passed
    assert any(words in f.hint or words in f.expected for f in res.findings), res.summary()


def test_the_chunk_is_the_most_examples_that_fit():
    case = dict(M.VISIBLE[1])
    assert M.chunk(case) == 6 and M.chunk({**case, "limit": 10**9}) == case["B"]


def test_a_raising_answer_is_a_failed_result():
    contract.assert_raising_answer_fails(M.MAP_OR_VMAP)


def test_hidden_cases_are_fresh_and_never_visible():
    contract.assert_fresh(M.MAP_OR_VMAP)


def test_a_draw_repeating_a_visible_case_is_drawn_again(monkeypatch):
    contract.assert_repeat_is_drawn_again(monkeypatch, M, "_draw", M.MAP_OR_VMAP, M.VISIBLE[0])


def test_cases_observations_and_expectations_are_plain_data():
    contract.assert_plain_and_judged_alike(M.MAP_OR_VMAP, A.run_batched)
