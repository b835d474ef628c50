"""What lesson 2 shows live (grader/lessons/l2_where_the_axis_goes/live.py): every row traced on
the installed JAX, and the facts the lesson's text relies on hold there."""
import jax
import jax.numpy as jnp

from grader import core
from grader.lessons.l2_where_the_axis_goes import live


def test_mv_table_facts():
    rows = {r["row"]: r for r in live.mv_table()}
    assert sorted(rows) == list(range(1, len(live.MV_CALLS) + 1))
    assert rows[3]["eqns"] == rows[4]["eqns"]
    assert "transpose" in rows[5]["prims"] and "transpose" not in rows[7]["prims"]
    assert rows[5]["eqns"][0] == rows[7]["eqns"][0]


def test_mv_table_rows_are_what_vmap_gives():
    for row, (in_axes, out_axes, shapes) in zip(live.mv_table(), live.MV_CALLS):
        out = jax.vmap(live.mv, in_axes=in_axes, out_axes=out_axes)(*[jnp.ones(s) for s in shapes])
        assert row["shape"] == out.shape and "dot_general" in row["prims"]


def test_formatted_tables_have_a_line_per_call():
    assert len(live.format_mv_calls().splitlines()) == len(live.MV_CALLS) + 1
    assert len(live.format_mv_table(live.mv_table()).splitlines()) == len(live.MV_CALLS) + 1
    assert len(live.format_dot_calls().splitlines()) == len(live.DOT_CALLS) + 1
    assert len(live.format_reduce_calls().splitlines()) == len(live.REDUCE_CALLS) + 1


def test_dot_numbers_and_reduce_axes_are_read_off_the_jaxpr():
    # Both operands batched: the batch is a batch-dimension pair.
    (_, _), (lhs_batch, rhs_batch) = live.dot_numbers(2)
    assert lhs_batch and rhs_batch
    (_, _), batch = live.dot_numbers(1)
    assert batch == ((), ())
    assert live.reduce_axes(1) == (2,)          # x (6, 2) summed over 1, batch in front
    assert len(live.reduce_axes(5)) == 2        # "all" of a (6, 2): two axes, never the batch


def test_watch_matchaxis_sees_the_sum_case():
    @jax.custom_vjp
    def scale(w, x):
        return w * x
    scale.defvjp(lambda w, x: (w * x, (w, x)), lambda res, g: (g * res[1], g * res[0]))
    xs = jnp.ones((4, 3))
    original = core._jax.batching.matchaxis
    with live.watch_matchaxis() as calls:
        jax.grad(lambda w: jnp.sum(jax.vmap(scale, in_axes=(None, 0))(w, xs)))(jnp.ones(3))
    assert (0, None, True) in calls
    assert core._jax.batching.matchaxis is original


def test_jaxs_matchaxis_can_be_called_while_watched():
    x = jnp.ones((4, 3))
    with live.watch_matchaxis() as calls:
        out = core.matchaxis(0, 1, x, 4, False)
        vmapped = jax.vmap(lambda r: r, out_axes=1)(x)
    assert out.shape == vmapped.shape == (3, 4)
    assert (0, 1, False) in calls


def test_rule_costs_name_each_rule_and_find_what_it_widens():
    rows = {r["label"]: r for r in live.rule_costs()}
    assert len(rows) == len(live.RULE_CASES)
    for label, prim, *_ in live.RULE_CASES:
        assert rows[label]["rule"] == core.rule_function(core.primitive_named(prim)).__name__
    assert rows["w * x"]["widened"] == [] and rows["w * x"]["size1"]
    assert all(rows[label]["widened"] for label in rows if label not in ("w * x", "concatenate([a, b]), both at 1"))
    assert rows["concatenate([a, b]), both at 1"]["transposes"] == 3
    assert len(live.format_rule_costs(rows.values()).splitlines()) == len(rows) + 1


def test_widened_to_batch_counts_only_broadcasts_that_add_the_batch():
    eqns = (core.Eqn("broadcast_in_dim", ((3,),), ((8, 3),)), core.Eqn("broadcast_in_dim", ((),), ((3,),)),
            core.Eqn("broadcast_in_dim", ((3,),), ((1, 3),)))
    assert live.widened_to_batch(eqns, 8) == [((3,), (8, 3))]
