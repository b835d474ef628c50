"""The text normaliser removes printing drift and colour but keeps the program."""
import re

import jax
import jax.numpy as jnp

from grader import core


def test_colour_and_plain_print_normalise_alike():
    closed = jax.make_jaxpr(lambda x: jnp.sin(x) * 2.0)(jnp.ones(3))
    plain = closed.pretty_print(use_color=False)
    # Jupyter shows jaxprs coloured; older JAX ignores use_color, so colour one by hand as well.
    painted = re.sub(r"([a-z_]+)", "\x1b[33m\\1\x1b[0m", plain)
    for coloured in (closed.pretty_print(use_color=True), painted):
        assert core.normalize(coloured) == core.normalize(plain)
    assert "\x1b[" in painted


def test_version_drift_is_removed():
    old = "c:f32[1,4] = broadcast_in_dim[broadcast_dimensions=(np.int64(1),) shape=(1, 4) sharding=None] a"
    new = "c:f32[1,4] = broadcast_in_dim[\n    broadcast_dimensions=(1,)\n    shape=(1, 4)\n  ] a"
    assert core.normalize(old) == core.normalize(new)
    assert core.normalize("d:f32[3] = mul c 2.0:f32[]") == core.normalize("d:f32[3] = mul c 2.0")
    assert core.normalize("pjit[name=f] a") == "jit[name=f] a"
    assert core.normalize("reduce_sum[axes=(1,) out_sharding=None] d") == "reduce_sum[axes=(1,)] d"


def test_normalise_is_idempotent_on_a_real_jaxpr():
    text = str(jax.make_jaxpr(jax.vmap(lambda x: x.sum(0), in_axes=1))(jnp.ones((3, 4, 5))))
    once = core.normalize(text)
    assert core.normalize(once) == once and "reduce_sum" in once
