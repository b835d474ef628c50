"""Functions from R^n to R^m whose jacobians the exercises ask for: some tall (m > n), some
wide (m < n). `make(case)` builds one from a case's name, sizes and seed; its constants are
fixed arrays, so the function is the same every time the case is built."""
from __future__ import annotations

import jax.numpy as jnp
import numpy as np


def _constants(case):
    rng = np.random.default_rng(case["_seed"])
    n, m = case["n"], case["m"]
    a = (rng.standard_normal((m, n)) / np.sqrt(n)).astype(np.float32)
    b = rng.standard_normal(m).astype(np.float32)
    return a, b


def make(case):
    """The case's function ``f(x)``, x of shape (n,), result of shape (m,)."""
    a, b = _constants(case)
    a, b = jnp.asarray(a), jnp.asarray(b)
    kind = case["f"]
    if kind == "tanh_layer":
        return lambda x: jnp.tanh(a @ x + b)
    if kind == "sin_features":
        return lambda x: jnp.sin(a @ x) * b
    if kind == "quadratic":
        return lambda x: (a @ x) * (a @ (x * x)) + b
    raise ValueError(f"no function {kind!r}")


NAMES = ("tanh_layer", "sin_features", "quadratic")


def point(case) -> np.ndarray:
    """The point ``x`` of a case, shape (n,)."""
    rng = np.random.default_rng(case["_seed"] + 1)
    return rng.standard_normal(case["n"]).astype(np.float32)
