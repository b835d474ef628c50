"""What lesson 4 shows live: its small model, the programs whose costs it compares, the source
lines it quotes, the calls of its route self-check. Every number is measured on the installed
JAX when asked; nothing here is a stored reading."""
from __future__ import annotations

import ast
import inspect
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from ... import core
from .kit import functions, observe


def source_lines(fn, *words: str) -> list[str]:
    """The lines of ``fn``'s installed source that hold any of ``words``, its docstring left
    out (a docstring's examples mention the same names)."""
    lines, _ = inspect.getsourcelines(inspect.unwrap(fn))
    tree = ast.parse(textwrap.dedent("".join(lines)))
    node = next(n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef)))
    skip = set()
    if ast.get_docstring(node) is not None:
        doc = node.body[0]
        skip = set(range(doc.lineno - 1, doc.end_lineno))
    return [line.rstrip() for i, line in enumerate(lines)
            if i not in skip and any(w in line for w in words)]


def visible_cases(grade_id: str) -> list[dict]:
    """An exercise's visible cases as the exercise notebook prints them (seeds left out)."""
    from ... import lessons
    cases = lessons.exercises()[grade_id].cases(np.random.default_rng(0), False)
    return [{k: v for k, v in case.items() if not k.startswith("_")} for case in cases]


# ---- section 1: per-example gradients ------------------------------------------------------------

def loss(params, x, y):
    """One example's loss: |tanh(x @ w + b) - y|^2."""
    # lax's dot and tanh bind their primitives directly (x @ w is a small jit, whose batched
    # program JAX caches): a trace of the batched program shows them every time.
    r = lax.tanh(lax.dot(x, params["w"]) + params["b"]) - y
    return jnp.sum(r * r)


def model(size: int, d: int = 4, k: int = 3, seed: int = 0):
    """``(params, xs, ys)``: the parameters and a batch of ``size`` examples, from ``seed``."""
    rng = np.random.default_rng(seed)
    params = {"w": jnp.asarray(rng.standard_normal((d, k)).astype(np.float32) * 0.5),
              "b": jnp.asarray(rng.standard_normal(k).astype(np.float32) * 0.1)}
    xs = jnp.asarray(rng.standard_normal((size, d)).astype(np.float32))
    ys = jnp.asarray(rng.standard_normal((size, k)).astype(np.float32))
    return params, xs, ys


def vmapped_grads(params, xs, ys):
    return jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))(params, xs, ys)


def looped_grads(params, xs, ys):
    return [jax.grad(loss)(params, xs[i], ys[i]) for i in range(xs.shape[0])]


def summed_grad(params, xs, ys):
    return jax.grad(lambda p: jnp.sum(jax.vmap(loss, in_axes=(None, 0, 0))(p, xs, ys)))(params)


GRADIENTS = {"a Python loop of grad": looped_grads, "vmap of grad": vmapped_grads,
             "grad of the summed loss": summed_grad}


def work(fn, *args) -> tuple:
    """The equations of ``fn``'s program that do work (calls looked into, not counted)."""
    eqns = core.summarize_fn(fn, *args, recursive=True)
    return tuple(e for e in eqns if e.primitive not in observe.CALLS)


def gradient_costs(size: int) -> dict[str, core.Cost]:
    """The `Cost` of each of the three gradient programs on a batch of ``size``."""
    params, xs, ys = model(size)
    return {name: core.Cost.of(work(fn, params, xs, ys)) for name, fn in GRADIENTS.items()}


# ---- section 2: jacobians ------------------------------------------------------------------------

def tall_and_wide(small: int = 3, large: int = 40) -> dict:
    """``{"tall": (f, x), "wide": (g, x)}``: R^small -> R^large and R^large -> R^small."""
    made = {}
    for name, (n, m) in {"tall": (small, large), "wide": (large, small)}.items():
        case = {"f": "tanh_layer", "n": n, "m": m, "_seed": 7}
        made[name] = (functions.make(case), jnp.asarray(functions.point(case)))
    return made


def jacobian_table(small: int = 3, large: int = 40) -> list[dict]:
    """For jacfwd and jacrev on the tall and the wide function: the size of the axis vmap maps,
    and the program's cost."""
    rows = []
    for shape, (f, x) in tall_and_wide(small, large).items():
        for name, jac in (("jacfwd", jax.jacfwd), ("jacrev", jax.jacrev)):
            rows.append({"function": shape, "mode": name,
                         "mapped": observe.batch_sizes(jac(f), x),
                         "cost": core.Cost.of(work(jac(f), x))})
    return rows


__all__ = ["GRADIENTS", "gradient_costs", "jacobian_table", "looped_grads", "loss", "model",
           "source_lines", "summed_grad", "tall_and_wide", "visible_cases", "vmapped_grads",
           "work"]
