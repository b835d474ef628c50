"""Lesson 2's picture (grader/lessons/l2_where_the_axis_goes/figures.py): where the batch axis sits."""
import jax
import jax.numpy as jnp

from grader.lessons.l2_where_the_axis_goes import figures


def test_flow_finds_the_batch_axis():
    f = lambda x: jnp.sin(x) * 2.0  # noqa: E731
    moved = jax.make_jaxpr(jax.vmap(f, in_axes=1))(jnp.ones((3, 7)))
    assert figures.positions(figures.flow(moved, 7)) == [(1,), (1,), (0,)]
    kept = jax.make_jaxpr(jax.vmap(f, in_axes=1, out_axes=1))(jnp.ones((3, 7)))
    assert figures.positions(figures.flow(kept, 7)) == [(1,), (1,)]
    fig = figures.draw(moved, 7, title="t")
    assert len(fig.axes) == 1


def test_nested_vmaps_get_one_level_each():
    # The outer vmap maps axis 1 (size 3), the inner one what is left (size 2); sin keeps both
    # where they are and the final move brings the outer batch to the front.
    f = jax.vmap(jax.vmap(jnp.sin, in_axes=0), in_axes=1)
    rows = figures.flow(jax.make_jaxpr(f)(jnp.ones((2, 3))), (3, 2))
    assert rows[0].inputs == () and rows[0].outputs[0].levels == (1, 0)
    assert [r.label.split()[0] for r in rows[1:-1]] == ["sin", "transpose"]
    assert figures.positions(rows, level=0) == [(1,), (0,)]
    assert figures.positions(rows, level=1) == [(0,), (1,)]


def test_drawing_registers_no_pyplot_figure():
    import matplotlib.pyplot as plt
    before = set(plt.get_fignums())
    figures.draw(jax.make_jaxpr(jnp.sin)(jnp.ones(3)), 7)
    assert set(plt.get_fignums()) == before


def test_the_legend_names_every_glyph_the_picture_draws():
    fig = figures.draw(jax.make_jaxpr(jax.vmap(lambda x: x * 2.0))(jnp.ones((7, 3))), 7)
    names = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert names == ["batch axis (size 7)", "size-1 axis (no copy)", "scalar (no axes)"]
