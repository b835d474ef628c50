"""The small models whose per-example gradients the exercises ask for, and their data.

A loss is ``loss(params, batch)`` for ONE example: ``params`` a dict of arrays (shared by every
example), ``batch`` a dict of that example's data. `LOSSES` names them; `params_shapes` and
`data_shapes` give the per-example shapes a case's sizes make, and `draw` stacks a batch the way
a case's ``axes`` say (an entry with axis ``None`` is shared by every example, not stacked).
"""
from __future__ import annotations

import jax.numpy as jnp
import numpy as np


def linear(params, batch):
    """weight * |tanh(x @ w + b) - y|^2 for one example."""
    r = jnp.tanh(batch["x"] @ params["w"] + params["b"]) - batch["y"]
    return batch["weight"] * jnp.sum(r * r)


def two_layer(params, batch):
    """|tanh(x @ w1) @ w2 / temperature - y|^2 for one example."""
    h = jnp.tanh(batch["x"] @ params["w1"])
    r = h @ params["w2"] / batch["temperature"] - batch["y"]
    return jnp.sum(r * r)


def logistic(params, batch):
    """log(1 + exp(-label * (x @ w + b))) for one example, label in {-1, 1}, plus a shared
    penalty ``l2 * |w|^2``."""
    margin = batch["label"] * (batch["x"] @ params["w"] + params["b"])
    return jnp.logaddexp(0.0, -margin) + batch["l2"] * jnp.sum(params["w"] ** 2)


LOSSES = {"linear": linear, "two_layer": two_layer, "logistic": logistic}


def params_shapes(model: str, d: int, k: int) -> dict:
    return {"linear": {"w": (d, k), "b": (k,)},
            "two_layer": {"w1": (d, k + 1), "w2": (k + 1, k)},
            "logistic": {"w": (d,), "b": ()}}[model]


def data_shapes(model: str, d: int, k: int) -> dict:
    """One example's data; every scalar entry is positive where the loss divides by it."""
    return {"linear": {"x": (d,), "y": (k,), "weight": ()},
            "two_layer": {"x": (d,), "y": (k,), "temperature": ()},
            "logistic": {"x": (d,), "label": (), "l2": ()}}[model]


def _values(rng, name: str, shape) -> np.ndarray:
    if name in ("weight", "temperature", "l2"):
        return rng.uniform(0.5, 2.0, shape).astype(np.float32)
    if name == "label":
        return rng.choice(np.array([-1.0, 1.0], np.float32), shape)
    return rng.standard_normal(shape).astype(np.float32)


def stacked(shape, axis, size) -> tuple[int, ...]:
    """``shape`` with a batch axis of ``size`` inserted at ``axis`` (counted in the result)."""
    if axis is None:
        return tuple(shape)
    where = axis + len(shape) + 1 if axis < 0 else axis
    return tuple(shape[:where]) + (size,) + tuple(shape[where:])


def draw(case) -> tuple[dict, dict]:
    """``(params, batch)`` of a case: arrays from its seed, each data entry stacked along its
    axis in ``case["axes"]`` (or shared, for ``None``)."""
    rng = np.random.default_rng(case["_seed"])
    model, d, k, size = case["model"], case["d"], case["k"], case["B"]
    params = {n: (rng.standard_normal(s) * 0.5).astype(np.float32)
              for n, s in params_shapes(model, d, k).items()}
    batch = {n: _values(rng, n, stacked(s, case["axes"][n], size))
             for n, s in data_shapes(model, d, k).items()}
    return params, batch


def example(batch: dict, axes: dict, i: int) -> dict:
    """Example ``i`` of a stacked batch: each stacked entry indexed along its axis."""
    return {n: v if axes[n] is None else np.take(v, i, axis=axes[n]) for n, v in batch.items()}
