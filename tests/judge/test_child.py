"""The judge's child observes and reports; it notices an answer handing its work to JAX, and no
case is within reach of the student's code before its answers are taken."""
import numpy as np
import pytest

from grader import lessons
from grader.judge.box import child
from tests.fixtures import judging

LANDS = lessons.exercises()["l2_where_it_lands"]
CASE = LANDS.cases(np.random.default_rng(0), False)[0]
VMAP = "jax._src.api:vmap"


def observed(answer: str, cases=(CASE,), **kw) -> dict:
    cells = [{"name": "a", "kind": "answer", "source": answer}]
    found, _, _ = judging.run(cells, {"l2_where_it_lands": list(cases)}, **kw)
    return found["l2_where_it_lands"]


def test_an_honest_answer_is_observed_and_trips_nothing():
    got = observed("def where_it_lands(program, in_dims):\n"
                   "    return {'s1': 1, 's2': 1}\n")
    assert got["tripped"] == [] and got["observed"][0] == {"s1": 1, "s2": 1}


def test_a_call_of_jax_vmap_from_an_answer_is_seen_however_it_was_reached():
    # No name an AST could read: the function is found by walking the module's values.
    got = observed("import jax, jax.numpy as jnp\n"
                   "_f = [v for k, v in sorted(jax.__dict__.items()) if k.endswith('map') and k.startswith('v')][0]\n"
                   "def where_it_lands(program, in_dims):\n"
                   "    _f(lambda x: x)(jnp.ones(3))\n"
                   "    return {}\n")
    assert VMAP in got["tripped"]


def test_an_answer_that_is_the_jax_function_itself_is_seen():
    got = observed("import functools, jax\nwhere_it_lands = functools.partial(jax.vmap)\n")
    assert VMAP in got["tripped"]


def test_vmap_run_by_jax_for_the_answer_is_seen_by_a_strict_exercise():
    # where_it_lands is strict: the exercise needs no vmap, so vmap's machinery running at all
    # while the answer is observed means vmap did the answer's work, whoever called it.
    got = observed("import jax, jax.numpy as jnp\n"
                   "def where_it_lands(program, in_dims):\n"
                   "    jnp.vectorize(lambda x: x)(jnp.ones(3))\n"
                   "    return {}\n")
    assert "jax._src.interpreters.batching:_batch_outer" in got["tripped"], got


# Batching the program without vmap: the module's own jaxpr entry points, reached by a name no
# reading sees. Each is watched by its own code (`callers.chain` looks through the
# `partial(lu.transformation2, gen)` JAX's decorators leave, to the generator itself).
JAXPR_BATCHERS = {
    "batch_jaxpr2": "_b.batch_jaxpr2(_closed, _ax, (0,))",
    "batch_jaxpr": "_b.batch_jaxpr(_closed, _ax, [True], False)",
}


@pytest.mark.parametrize("how", sorted(JAXPR_BATCHERS))
def test_batching_a_jaxpr_without_vmap_is_seen_by_the_strict_watch(how):
    got = observed("import importlib, jax, jax.numpy as jnp\n"
                   "_b = importlib.import_module('jax._src.interpreters.' + 'batch' + 'ing')\n"
                   "def where_it_lands(program, in_dims):\n"
                   "    global _closed, _ax\n"
                   "    _closed = jax.make_jaxpr(jnp.sin)(1.0)\n"
                   "    _ax = _b.AxisData('i', 3, None, None) if hasattr(_b, 'AxisData') else 3\n"
                   "    try:\n"
                   f"        {JAXPR_BATCHERS[how]}\n"
                   "    except Exception:\n"
                   "        pass\n"
                   "    return {}\n")
    assert f"jax._src.interpreters.batching:{how}" in got["tripped"] or \
        any(t.startswith("jax._src.interpreters.batching:_batch_jaxpr") for t in got["tripped"]), got


def test_the_watch_looks_through_jaxs_transformation_decorators():
    from jax._src.interpreters import batching

    from grader.judge.box.callers import chain
    inner = chain(batching._batch_outer)[-1]
    assert inner.__name__ == "_batch_outer" and "linear_util" not in inner.__module__


# Calls made while the cells run count too: JAX's function run beforehand, its results kept for
# later (a table looked up by where_it_lands), however the call was made.
PRECOMPUTED = {
    "called from the cell": ("import jax.numpy as jnp\n"
                             "_seen = {1: _f(lambda v: v, out_axes=1)(jnp.ones((2, 3)))}\n"),
    "through JAX's api_boundary": ("import jax.numpy as jnp\n"
                                   "from jax._src import traceback_util as _t\n"
                                   "_seen = {1: _t.api_boundary(_f)(lambda v: v)(jnp.ones(3))}\n"),
    "vmap of jnp.vectorize in the cell": ("import jax.numpy as jnp\n"
                                          "_seen = {1: jnp.vectorize(lambda v: v)(jnp.ones(3))}\n"),
}


@pytest.mark.parametrize("how", sorted(PRECOMPUTED))
def test_jax_run_for_the_answer_while_the_cells_run_is_seen(how):
    got = observed("import jax\n"
                   "_f = [v for k, v in sorted(jax.__dict__.items()) if k == 'v' + 'map'][0]\n"
                   + PRECOMPUTED[how] +
                   "def where_it_lands(program, in_dims):\n"
                   "    return {s[0]: _seen and 0 for s in program['steps']}\n")
    assert got["tripped"], got


def test_jax_calling_its_own_vmap_in_a_cell_the_exercise_does_not_run_is_not_counted():
    cells = [{"name": "other", "kind": "answer", "source": (
                 "import jax.numpy as jnp\n"
                 "jnp.vectorize(lambda v: v)(jnp.ones(3))\n")},      # vmap, called by JAX
             {"name": "a", "kind": "answer", "source": (
                 "def where_it_lands(program, in_dims):\n"
                 "    return {}\n")}]
    found, _, _ = judging.run(cells, {"l2_where_it_lands": [CASE]},
                              owned={"l2_where_it_lands": ["a"]})
    assert found["l2_where_it_lands"]["tripped"] == []


# Everything the student's code can reach before its answers are taken, and while one case is
# observed: every frame's locals, every object the collector knows and the strings they hold
# (the child's stdin buffer among them). No later case is there. Each case is marked by its
# first input's leading dimension.
LOOK_FOR_CASES = """\
import gc, re, traceback
_mark = re.compile(r"\\b(9082[0-9])\\b")
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
def where_it_lands(program, in_dims):
    _look(f"case-{{program['inputs'][0][1][0]}}")
    return {{}}
"""


def marked(size: int) -> dict:
    (name, shape), *rest = CASE["program"]["inputs"]
    program = dict(CASE["program"], inputs=((name, (size, *shape[1:])), *rest))
    return dict(CASE, program=program)


@pytest.mark.filterwarnings("ignore::grader.judge.sandbox.SandboxUnavailable")
def test_no_case_is_within_reach_before_the_answers_are_taken_nor_a_later_one_during_one(
        tmp_path):
    path = str(tmp_path / "seen.txt")
    marks = [marked(size) for size in (90821, 90823, 90827)]
    cells = [{"name": "a", "kind": "answer", "source": LOOK_FOR_CASES.format(path=path)}]
    found, failure, _ = judging.run(cells, {"l2_where_it_lands": marks}, in_process=False)
    assert failure is None and len(found["l2_where_it_lands"]["observed"]) == 3
    seen = dict(line.split(" ", 1) for line in open(path).read().splitlines())
    assert seen == {"cells": "", "case-90821": "90821", "case-90823": "90823",
                    "case-90827": "90827"}


def test_the_wires_are_gone_afterwards():
    import jax._src.api as api
    original = api.vmap
    observed("where_it_lands = None\n")
    assert api.vmap is original


def test_only_kit_observers_can_be_named():
    with pytest.raises(ValueError):
        child._resolve("os:system")


def test_jaxs_jacobian_through_a_wrapper_of_jaxs_own_is_the_answers():
    # jax.experimental.sparse's jacfwd/jacrev call jax.jacfwd/jacrev by name: JAX's own call, to
    # a watch that is not strict. vmap_jacobian's is: JAX never runs them for a vjp/jvp answer.
    jacobian = lessons.exercises()["l4_vmap_jacobian"]
    cells = [{"name": "a", "kind": "answer", "source": (
        "from jax.experimental import sparse as _s\n"
        "def vmap_jacobian(f, x):\n"
        "    return _s.jacrev(f)(x)\n")}]
    cases = jacobian.cases(np.random.default_rng(0), False)[:1]
    found, _, _ = judging.run(cells, {"l4_vmap_jacobian": cases})
    assert "jax._src.api:jacrev" in found["l4_vmap_jacobian"]["tripped"], found

