"""Lesson 4's figure (grader/lessons/l4_vmap_meets_autodiff/figures.py): fixed size, shown once."""
from grader.core.autodiff import Cost
from grader.lessons.l4_vmap_meets_autodiff import figures

COSTS = {4: {"a": Cost(10, 100, 5), "b": Cost(3, 90, 20)}, 8: {"a": Cost(20, 200, 5),
                                                                  "b": Cost(3, 180, 40)}}


def test_the_cost_chart_has_a_fixed_size_and_two_panels():
    fig = figures.cost_chart(COSTS)
    assert tuple(fig.get_size_inches()) == (10.0, 3.2) and len(fig.axes) == 2


def test_the_figure_is_closed_so_pyplot_never_shows_it_again():
    import matplotlib.pyplot as plt
    before = set(plt.get_fignums())
    figures.cost_chart(COSTS)
    assert set(plt.get_fignums()) == before
