"""The per-example functions of the memory exercise: each builds a (d, d) intermediate from one
(d,) example, so its batched program's largest array grows with the number of examples at once."""
from __future__ import annotations

import jax.numpy as jnp

FUNCTIONS = {
    "outer": lambda x: jnp.sum(jnp.outer(x, x) * x[0]),
    "spread": lambda x: jnp.sum(jnp.tanh(x[:, None] - x[None, :])),
    "gram": lambda x: jnp.max(jnp.sin(x)[:, None] * jnp.cos(x)[None, :]),
}
