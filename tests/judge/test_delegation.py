"""Reading answers for delegation: what hands the work on is named, honest code is left alone."""
import pytest

from grader.exercise import Delegation
from grader.judge.delegation import reasons

MATCHAXIS = Delegation(names=("matchaxis",))
HONEST = '''\
import jax.numpy as jnp
def my_matchaxis(src, dst, x, size, sum_match=False):
    """Like JAX's matchaxis, written out."""
    # JAX's batching.matchaxis does the same
    if src == dst:
        return x
    raise ValueError("mapped output but matchaxis was asked for None")
'''


def test_honest_code_with_the_name_in_comments_docstrings_and_messages_passes():
    assert reasons([HONEST], MATCHAXIS) == []


@pytest.mark.parametrize("source, words", [
    ("from jax._src.interpreters import batching\nf = batching.matchaxis", "uses `matchaxis`"),
    ("from jax._src.interpreters.batching import matchaxis as m", "imports `matchaxis`"),
    ("import operator\nf = operator.attrgetter('matchaxis')", "names `matchaxis` in a string"),
    ("f = getattr(batching, 'matchaxis')", "names `matchaxis` in a string"),
    ("import pydoc\nf = pydoc.locate('jax._src.interpreters.batching.matchaxis')", "names `matchaxis`"),
    ("import grader.core\n", "course's own package"),
    ("from grader.lessons import l2_where_the_axis_goes as L\n", "course's own package"),
    ("f = eval('1 + 1')", "`eval`"),
    ("exec('x = 1')", "`exec`"),
    ("m = __import__('os')", "`__import__`"),
    ("import importlib\n", "`importlib`"),
    ("f = getattr(object, 'match' + 'axis')", "computed attribute name"),
    ("g = globals()['x']", "`globals`"),
    ("d = (lambda: 0).__globals__", "`.__globals__`"),
    ("import sys\nm = sys.modules['jax']", "`.modules`"),
])
def test_each_way_of_handing_the_work_on_is_named(source, words):
    found = reasons([source], MATCHAXIS)
    assert any(words in r for r in found), found


def test_computed_getattr_is_allowed_where_the_exercise_is_reading_modules():
    source = "def f(m, names):\n    return [getattr(m, n, None) for n in names]\n"
    assert reasons([source], Delegation(dynamic=True)) == []
    assert reasons([source], Delegation()) != []


def test_code_that_does_not_parse_is_left_to_the_judge():
    assert reasons(["def broken(:\n"], MATCHAXIS) == []


def test_a_null_byte_is_left_to_the_judge_on_every_python():
    assert reasons(["x = 1\x00"], MATCHAXIS) == []
