"""The per-example functions a ``choose_axes`` layout may name, written with ``jax.numpy``."""
from __future__ import annotations

import jax.numpy as jnp

FUNCTIONS = {
    "scale": lambda x: jnp.sin(x) * 2.0,
    "mul": lambda x, y: x * y + x,
    "mv": lambda A, v: A @ v,
    "colsum": lambda x: jnp.sum(x, axis=0),
    "pair": lambda x, y: (jnp.sin(y), x * 2.0),
}
