"""Answers to lesson 4's exercises: the right ones (the exercise notebook's own solution cells,
read from the source notebook, so there is one copy of each), realistic wrong ones, each named
after its mistake, and the pattern-matching student's: a copied lesson cell, a transcribed JAX
helper, a lookup of the visible cases."""
import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from grader.lessons import l4_vmap_meets_autodiff as L4
from tests.fixtures.solutions import solved

# ---- right ---------------------------------------------------------------------------------------

_RIGHT = solved("04-vmap-meets-autodiff", jax=jax, jnp=jnp, np=np, lax=lax, L4=L4)
per_example_grads, clipped_scale = _RIGHT["per_example_grads"], _RIGHT["clipped_scale"]
floored_cummax, vmap_jacobian = _RIGHT["floored_cummax"], _RIGHT["vmap_jacobian"]


# ---- the pattern-matching student ----------------------------------------------------------------

def lesson_per_example_grads(loss, params, batch, axes):
    """Lesson 4's cell, vmap(grad(loss), in_axes=(None, 0, 0)), fitted to this signature."""
    return jax.vmap(jax.grad(loss), in_axes=(None, 0))(params, batch)


def visible_per_example_grads(loss, params, batch, axes):
    """The axes of the visible cases, looked up rather than read: every entry at 0, or the
    second visible case's layout (x at 1, the scalar shared)."""
    if all(a == 0 for a in axes.values()):
        return lesson_per_example_grads(loss, params, batch, axes)
    spec = {n: (1 if n == "x" else None if n in ("temperature", "weight", "l2") else 0)
            for n in batch}
    return jax.vmap(jax.grad(loss), in_axes=(None, spec))(params, batch)


@jax.custom_vjp
def lesson_clipped_scale(w, x):
    """Lesson 4's `scale` (bwd: g * x, g * w), with the clip added: no sum over w's broadcast."""
    return w * x


lesson_clipped_scale.defvjp(
    lambda w, x: (w * x, (w, x)),
    lambda res, g: (jnp.clip(g, -1.0, 1.0) * res[1], jnp.clip(g, -1.0, 1.0) * res[0]))


@jax.custom_vjp
def visible_clipped_scale(w, x):
    """The visible cases' shapes, looked up: w like x, w of x's last axis, or a scalar w whose
    cotangent is summed over everything."""
    return w * x


def _visible_bwd(res, g):
    w, x = res
    g = jnp.clip(g, -1.0, 1.0)
    if w.ndim == 0:
        return jnp.sum(g * x), g * w
    if w.shape == x.shape:
        return g * x, g * w
    return jnp.sum(g * x, axis=0), g * w          # right for x (m, n), w (n,) only


visible_clipped_scale.defvjp(lambda w, x: (w * x, (w, x)), _visible_bwd)


@jax.custom_batching.custom_vmap
def lesson_floored_cummax(x, floor):
    """Lesson 4's rule (the kernel on the batch, out_batched = in_batched[0]), for two arguments."""
    return L4.running_max(x, floor)


lesson_floored_cummax.def_vmap(
    lambda axis_size, in_batched, x, floor: (L4.running_max(x, floor), in_batched[0]))


@jax.custom_batching.custom_vmap
def visible_floored_cummax(x, floor):
    """Broadcasts an unbatched argument, but calls the kernel directly: right for every visible
    case but the vmap of the vmap."""
    return L4.running_max(x, floor)


@visible_floored_cummax.def_vmap
def _visible_rule(axis_size, in_batched, x, floor):
    if not in_batched[0]:
        x = jnp.broadcast_to(x, (axis_size,) + x.shape)
    if not in_batched[1]:
        floor = jnp.broadcast_to(floor, (axis_size,) + floor.shape)
    return L4.running_max(x, floor), True


def transcribed_jacrev(f, x):
    """jax.jacrev's lines: vjp once, vmap the pullback over the output basis."""
    y, pullback = jax.vjp(f, x)
    return jax.vmap(pullback)(jnp.eye(y.size, dtype=y.dtype))[0]


def transcribed_jacfwd(f, x):
    """jax.jacfwd's lines: vmap jvp over the input basis, the tangents as the last axis."""
    push = lambda t: jax.jvp(f, (x,), (t,))[1]          # noqa: E731
    return jax.vmap(push, out_axes=-1)(jnp.eye(x.size, dtype=x.dtype))


def visible_jacobian(f, x):
    """The visible cases' shapes, looked up: n=3 is the tall one, n=12 the wide one."""
    return transcribed_jacfwd(f, x) if x.shape[0] == 3 else transcribed_jacrev(f, x)


# ---- wrong ---------------------------------------------------------------------------------------

def looped_grads(loss, params, batch, axes):
    size = next(np.shape(v)[a] for v, a in ((batch[n], axes[n]) for n in batch) if a is not None)
    grads = [jax.grad(loss)(params, {n: v if axes[n] is None else jnp.take(v, i, axis=axes[n])
                                     for n, v in batch.items()}) for i in range(size)]
    return jax.tree_util.tree_map(lambda *g: jnp.stack(g), *grads)


def mapped_params(loss, params, batch, axes):
    size = next(np.shape(v)[a] for v, a in ((batch[n], axes[n]) for n in batch) if a is not None)
    copies = jax.tree_util.tree_map(lambda p: jnp.broadcast_to(p, (size,) + p.shape), params)
    return jax.vmap(jax.grad(loss), in_axes=(0, axes))(copies, batch)


def summed_grads(loss, params, batch, axes):
    return jax.grad(lambda p: jnp.sum(jax.vmap(loss, in_axes=(None, axes))(p, batch)))(params)


def batch_last_grads(loss, params, batch, axes):
    return jax.vmap(jax.grad(loss), in_axes=(None, axes), out_axes=-1)(params, batch)


@jax.custom_vjp
def unclipped_scale(w, x):
    return w * x


unclipped_scale.defvjp(lambda w, x: (w * x, (w, x)), lambda res, g: (
    jnp.sum(g * res[1], axis=tuple(range(res[1].ndim - res[0].ndim))), g * res[0]))


@jax.custom_vjp
def batch_summing_scale(w, x):
    """Sums w's cotangent over axis 0, taking it for the batch."""
    return w * x


batch_summing_scale.defvjp(lambda w, x: (w * x, (w, x)), lambda res, g: (
    jnp.sum(jnp.clip(g, -1.0, 1.0) * res[1], axis=0), jnp.clip(g, -1.0, 1.0) * res[0]))


def plain_scale(w, x):
    return w * x


sequential_floored_cummax = jax.custom_batching.sequential_vmap(L4.running_max)


@jax.custom_batching.custom_vmap
def unbatched_claim(x, floor):
    """Says its output is batched only when x is."""
    return L4.running_max(x, floor)


@unbatched_claim.def_vmap
def _unbatched_rule(axis_size, in_batched, x, floor):
    if not in_batched[0]:
        x = jnp.broadcast_to(x, (axis_size,) + x.shape)
    if not in_batched[1]:
        floor = jnp.broadcast_to(floor, (axis_size,) + floor.shape)
    return unbatched_claim(x, floor), bool(in_batched[0]) and bool(in_batched[1])


@jax.custom_batching.custom_vmap
def decoy_floored_cummax(x, floor):
    """Calls the kernel in its rule for show and returns lax.cummax's result (red team, round 14)."""
    return L4.running_max(x, floor)


@decoy_floored_cummax.def_vmap
def _decoy_rule(axis_size, in_batched, x, floor):
    if not in_batched[0]:
        x = jnp.broadcast_to(x, (axis_size,) + x.shape)
    if not in_batched[1]:
        floor = jnp.broadcast_to(floor, (axis_size,) + floor.shape)
    decoy_floored_cummax(x, floor)                       # once, on the batch; the result dropped
    f = jnp.expand_dims(floor, tuple(range(floor.ndim, x.ndim)))
    return jax.lax.cummax(jnp.maximum(x, f), axis=x.ndim - 1), True


@jax.custom_batching.custom_vmap
def through_floored_cummax(x, floor):
    """Computes the answer with lax.cummax, then passes it through the kernel (red team, round 15)."""
    return L4.running_max(x, floor)


@through_floored_cummax.def_vmap
def _through_rule(axis_size, in_batched, x, floor):
    if not in_batched[0]:
        x = jnp.broadcast_to(x, (axis_size,) + x.shape)
    if not in_batched[1]:
        floor = jnp.broadcast_to(floor, (axis_size,) + floor.shape)
    done = jnp.maximum(jax.lax.cummax(x, axis=x.ndim - 1), floor[..., None])
    return through_floored_cummax(done, floor), True


@jax.custom_batching.custom_vmap
def two_faced_floored_cummax(x, floor):
    """Shows the kernel when traced, loops over the examples when run (red team, round 16)."""
    return L4.running_max(x, floor)


@two_faced_floored_cummax.def_vmap
def _two_faced_rule(axis_size, in_batched, x, floor):
    x = x if in_batched[0] else jnp.broadcast_to(x, (axis_size,) + x.shape)
    floor = floor if in_batched[1] else jnp.broadcast_to(floor, (axis_size,) + floor.shape)
    if isinstance(jnp.zeros(()), jax.core.Tracer):
        return two_faced_floored_cummax(x, floor), True
    return jnp.stack([jax.lax.cummax(jnp.maximum(x[i], floor[i][..., None]), axis=x.ndim - 2)
                      for i in range(axis_size)]), True


def copying_floored_cummax(way):
    """An honest rule that copies an unbatched argument ``way(n, a)`` instead of broadcasting."""
    @jax.custom_batching.custom_vmap
    def floored(x, floor):
        return L4.running_max(x, floor)

    @floored.def_vmap
    def _rule(axis_size, in_batched, x, floor):
        x = x if in_batched[0] else way(axis_size, x)
        floor = floor if in_batched[1] else way(axis_size, floor)
        return floored(x, floor), True
    return floored


COPIES = {"broadcast_to": lambda n, a: jnp.broadcast_to(a, (n,) + a.shape),
          "tile": lambda n, a: jnp.tile(a, (n,) + (1,) * a.ndim),
          "stack": lambda n, a: jnp.stack([a] * n),
          "concatenate": lambda n, a: jnp.concatenate([a[None]] * n),
          "zeros + a": lambda n, a: jnp.zeros((n,) + a.shape, a.dtype) + a,
          "ones * a": lambda n, a: jnp.ones((n,) + a.shape, a.dtype) * a,
          "repeat": lambda n, a: jnp.repeat(a[None], n, axis=0)}


def lax_floored_cummax(x, floor):
    """No kernel at all: lax.cummax, which vmap batches by itself."""
    return jax.lax.cummax(jnp.maximum(x, floor), axis=x.ndim - 1)


def looped_jacobian(f, x):
    return jnp.stack([jax.jvp(f, (x,), (t,))[1] for t in jnp.eye(x.shape[0])], axis=1)


def transposed_jacobian(f, x):
    return vmap_jacobian(f, x).T


def both_modes_jacobian(f, x):
    """Both jacobians, one kept: maps over n and over m."""
    fwd, rev = transcribed_jacfwd(f, x), transcribed_jacrev(f, x)
    return fwd if x.shape[0] < rev.shape[0] else rev


def hints(res) -> str:
    """The hints of a failed result, joined (a passed result is a test failure here)."""
    assert not res.passed, res.summary()
    return " ".join(f.hint for f in res.findings)
