"""The judge's child observes and reports; it notices an answer handing its work to JAX."""
import json

from grader import lessons
from grader.judge import child, runner

MATCHAXIS = lessons.exercises()["l2_matchaxis"]
CASE = {"shape": (4, 3), "src": 0, "dst": 1, "size": 4, "sum_match": False}


def request(answer: str) -> dict:
    return json.loads(runner._request(
        [{"name": "a", "kind": "answer", "source": answer}], {"l2_matchaxis": [CASE]}))


def observed(answer: str) -> dict:
    from grader import wire
    return wire.unplain(wire.plain(child.observe(request(answer))))["results"]["l2_matchaxis"]


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
    assert got["tripped"] == ["jax._src.interpreters.batching:matchaxis"]


def test_an_answer_that_is_the_jax_function_itself_is_seen():
    got = observed("import functools\nimport jax._src.interpreters.batching as b\n"
                   "my_matchaxis = functools.partial(b.matchaxis)\n")
    assert got["tripped"] == ["jax._src.interpreters.batching:matchaxis"]


def test_an_answer_that_has_vmap_move_the_axis_is_seen_by_a_strict_exercise():
    # matchaxis is strict: the exercise needs no vmap, so JAX's matchaxis running at all while
    # the answer is observed means vmap did the answer's work.
    got = observed("import jax, jax.numpy as jnp\n"
                   "def my_matchaxis(src, dst, x, size, sum_match=False):\n"
                   "    return jax.vmap(lambda v: v, in_axes=src, out_axes=dst, axis_size=size)(x)\n")
    assert got["tripped"] == ["jax._src.interpreters.batching:matchaxis"]


def test_jax_calling_its_own_matchaxis_outside_the_observation_is_not_counted():
    got = observed("import jax, jax.numpy as jnp\n"
                   "jax.vmap(lambda v: v, out_axes=1)(jnp.ones((2, 3)))\n"
                   "def my_matchaxis(src, dst, x, size, sum_match=False):\n"
                   "    return jnp.moveaxis(x, src, dst)\n")
    assert got["tripped"] == []


def test_the_wires_are_gone_afterwards():
    from grader.core import _jax
    original = _jax.batching.matchaxis
    observed("my_matchaxis = None\n")
    assert _jax.batching.matchaxis is original


def test_only_kit_observers_can_be_named():
    import pytest
    with pytest.raises(ValueError):
        child._resolve("os:system")
