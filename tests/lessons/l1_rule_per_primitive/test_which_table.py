"""Exercise 3a, ``which_table`` (grader/lessons/l1_rule_per_primitive/which_table.py)."""
import jax
import jax.extend.core.primitives as public_primitives
import numpy as np
import pytest

from grader import core
from grader.lessons.l1_rule_per_primitive import which_table as W
from grader.lessons.l1_rule_per_primitive.kit import query_prim, standin

from .. import contract
from . import answers as A


def test_reference_passes_visible_and_hidden():
    contract.assert_passes(W.WHICH_TABLE, A.which_table, min_cases=3)


@pytest.mark.parametrize("wrong, hint", [
    (A.which_table_asks_proxies, "isinstance(table, dict)"),
    (A.which_table_by_name, "not names"),
    (A.which_table_by_name, "share a name"),
])
def test_wrong_table_readers_get_their_hint(wrong, hint):
    assert hint in A.hints(W.check_which_table(wrong))


def test_a_raising_answer_is_a_failed_result():
    contract.assert_raising_answer_fails(W.WHICH_TABLE)


def test_an_answer_of_the_wrong_type_is_told_what_to_return():
    assert "a str" in A.hints(W.check_which_table(lambda module, prim: 3))


def test_expectations_come_from_the_core():
    for case in W.VISIBLE:
        module, objects = standin(case)
        holders = core.tables_holding(query_prim(case, objects), module)
        assert W.expect(case) == (holders[0] if holders else None)
    installed = next(c for c in W.VISIBLE if c["query"] == ("registered", "sin"))
    assert W.expect(installed) == core.rule_for(jax.lax.sin_p)[0]


def test_hidden_cases_cover_every_layout():
    layouts = {c["layout"] for c in W.cases(np.random.default_rng(), True)}
    assert layouts == {"split", "collapsed-readable", "collapsed-readthrough", "collapsed-writeonly",
                       "legacy", "installed"}


def test_hidden_cases_are_fresh_and_never_visible():
    contract.assert_fresh(W.WHICH_TABLE)


def test_a_draw_repeating_a_visible_case_is_drawn_again(monkeypatch):
    contract.assert_repeat_is_drawn_again(monkeypatch, W, "table_case", W.WHICH_TABLE, W.VISIBLE[0])


def test_cases_observations_and_expectations_are_plain_data():
    contract.assert_plain_and_judged_alike(W.WHICH_TABLE, A.which_table)
    contract.assert_plain_and_judged_alike(W.WHICH_TABLE, A.which_table_asks_proxies)


# ---- the installed primitives asked about by name --------------------------------------------------

def test_installed_pool_is_public_primitives_in_exactly_one_table_of_a_fresh_process():
    pool = W.installed_pool()
    assert pool and "sin" in pool
    fresh = core.read_fresh(warmup=False)
    for name in pool:
        prim = getattr(public_primitives, f"{name}_p", None)
        assert prim is not None and prim.name == name, name
        assert len(fresh.holders(name)) == 1, (name, fresh.holders(name))
        # This process imported more than a student's; the rule is still in that one table.
        assert core.tables_holding(prim) == tuple(fresh.holders(name)), name


def test_installed_cases_ask_only_about_the_pool():
    drawn = [c for seed in range(3) for c in W.cases(np.random.default_rng(seed), True)
             if c["layout"] == "installed"]
    assert drawn and all(c["query"][1] in W.installed_pool() for c in drawn)
    assert {c["query"][0] for c in drawn} == {"registered", "fresh"}
