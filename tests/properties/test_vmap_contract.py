"""The contract every lesson leans on, as a property: ``vmap(f)(xs) == stack([f(x) for x in xs])``.

Hypothesis draws the functions from a small grammar of jnp/lax operations (grammar.py), the
per-example shapes, the data, ``in_axes`` (negative, ``None``) and ``out_axes`` for one or two
nested layers, and whether the batched function is jitted, and checks ``jax.vmap`` against the
loop that defines it. It runs in ``make test`` and on every release of ``make test-matrix``.

Profiles (``HYPOTHESIS_PROFILE``): ``ci`` (the default) draws a fixed number of examples from a
fixed seed (``derandomize``), so a run is the same run everywhere; ``thorough`` draws ten times as
many, at random, for a developer hunting a counter-example.
"""
from __future__ import annotations

import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from . import grammar

HEALTH = [HealthCheck.too_slow, HealthCheck.data_too_large]
settings.register_profile("ci", max_examples=30, derandomize=True, database=None, deadline=None,
                          suppress_health_check=HEALTH)
settings.register_profile("thorough", max_examples=300, deadline=None, suppress_health_check=HEALTH)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
# Per node kind and nesting depth, so that every rule is exercised whatever hypothesis favours.
PER_ROOT = max(2, settings().max_examples // 10)

TOLERANCE = {"rtol": 2e-5, "atol": 2e-5}


def assert_contract(case):
    """jax.vmap of the case equals the loop over examples: same shape, same values."""
    args = grammar.arguments(case)
    batched = grammar.mapped(case, jax.vmap)
    if case["jit"]:
        batched = jax.jit(batched)
    got = np.asarray(batched(*[jnp.asarray(a) for a in args]))
    want = grammar.mapped(case, grammar.looped)(*args)
    assert got.shape == want.shape, f"{case}: vmap gives {got.shape}, the loop {want.shape}"
    np.testing.assert_allclose(got, want, **TOLERANCE, err_msg=str(case))


@given(grammar.cases())
def test_vmap_is_the_loop_over_examples(case):
    assert_contract(case)


@pytest.mark.parametrize("depth", [1, 2])
@pytest.mark.parametrize("root", sorted(grammar.NODES))
def test_vmap_is_the_loop_for_every_kind_of_node(root, depth):
    @settings(max_examples=PER_ROOT)
    @given(grammar.cases(root=root, depth=depth))
    def check(case):
        assert_contract(case)
    check()


# ---- the checker can fail, and its pieces mean what they say --------------------------------------

def _case(expr, shape=(3,), layers=((2, (0,), 0),), n_args=1, scalar_out=False, jit=False):
    return {"expr": expr, "shape": shape, "n_args": n_args, "scalar_out": scalar_out,
            "layers": list(layers), "seed": 7, "jit": jit}


def test_a_vmap_that_breaks_the_contract_is_caught(monkeypatch):
    case = _case(("unary", "sin", ("arg", 0)), shape=(3, 2), layers=((4, (1,), 0),))
    assert_contract(case)
    real = jax.vmap
    wrong = lambda f, in_axes, out_axes: real(f, in_axes, (out_axes + 1) % 2)   # noqa: E731
    monkeypatch.setattr(jax, "vmap", wrong)
    with pytest.raises(AssertionError):
        assert_contract(case)


def test_a_wrong_value_is_caught_too(monkeypatch):
    case = _case(("binary", "mul", ("arg", 0), ("const", 3, "last")))
    real = jax.vmap
    monkeypatch.setattr(jax, "vmap", lambda f, ia, oa: (lambda *a: real(f, ia, oa)(*a) + 1e-3))
    with pytest.raises(AssertionError):
        assert_contract(case)


def test_the_loop_stacks_examples_where_out_axes_says():
    xs = np.arange(24.0).reshape(2, 3, 4)
    loop = grammar.looped(lambda x: x * 2.0, (1,), -1)
    assert loop(xs).shape == (2, 4, 3)
    assert np.array_equal(loop(xs)[..., 1], xs[:, 1] * 2.0)


def test_arguments_put_every_layers_batch_axis_where_its_in_axes_say():
    case = _case(("arg", 1), shape=(5,), n_args=2, layers=((2, (None, -1), 0), (3, (0, 1), 0)))
    a, b = grammar.arguments(case)
    assert a.shape == (3, 5) and b.shape == (5, 3, 2)


@pytest.mark.parametrize("node", sorted(grammar.NODES))
def test_every_node_builds_and_keeps_the_per_example_shape(node):
    child = ("arg", 0)
    knob = {"unary": "sin", "binary": "mul", "matmul": 5}.get(node, 1)
    arity = {"binary": 2, "where": 3, "splice": 2, "cond": 3}.get(node, 1)
    has_knob = node in ("unary", "binary", "centre", "cumsum", "flip", "matmul", "splice")
    expr = (node, *((knob,) if has_knob else ()), *([child] * arity))
    case = _case(expr, shape=(4, 3), layers=((2, (1,), 0),))
    assert grammar.build(expr, (4, 3))(jnp.ones((4, 3))).shape == (4, 3)
    assert_contract(case)
