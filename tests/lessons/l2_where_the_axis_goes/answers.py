"""Reference answers to lesson 2's exercises (the exercise notebook's solutions), and realistic
wrong ones, each named after its mistake."""
import jax
import jax.numpy as jnp


# ---- right ---------------------------------------------------------------------------------------

def my_matchaxis(src, dst, x, size, sum_match=False):
    if src == dst:
        return x
    if isinstance(src, int) and isinstance(dst, int):
        return jnp.moveaxis(x, src, dst)
    if src is None:
        axis = dst + x.ndim + 1 if dst < 0 else dst
        return jnp.broadcast_to(jnp.expand_dims(x, axis), x.shape[:axis] + (size,) + x.shape[axis:])
    if sum_match:
        return x.sum(src)
    raise ValueError("mapped output, unmapped destination")


def choose_axes(layout):
    args = layout["args"]
    in_axes = tuple(a["batch"] for a in args)
    if layout["out"] != "free":
        return in_axes, layout["out"]
    pos = [None if a["batch"] is None else a["batch"] % a["rank"] for a in args]
    fn = layout["fn"]
    if fn in ("scale", "mul"):
        out = next(p for p in pos if p is not None)
    elif fn == "mv":
        A, v = pos
        out = 0 if (A is not None and v is not None) or A == 0 else 1
    elif fn == "colsum":
        out = max(pos[0] - 1, 0)
    else:
        out = (pos[1], pos[0])
    return in_axes, out


def pairwise(x, y, order="ij"):
    grid = jax.vmap(jax.vmap(lambda a, b: a @ b, in_axes=(None, 0)), in_axes=(0, None))
    return grid(x, y) if order == "ij" else grid(y, x)


def score_batch(w, xs):
    return jax.vmap(lambda w, x: jnp.tanh(x @ w), in_axes=(None, 0))(w, xs)


# ---- wrong: matchaxis ----------------------------------------------------------------------------

def swapaxes_matchaxis(src, dst, x, size, sum_match=False):
    if isinstance(src, int) and isinstance(dst, int) and src != dst:
        return jnp.swapaxes(x, src, dst)
    return my_matchaxis(src, dst, x, size, sum_match)


def ndim_matchaxis(src, dst, x, size, sum_match=False):
    if src is None and isinstance(dst, int):
        axis = dst + x.ndim if dst < 0 else dst          # forgets the result's extra axis
        return jnp.broadcast_to(jnp.expand_dims(x, axis), x.shape[:axis] + (size,) + x.shape[axis:])
    return my_matchaxis(src, dst, x, size, sum_match)


def always_sum_matchaxis(src, dst, x, size, sum_match=False):
    if isinstance(src, int) and dst is None:
        return x.sum(src)
    return my_matchaxis(src, dst, x, size, sum_match)


def none_raises_matchaxis(src, dst, x, size, sum_match=False):
    if dst is None:
        raise ValueError("not mapped")
    return my_matchaxis(src, dst, x, size, sum_match)


def reshape_matchaxis(src, dst, x, size, sum_match=False):
    if isinstance(src, int) and isinstance(dst, int) and src != dst:
        return x.reshape(jnp.moveaxis(x, src, dst).shape)
    return my_matchaxis(src, dst, x, size, sum_match)


# ---- wrong: choose_axes --------------------------------------------------------------------------

def default_out_axes(layout):
    in_axes, _ = choose_axes(layout)
    return in_axes, 0 if layout["fn"] != "pair" else (0, 0)


def front_in_axes(layout):
    _, out = choose_axes(layout)
    return tuple(0 for _ in layout["args"]), out


def out_axes_zero(layout):
    """Right in_axes, and out_axes 0 for every free single output (pair's answer is right)."""
    in_axes, out = choose_axes(layout)
    return in_axes, out if layout["fn"] == "pair" or layout["out"] != "free" else 0


def none_out_axes(layout):
    in_axes, out = choose_axes(layout)
    return in_axes, (None, None) if layout["fn"] == "pair" else None


def broadcasts_unbatched(layout):
    in_axes, out = choose_axes(layout)
    if layout["fn"] == "pair":
        out = tuple(0 if o is None else o for o in out)
    return in_axes, out


# ---- wrong: pairwise -----------------------------------------------------------------------------

def swapped_nesting(x, y, order="ij"):
    inner = (None, 0) if order == "ij" else (0, None)
    outer = (0, None) if order == "ij" else (None, 0)
    return jax.vmap(jax.vmap(lambda a, b: a @ b, in_axes=inner), in_axes=outer)(x, y)


def elementwise_pair(x, y, order="ij"):
    grid = jax.vmap(jax.vmap(lambda a, b: jnp.sum(a * b), in_axes=(None, 0)), in_axes=(0, None))
    return grid(x, y) if order == "ij" else grid(y, x)


def ignores_order(x, y, order="ij"):
    return pairwise(x, y)


def widened_operand(x, y, order="ij"):
    ys = jnp.broadcast_to(y, (x.shape[0],) + y.shape)
    grid = jax.vmap(jax.vmap(lambda a, b: a @ b, in_axes=(None, 0)), in_axes=(0, 0))
    out = grid(x, ys)
    return out if order == "ij" else pairwise(x, y, "ji")


def loops_over_rows(x, y, order="ij"):
    outer, inner = (x, y) if order == "ij" else (y, x)
    return jnp.stack([jax.vmap(lambda b: a @ b)(inner) for a in outer])


# ---- wrong: score_batch --------------------------------------------------------------------------

def naive_score_batch(w, xs):
    def naive(w, x):
        return jnp.tanh((w * x.reshape((-1,) + (1,) * (w.ndim - 1))).sum(axis=0))
    return jax.vmap(naive, in_axes=(None, 0))(w, xs)


def copied_weight(w, xs):
    ws = jnp.broadcast_to(w, (xs.shape[0],) + w.shape)
    return jax.vmap(lambda w, x: jnp.tanh(x @ w))(ws, xs)


def no_tanh(w, xs):
    return jax.vmap(lambda w, x: x @ w, in_axes=(None, 0))(w, xs)


def hand_batched(w, xs):
    return jnp.tanh(xs @ w)


def vmaps_only_the_tanh(w, xs):
    return jax.vmap(jnp.tanh)(xs @ w)


def batch_last(w, xs):
    return jax.vmap(lambda w, x: jnp.tanh(x @ w), in_axes=(None, 0), out_axes=-1)(w, xs)


def hints(res) -> str:
    """The hints of a failed result, joined (a passed result is a test failure here)."""
    assert not res.passed, res.summary()
    return " ".join(f.hint for f in res.findings)
