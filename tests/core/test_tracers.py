"""The spy reports exactly what JAX's own tracer attributes say, on random layouts."""
import jax
import jax.numpy as jnp
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from grader import core


def raw_view(x):
    """Read the tracer the plain way, for comparison with core.view."""
    levels = []
    while hasattr(x, "batch_dim") and hasattr(x, "val"):
        levels.append((tuple(x.shape), tuple(np.shape(x.val)), x.batch_dim))
        x = x.val
    return levels


@st.composite
def layouts(draw):
    rank = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=rank, max_size=rank)))
    axis = draw(st.integers(-rank, rank - 1))
    return shape, axis


@settings(max_examples=25, deadline=None)
@given(layouts())
def test_view_matches_tracer_attributes(layout):
    shape, axis = layout
    raw = []

    def f(x, y):
        raw.append(raw_view(x))
        return x.sum() + y.sum()

    _, seen = core.observe(f, (axis, None), jnp.ones(shape), jnp.ones(2))
    (level,) = seen[0].levels
    assert (level.shape, level.val_shape, level.batch_dim) == raw[0][0]
    assert seen[0].batch_dim == axis % len(shape)          # JAX normalises negative axes
    assert seen[0].shape == tuple(np.delete(shape, axis % len(shape)))
    assert seen[1].kind == "concrete" and seen[1].levels == ()


def test_seed_example_in_axes_1():
    _, (x, y) = core.observe(lambda x, y: x * y, (1, None), jnp.ones((3, 7, 5)), jnp.ones(5))
    assert x.is_batch_tracer and x.type_name == type_name_of_batch_tracer()
    assert (x.shape, x.val_shape, x.batch_dim) == ((3, 5), (3, 7, 5), 1)
    assert y.shape == (5,) and not y.is_batch_tracer


def type_name_of_batch_tracer():
    return core._jax.BatchTracer.__name__


def test_unmapped_argument_is_a_jaxpr_tracer_under_make_jaxpr():
    seen = []
    f = jax.vmap(lambda x, y: seen.append(core.view(y)) or x * y, in_axes=(0, None))
    jax.make_jaxpr(f)(jnp.ones((4, 3)), jnp.ones(3))
    assert seen[0].kind == "tracer"


def test_nested_levels_innermost_first():
    raw = []
    _, seen = core.observe(lambda a: raw.append(raw_view(a)) or a, 0, jnp.ones((2, 3, 4)),
                           layers=[1])
    assert [(lv.shape, lv.val_shape, lv.batch_dim) for lv in seen[0].levels] == raw[0]
    assert len(seen[0].levels) == 2
    assert seen[0].levels[1].val_shape == (2, 3, 4)
