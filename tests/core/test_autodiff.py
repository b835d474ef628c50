"""Where vmap meets autodiff (grader/core/autodiff.py, grader/core/_jax/autodiff.py): the methods a
call reaches, the transpose rule behind each backward equation, a program's cost; every watch
leaves JAX as it found it."""
import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

from grader import core
from grader.core import _jax
from grader.core._jax import autodiff as AD


def test_a_custom_jvp_reaches_its_own_method_and_its_body_process_primitive():
    @jax.custom_jvp
    def f(x):
        return lax.sin(x)
    f.defjvp(lambda p, t: (lax.sin(p[0]), lax.cos(p[0]) * t[0]))
    hits = core.reached(jax.vmap(f), jnp.ones(3))
    assert hits[0] == core.Reached("process_custom_jvp_call", "custom_jvp_call", 3)
    assert core.Reached("process_primitive", "sin", 3) in hits


def test_watch_methods_puts_the_methods_back_even_when_the_block_raises():
    before = {m: getattr(_jax.BatchTrace, m) for m in core.autodiff.METHODS}
    with pytest.raises(ZeroDivisionError):
        with core.watch_methods():
            raise ZeroDivisionError
    assert {m: getattr(_jax.BatchTrace, m) for m in before} == before


def test_a_broadcast_transposes_to_a_sum_bound_by_its_rule():
    widen = jax.vmap(lambda w: w * 2.0, in_axes=None, out_axes=0, axis_size=4)
    with core.watch_transposes() as bound:
        jax.linear_transpose(widen, jnp.ones(3))(jnp.ones((4, 3)))
    assert core.Bound("broadcast_in_dim", "reduce_sum", ((4, 3),), ((3,),)) in bound


def test_an_implicit_size_one_broadcast_is_summed_by_the_elementwise_rule():
    xs = jnp.ones((4, 3))
    scaled = lambda w: jax.vmap(lambda w, x: w * x, in_axes=(None, 0))(w, xs)   # noqa: E731
    with core.watch_transposes() as bound:
        jax.vjp(scaled, jnp.ones(3))[1](jnp.ones((4, 3)))
    assert core.Bound("mul", "reduce_sum", ((4, 3),), ((3,),)) in bound


def test_under_vmap_only_the_rules_own_binds_count_not_the_batching_rules():
    loss = lambda w, x: jnp.sum(lax.dot(x, w) ** 2)                              # noqa: E731
    with core.watch_transposes() as bound:
        jax.vmap(jax.grad(loss), in_axes=(None, 0))(jnp.ones((3, 2)), jnp.ones((5, 3)))
    dots = [b for b in bound if b.rule == "dot_general" and b.primitive == "dot_general"]
    assert dots and all(5 not in s for b in dots for s in b.in_shapes + b.out_shapes)


def test_watch_transposes_restores_tables_and_bind_and_keeps_rules_registered_meanwhile():
    tables = {n: dict(t) for n, t in AD.transpose_tables().items()}
    bind = _jax.new_primitive("x").bind.__func__
    with pytest.raises(RuntimeError):
        with core.watch_transposes():
            jax.grad(jax.jit(lambda x: jnp.sin(x).sum()))(jnp.ones(2))   # may register rules
            raise RuntimeError("inside")
    assert _jax.new_primitive("y").bind.__func__ is bind
    for name, before in tables.items():
        after = AD.transpose_tables()[name]
        assert all(after[p] is rule for p, rule in before.items()), name
    jax.grad(jax.jit(lambda x: jnp.cos(x).sum()))(jnp.ones(2))          # still differentiates


def test_unwrapped_reaches_the_function_inside_partials():
    def rule(ct):
        return ct
    assert AD.unwrapped(functools.partial(functools.partial(lambda f, x: f(x), rule))) is rule
    assert AD.unwrapped(rule) is rule
    assert AD.match_axes_and_sum.__name__ == "_match_axes_and_sum"


def test_cost_counts_equations_and_the_elements_they_write():
    eqns = core.summarize_fn(lambda x: jnp.sum(x * 2.0), jnp.ones((3, 4)))
    cost = core.Cost.of(eqns)
    assert cost.equations == len(eqns) and cost.largest == 12
    assert cost.elements == sum(int(np.prod(s)) for e in eqns for s in e.out_shapes)
    assert core.Cost.of(()) == core.Cost(0, 0, 0)


def test_a_custom_call_is_a_custom_primitive_or_the_opt_in_custom_vjp_s_hijax_primitive():
    assert all(map(core.is_custom_call, ("custom_jvp_call", "custom_vjp_call", "custom_vmap_call",
                                         "custom_vjp_call_jaxpr", "call_hi_primitive")))
    assert not any(map(core.is_custom_call, ("sin", "jit", "pjit", "scan", "call")))


def test_measuring_the_opt_in_custom_vjp_leaves_the_option_as_it_was():
    from grader.core._jax import history as H
    before = getattr(jax.config, "jax_custom_vjp3", None)
    H.measure("custom_vjp3_route")
    assert getattr(jax.config, "jax_custom_vjp3", None) == before


def test_a_block_run_twice_sees_the_rules_both_times():
    # JAX keeps a transposed jit and replays it without running a rule: the watch clears caches.
    fn = jax.jit(lambda w: jnp.sum(jax.vmap(lambda w, x: w * x, in_axes=(None, 0))(w, jnp.ones((4, 3)))))
    runs = []
    for _ in range(2):
        with core.watch_transposes() as bound:
            jax.grad(fn)(jnp.ones(3))
        runs.append({b.rule for b in bound})
    assert "mul" in runs[0] and runs[1] == runs[0]
