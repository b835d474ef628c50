"""The case-drawing helpers lesson 1's exercises share (grader/lessons/l1_rule_per_primitive/draw.py)."""
import numpy as np

from grader.lessons.l1_rule_per_primitive import draw


def test_insert_puts_the_axis_where_in_axes_says():
    assert draw.insert((3, 5), 0, 7) == (7, 3, 5)
    assert draw.insert((3, 5), 1, 7) == (3, 7, 5)
    assert draw.insert((3, 5), -1, 7) == (3, 5, 7)
    assert draw.insert((3, 5), -3, 7) == (7, 3, 5)
    assert draw.insert((), 0, 7) == (7,)


def test_axis_is_in_range_and_sometimes_negative():
    rng = np.random.default_rng(0)
    axes = [draw.axis(rng, 3) for _ in range(200)]
    assert set(axes) <= {-3, -2, -1, 0, 1, 2}
    assert any(a < 0 for a in axes) and any(a >= 0 for a in axes)


def test_shape_has_the_rank_and_bounds_asked():
    rng = np.random.default_rng(0)
    shapes = [draw.shape(rng, 3, 2, 5) for _ in range(50)]
    assert all(len(s) == 3 and all(2 <= d <= 5 and type(d) is int for d in s) for s in shapes)


def test_finding_describes_the_case_without_private_keys():
    f = draw.finding({"shapes": ((3,),), "_seed": 4}, [1], [2], "h")
    assert f.case == "shapes=((3,),)" and (f.expected, f.got, f.hint) == ("[1]", "[2]", "h")
