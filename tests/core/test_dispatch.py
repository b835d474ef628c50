"""How a bind reaches a BatchTrace: the chain of traces, the entry points, the unwrapped rules."""
import jax
import jax.numpy as jnp
import pytest
from jax import lax

from grader import core
from grader.core._jax import history as H
from grader.core._jax import traces


def test_the_trace_chain_ends_at_the_trace_below_every_vmap():
    chains = []
    nested = jax.vmap(jax.vmap(lambda x: chains.append(core.trace_chain(x)) or x))
    nested(jnp.ones((2, 3)))
    jax.make_jaxpr(nested)(jnp.ones((2, 3)))
    assert chains == [("BatchTrace", "BatchTrace", "EvalTrace"),
                      ("BatchTrace", "BatchTrace", "DynamicJaxprTrace")]
    assert core.trace_chain(jnp.ones(2)) == ()


def test_the_current_trace_is_the_eval_trace_outside_and_the_batch_trace_inside():
    seen = []
    jax.vmap(lambda x: seen.append(core.current_trace() is x._trace) or x)(jnp.ones(2))
    assert seen == [True] and isinstance(core.current_trace(), traces.EvalTrace)


def test_custom_derivatives_take_their_own_entry_points():
    @jax.custom_jvp
    def f(x):
        return jnp.sin(x)
    f.defjvp(lambda p, t: (f(p[0]), jnp.cos(p[0]) * t[0]))
    calls = core.entries(jax.vmap(f), jnp.ones(3))
    assert (calls[0].method, calls[0].primitive, calls[0].in_dims) == (
        "process_custom_jvp_call", "custom_jvp_call", (0,))
    assert ("process_primitive", "sin") in [(e.method, e.primitive) for e in calls if e.depth > 0]
    assert not any(e.method == "process_primitive" and e.primitive == "custom_jvp_call" for e in calls)


def test_watch_entries_restores_every_method_even_when_the_block_raises():
    before = {m: getattr(core._jax.BatchTrace, m) for m in core.entry_points()}
    with pytest.raises(RuntimeError):
        with core.watch_entries():
            raise RuntimeError("boom")
    assert {m: getattr(core._jax.BatchTrace, m) for m in core.entry_points()} == before


def test_the_entry_points_follow_the_history():
    points = core.entry_points()
    assert points[:3] == ("process_primitive", "process_custom_jvp_call", "process_custom_vjp_call")
    assert ("process_call" in points) == H.expected("process_call")


@pytest.mark.parametrize("prim, name", [
    (lax.concatenate_p, "_concatenate_batch_rule"), (lax.select_n_p, "_select_batch_rule"),
    (lax.sin_p, "vectorized_batcher"), (lax.dot_general_p, "_dot_batch_rule"),
])
def test_rule_function_unwraps_partials_and_the_compatibility_wrapper(prim, name):
    assert core.rule_function(prim).__name__ == name


def test_primitive_named_finds_unexported_primitives_and_names_a_missing_one():
    assert core.rule_function(core.primitive_named("add_any")).__name__ == "add_batched"
    assert core.primitive_named("jit") is core.primitive_named("jit")     # pjit on older releases
    with pytest.raises(LookupError, match="no_such_primitive"):
        core.primitive_named("no_such_primitive")


def test_source_lines_shows_the_matching_lines_and_names_a_missing_piece():
    text = core.source_lines(core._jax.batching.BatchTrace.to_batch_info, "tag is self.tag")
    assert text.count("\n") == 0 and "tag is self.tag" in text
    with pytest.raises(LookupError, match="not in there"):
        core.source_lines(core._jax.batching.BatchTrace.to_batch_info, "not in there")


def test_source_unwraps_decorated_batching_helpers():
    assert "BatchTrace(parent_trace, tag, axis_data)" in core.source(core._jax.batching._batch_inner)


def test_the_dispatcher_hands_the_current_trace_to_bind_with_trace():
    fn = traces.bind_dispatcher()
    assert fn.__name__ == H.expected("bind_takes_current_trace")
    assert "trace_ctx.trace" in core.source(fn)


def test_watch_transposes_sees_the_rules_a_vjp_runs_and_restores_the_tables():
    tables = {n: dict(t) for n, t in traces.transpose_tables().items()}
    per = lambda w: jax.vmap(lambda w, x: w * x, in_axes=(None, 0))(w, jnp.ones((4, 3)))
    jax.clear_caches()           # a transposed program is cached: its rules would not run again
    with core.watch_transposes() as bound:
        jax.vjp(per, jnp.ones(3))[1](jnp.ones((4, 3)))
    assert {"mul", "broadcast_in_dim"} <= {b.rule for b in bound}
    after = traces.transpose_tables()
    assert all(after[n][p] is r for n, t in tables.items() for p, r in t.items())


def test_the_axis_environment_holds_the_named_axis_only_inside():
    seen = []
    jax.vmap(lambda x: seen.append(core.axis_env_sizes()) or x, axis_name="i")(jnp.ones(3))
    assert seen == [{"i": 3}] and core.axis_env_sizes() == {}


def test_watch_recorded_sees_the_binds_that_become_equations_and_their_depth():
    from jax import lax as _lax
    nested = jax.vmap(jax.vmap(_lax.mul, in_axes=(0, None)), in_axes=(None, 0))
    args = jnp.ones(3), jnp.ones(4)
    method = traces.jaxpr_trace_class().process_primitive
    with core.watch_recorded() as recorded:
        jaxpr = jax.make_jaxpr(nested)(*args)
    assert [name for name, _ in recorded] == core.primitives(core.summarize(jaxpr))
    assert {depth for _, depth in recorded} == {2}
    assert traces.jaxpr_trace_class().process_primitive is method


def test_reads_axis_data_tells_a_rule_that_uses_the_axis_from_one_that_only_takes_it():
    assert core.reads_axis_data(core.rule_function(core.primitive_named("axis_index"))) is True
    def takes(axis_data, vals, dims):
        return vals[0], dims[0]
    def old_style(vals, dims):
        return vals[0], dims[0]
    assert core.reads_axis_data(takes) is False and core.reads_axis_data(old_style) is None
