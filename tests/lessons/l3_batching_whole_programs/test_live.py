"""What lesson 3 shows live (live.py, programs.py, selfchecks.py, figures.py)."""
import jax
import jax.numpy as jnp
import pytest
from jax import lax

from grader.lessons import l3_batching_whole_programs as L3
from grader.lessons.l3_batching_whole_programs import figures, selfchecks


def test_loop_trips_runs_as_often_as_the_slowest_example():
    runs, seen = L3.loop_trips([2, 0, 3])
    assert runs == 3 and seen == [[0, 1, 2], [0, 0, 0], [0, 1, 2]]


def test_map_costs_memory_grows_with_the_chunk():
    rows = L3.map_costs(L3.FUNCTIONS["outer"], jnp.ones((8, 16)), [None, 4])
    assert [r["largest_bytes"] for r in rows] == [1024, 4096, 8192]


def test_map_costs_inputs_and_stacked_outputs_stay_full_size_whatever_the_chunk():
    rows = L3.map_costs(lambda x: jnp.outer(x, x), jnp.ones((8, 16)), [None, 4])
    assert [r["largest_bytes"] for r in rows] == [8 * 16 * 16 * 4] * 3


@pytest.mark.parametrize("branches, operands, outputs, batched_operands", [
    (2, 1, 1, True), (2, 3, 2, False), (3, 2, 1, True), (4, 2, 3, False), (5, 1, 2, True)])
def test_a_switch_with_a_batched_index_costs_a_select_n_per_operand_per_branch_and_per_output(
        branches, operands, outputs, batched_operands):
    def switch(i, *ops):
        return lax.switch(i, [lambda *o, j=j: tuple(sum(o) * (j + 1) + q for q in range(outputs))
                              for j in range(branches)], *ops)
    ops = [jnp.ones((6, 3)) if batched_operands else jnp.ones(3)] * operands
    in_axes = (0, *(0 if batched_operands else None for _ in ops))
    cost = L3.cost(jax.vmap(switch, in_axes=in_axes), jnp.arange(6) % branches, *ops)
    assert cost["primitives"].count("select_n") == branches * operands + outputs


def test_the_selfcheck_says_which_calls_keep_the_cond_and_never_raises():
    assert [selfchecks.kept(n) for n in (1, 2, 3, 4)] == ["cond", "select_n", "cond", "select_n"]
    res = selfchecks.selfcheck_keep_cond({1: "select_n", 7: "cond"})
    assert not res.passed and not res.graded and len(res.findings) == 2
    assert not selfchecks.selfcheck_keep_cond(None).passed


def test_the_figures_draw():
    runs, seen = L3.loop_trips([1, 2])
    assert figures.trips_figure([1, 2], seen, runs).axes
    assert figures.map_figure(L3.map_costs(L3.FUNCTIONS["gram"], jnp.ones((4, 8)), [2])).axes
