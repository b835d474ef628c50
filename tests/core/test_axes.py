"""The matchaxis adapter calls JAX's own matchaxis on every signature and agrees with vmap."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grader import core


@st.composite
def moves(draw):
    rank = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=rank, max_size=rank)))
    return shape, draw(st.integers(0, rank - 1)), draw(st.integers(0, rank - 1))


@settings(max_examples=20, deadline=None)
@given(moves())
def test_int_to_int_is_what_vmap_out_axes_does(move):
    shape, src, dst = move
    x = jnp.arange(np.prod(shape), dtype=jnp.float32).reshape(shape)
    expected = jax.vmap(lambda r: r, in_axes=src, out_axes=dst)(x)
    got = core.matchaxis(src, dst, x)
    assert got.shape == expected.shape and bool(jnp.all(got == expected))


def test_unmapped_to_mapped_broadcasts_like_vmap():
    y = jnp.arange(3.0)
    expected = jax.vmap(lambda _: y, in_axes=0, out_axes=1)(jnp.ones(4))
    got = core.matchaxis(None, 1, y, size=4)
    assert got.shape == expected.shape and bool(jnp.all(got == expected))


def test_mapped_to_unmapped_sums_only_with_sum_match():
    x = jnp.arange(6.0).reshape(2, 3)
    assert bool(jnp.all(core.matchaxis(0, None, x, sum_match=True) == x.sum(0)))
    out = core.outcome(core.matchaxis, 0, None, x)
    assert out.raised and out.error == core._jax.spec_match_error().__name__
    with pytest.raises(ValueError):
        core.matchaxis(0, None, x, name="batch")


def test_outcome_is_plain_data():
    out = core.outcome(core.matchaxis, 0, 0, jnp.ones((2, 2)))
    assert out.shape == (2, 2) and isinstance(out.data, bytes) and out.error is None


def test_watch_matchaxis_can_name_the_functions_that_called_it():
    import jax
    import jax.numpy as jnp
    with core.watch_matchaxis(callers=True) as calls:
        jax.vmap(lambda x: x, out_axes=1)(jnp.ones((2, 3)))
    (src, dst, sum_match, callers), = calls
    assert (src, dst, sum_match) == (0, 1, False) and "from_elt" in callers[:2]
    with core.watch_matchaxis() as plain:
        jax.vmap(lambda x: x)(jnp.ones(2))
    assert plain == [(0, 0, False)]
