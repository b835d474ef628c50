"""Lesson 1's figures (grader/lessons/l1_rule_per_primitive/figures.py): fixed sizes, shown once."""
from grader.lessons.l1_rule_per_primitive import figures


def test_figures_have_fixed_sizes():
    fig = figures.hidden_axis((3, 7, 5), 1)
    assert tuple(fig.get_size_inches()) == (10.0, 2.8) and len(fig.axes) == 2
    fig = figures.table_counts({"a": {"primitive_batchers": 180}, "b": {"fancy_primitive_batchers": 3}})
    assert tuple(fig.get_size_inches()) == (9.0, 3.6)


def test_figures_are_closed_so_pyplot_never_shows_them_again():
    import matplotlib.pyplot as plt
    before = set(plt.get_fignums())
    figures.hidden_axis((2, 4), 0)
    figures.table_counts({"a": {"fancy_primitive_batchers": 3}})
    assert set(plt.get_fignums()) == before
