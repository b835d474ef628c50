"""The judge's child observes and reports; it notices an answer handing its work to JAX, and no
case is within reach of the student's code before its answers are taken."""
import pytest

from tests.fixtures import judging

from grader.judge import child

CASE = {"shape": (4, 3), "src": 0, "dst": 1, "size": 4, "sum_match": False}
MATCHAXIS = "jax._src.interpreters.batching:matchaxis"


def observed(answer: str, cases=(CASE,), **kw) -> dict:
    cells = [{"name": "a", "kind": "answer", "source": answer}]
    found, _, _ = judging.run(cells, {"l2_matchaxis": list(cases)}, **kw)
    return found["l2_matchaxis"]


def test_an_honest_answer_is_observed_and_trips_nothing():
    got = observed("import jax.numpy as jnp\n"
                   "def my_matchaxis(src, dst, x, size, sum_match=False):\n"
                   "    return jnp.moveaxis(x, src, dst)\n")
    assert got["tripped"] == [] and got["observed"][0]["shape"] == (3, 4)


def test_a_call_of_jax_matchaxis_from_an_answer_is_seen_however_it_was_reached():
    # No name an AST could read: the function is found by walking the module's values.
    got = observed("import jax._src.interpreters.batching as b\n"
                   "_f = [v for k, v in sorted(b.__dict__.items()) if k.endswith('axis') and k.startswith('match')][0]\n"
                   "def my_matchaxis(src, dst, x, size, sum_match=False):\n"
                   "    try:\n"
                   "        return _f(None, src, dst, x, sum_match)\n"
                   "    except Exception:\n"
                   "        return x\n")
    assert got["tripped"] == [MATCHAXIS]


def test_an_answer_that_is_the_jax_function_itself_is_seen():
    got = observed("import functools\nimport jax._src.interpreters.batching as b\n"
                   "my_matchaxis = functools.partial(b.matchaxis)\n")
    assert got["tripped"] == [MATCHAXIS]


def test_an_answer_that_has_vmap_move_the_axis_is_seen_by_a_strict_exercise():
    # matchaxis is strict: the exercise needs no vmap, so JAX's matchaxis running at all while
    # the answer is observed means vmap did the answer's work.
    got = observed("import jax, jax.numpy as jnp\n"
                   "def my_matchaxis(src, dst, x, size, sum_match=False):\n"
                   "    return jax.vmap(lambda v: v, in_axes=src, out_axes=dst, axis_size=size)(x)\n")
    assert got["tripped"] == [MATCHAXIS]


# Calls made while the cells run count too: JAX's function run beforehand, its results kept for
# later (a table looked up by my_matchaxis), however the call was made.
PRECOMPUTED = {
    "called from the cell": "_seen = {}\ntry:\n    _f(None, 0, 1, None, False)\nexcept Exception:\n    pass\n",
    "through JAX's api_boundary": ("from jax._src import traceback_util as _t\n_seen = {}\n"
                                   "try:\n    _t.api_boundary(_f)(None, 0, 1, None, False)\n"
                                   "except Exception:\n    pass\n"),
    "vmap moving axes in the cell": ("import jax, jax.numpy as jnp\n"
                                     "_seen = {1: jax.vmap(lambda v: v, out_axes=1)(jnp.ones((2, 3)))}\n"),
}


@pytest.mark.parametrize("how", sorted(PRECOMPUTED))
def test_jax_run_for_the_answer_while_the_cells_run_is_seen(how):
    got = observed("import jax._src.interpreters.batching as b\n"
                   "_f = [v for k, v in sorted(b.__dict__.items()) if k == 'match' + 'axis'][0]\n"
                   + PRECOMPUTED[how] +
                   "def my_matchaxis(src, dst, x, size, sum_match=False):\n"
                   "    return _seen.get(1, x)\n")
    assert got["tripped"] == [MATCHAXIS]


def test_jax_calling_its_own_matchaxis_in_a_cell_the_exercise_does_not_run_is_not_counted():
    cells = [{"name": "other", "kind": "answer", "source": (
                 "import jax, jax.numpy as jnp\n"
                 "jax.vmap(lambda v: v, out_axes=1)(jnp.ones((2, 3)))\n")},
             {"name": "a", "kind": "answer", "source": (
                 "import jax.numpy as jnp\n"
                 "def my_matchaxis(src, dst, x, size, sum_match=False):\n"
                 "    return jnp.moveaxis(x, src, dst)\n")}]
    found, _, _ = judging.run(cells, {"l2_matchaxis": [CASE]}, owned={"l2_matchaxis": ["a"]})
    assert found["l2_matchaxis"]["tripped"] == []


# Everything the student's code can reach before its answers are taken, and while one case is
# observed: every frame's locals, every object the collector knows and the strings they hold
# (the child's stdin buffer among them). No later case is there.
LOOK_FOR_CASES = """\
import gc, re, traceback
_mark = re.compile(r"size\\W{{1,4}}(9082[0-9])")
def _look(when):
    seen = set()
    for f, _ in traceback.walk_stack(None):
        seen.update(_mark.findall(repr(dict(f.f_locals))[:1000000]))
    for o in gc.get_objects():
        if isinstance(o, dict):
            for v in list(o.values()):
                if isinstance(v, (bytes, bytearray)):
                    v = v.decode("latin-1")
                if isinstance(v, (str, dict, list, tuple)):
                    seen.update(_mark.findall(v if isinstance(v, str) else repr(v)[:100000]))
    with open({path!r}, "a") as fh:
        fh.write(when + " " + " ".join(sorted(seen)) + "\\n")
_look("cells")
def my_matchaxis(src, dst, x, size, sum_match=False):
    _look(f"case-{{size}}")
    return x
"""


@pytest.mark.filterwarnings("ignore::grader.judge.sandbox.SandboxUnavailable")
def test_no_case_is_within_reach_before_the_answers_are_taken_nor_a_later_one_during_one(
        tmp_path):
    path = str(tmp_path / "seen.txt")
    marks = [dict(CASE, size=size) for size in (90821, 90823, 90827)]
    cells = [{"name": "a", "kind": "answer", "source": LOOK_FOR_CASES.format(path=path)}]
    found, failure, _ = judging.run(cells, {"l2_matchaxis": marks}, in_process=False)
    assert failure is None and len(found["l2_matchaxis"]["observed"]) == 3
    seen = dict(line.split(" ", 1) for line in open(path).read().splitlines())
    assert seen == {"cells": "", "case-90821": "90821", "case-90823": "90823",
                    "case-90827": "90827"}


def test_the_wires_are_gone_afterwards():
    from grader.core import _jax
    original = _jax.batching.matchaxis
    observed("my_matchaxis = None\n")
    assert _jax.batching.matchaxis is original


def test_only_kit_observers_can_be_named():
    with pytest.raises(ValueError):
        child._resolve("os:system")
