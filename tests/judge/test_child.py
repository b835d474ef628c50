"""The judge's child observes and reports; it notices an answer handing its work to JAX."""
import json

from grader import lessons
from grader.judge import child, runner

LANDS = lessons.exercises()["l2_where_it_lands"]
CASE = LANDS.cases(__import__("numpy").random.default_rng(0), False)[0]
VMAP = "jax._src.api:vmap"


def request(answer: str) -> dict:
    return json.loads(runner._request(
        [{"name": "a", "kind": "answer", "source": answer}], {"l2_where_it_lands": [CASE]}))


def observed(answer: str) -> dict:
    from grader import wire
    return wire.unplain(wire.plain(child.observe(request(answer))))["results"]["l2_where_it_lands"]


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


def test_jax_calling_its_own_vmap_outside_the_observation_is_not_counted():
    got = observed("import jax, jax.numpy as jnp\n"
                   "jax.vmap(lambda v: v, out_axes=1)(jnp.ones((2, 3)))\n"
                   "def where_it_lands(program, in_dims):\n"
                   "    return {}\n")
    assert got["tripped"] == []


def test_the_wires_are_gone_afterwards():
    import jax._src.api as api
    original = api.vmap
    observed("where_it_lands = None\n")
    assert api.vmap is original


def test_only_kit_observers_can_be_named():
    import pytest
    with pytest.raises(ValueError):
        child._resolve("os:system")
