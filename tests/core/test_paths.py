"""Routes through process_primitive, observed by instrumenting the trace."""
import jax
import jax.numpy as jnp
import pytest

from grader import core


def test_refusal_is_recorded_and_reraised(doubling_primitive):
    p = doubling_primitive("mystery")
    with core.watch() as steps:
        with pytest.raises(NotImplementedError, match="mystery"):
            jax.vmap(p.bind)(jnp.ones((4, 3)))
    assert [(s.primitive, s.route, s.in_dims) for s in steps] == [("mystery", "refused", (0,))]


def test_rule_route_names_the_table_that_holds_the_rule():
    steps = core.trace_routes(jax.vmap(jax.lax.add), jnp.ones((4, 3)), jnp.ones((4, 3)))
    (add,) = [s for s in steps if s.primitive == "add"]
    assert add.route == "rule"
    assert add.table == core.rule_for(jax.lax.add_p)[0]
    assert add.in_dims == (0, 0) and add.out_dims == 0


def test_unmapped_inputs_take_the_shortcut_only_without_a_consulted_rule():
    f = jax.vmap(lambda x, y: (jax.lax.sin(y), x), in_axes=(0, None))
    (sin,) = [s for s in core.trace_routes(f, jnp.ones((4, 3)), jnp.ones(3)) if s.primitive == "sin"]
    assert sin.in_dims == (None,)
    table = core.rule_for(jax.lax.sin_p)[0]
    if table == "primitive_batchers":      # split layout: old-style rules are skipped when unmapped
        assert (sin.route, sin.table) == ("shortcut", None)
    else:                                  # collapsed layout: the fancy rule is always called
        assert (sin.route, sin.table, sin.out_dims) == ("rule", table, None)


def test_watch_restores_every_rule_and_the_method():
    before = {n: dict(t) for n, t in core.real_tables().items()}
    method = core._jax.BatchTrace.process_primitive
    with pytest.raises(RuntimeError):
        with core.watch():
            jax.vmap(jnp.sin)(jnp.ones(3))
            raise RuntimeError("boom")
    after = core.real_tables()
    assert all(after[n][p] is r for n, t in before.items() for p, r in t.items())
    assert core._jax.BatchTrace.process_primitive is method


def test_inner_steps_follow_their_caller():
    steps = core.trace_routes(jax.vmap(jax.jit(jnp.sin)), jnp.ones((4, 3)))
    names = [(s.primitive, s.depth) for s in steps]
    jit_at = names.index(("jit", 0)) if ("jit", 0) in names else names.index(("pjit", 0))
    assert ("sin", 1) in names[jit_at + 1:]
