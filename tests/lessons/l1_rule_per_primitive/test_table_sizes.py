"""Exercise 3b, ``table_sizes`` (grader/lessons/l1_rule_per_primitive/table_sizes.py)."""
import numpy as np
import pytest

from grader import core
from grader.lessons.l1_rule_per_primitive import table_sizes as T
from grader.lessons.l1_rule_per_primitive.kit import standin

from .. import contract
from . import answers as A


def test_reference_passes_visible_and_hidden():
    contract.assert_passes(T.TABLE_SIZES, A.table_sizes, min_cases=3)


@pytest.mark.parametrize("wrong, hint", [
    (A.table_sizes_every_batchers_dict, "skippable_batchers"),
    (A.table_sizes_counts_proxies, "proxy"),
])
def test_wrong_table_readers_get_their_hint(wrong, hint):
    assert hint in A.hints(T.check_table_sizes(wrong))


def test_a_raising_answer_is_a_failed_result():
    contract.assert_raising_answer_fails(T.TABLE_SIZES)


def test_an_answer_of_the_wrong_type_is_told_what_to_return():
    assert "return a dict" in A.hints(T.check_table_sizes(lambda module: 3))


def test_cases_are_stand_ins_whose_counts_come_from_the_core():
    for hidden in (False, True):
        for case in T.cases(np.random.default_rng(2), hidden):
            assert case["layout"] != "installed"   # the installed counts move with imports
            module, _ = standin(case)
            assert T.expect(case) == {n: len(t) for n, t in core.real_tables(module).items()}


def test_hidden_cases_are_fresh_and_never_visible():
    contract.assert_fresh(T.TABLE_SIZES)


def test_a_draw_repeating_a_visible_case_is_drawn_again(monkeypatch):
    visible = T.cases(np.random.default_rng(0), False)[0]
    contract.assert_repeat_is_drawn_again(monkeypatch, T, "table_case", T.TABLE_SIZES, visible)


def test_cases_observations_and_expectations_are_plain_data():
    contract.assert_plain_and_judged_alike(T.TABLE_SIZES, A.table_sizes)
    contract.assert_plain_and_judged_alike(T.TABLE_SIZES, A.table_sizes_counts_proxies)
