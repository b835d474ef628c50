"""Reference answers to lesson 1's exercises (the same as the exercise notebook's solutions), and
realistic wrong ones, each named after its mistake."""
import jax
import jax.numpy as jnp

from grader.lessons.l1_rule_per_primitive import TABLE_NAMES


# ---- right ---------------------------------------------------------------------------------------

def spy(f, in_axes, *args):
    report = []

    def watched(*xs):
        report[:] = [(None, tuple(x.shape), tuple(x.shape)) if axis is None
                     else (int(x.batch_dim), tuple(x.shape), tuple(x.val.shape))
                     for x, axis in zip(xs, in_axes)]
        return f(*xs)

    jax.vmap(watched, in_axes=in_axes)(*args)
    return report


def softsign_rule(prim, vals, dims, **params):
    (x,), (d,) = vals, dims
    return prim.bind(x, **params), d


def scaled_diff_rule(prim, vals, dims, **params):
    moved = [jnp.expand_dims(v, 0) if d is None else jnp.moveaxis(v, d, 0)
             for v, d in zip(vals, dims)]
    return prim.bind(*moved, **params), 0


def sumsq_rule(prim, vals, dims, *, axes):
    (x,), (d,) = vals, dims
    return prim.bind(x, axes=tuple(a + 1 if a >= d else a for a in axes)), \
        d - sum(1 for a in axes if a < d)


def rowmax_rule(prim, vals, dims, **params):
    (x,), (d,) = vals, dims
    x = jnp.moveaxis(x, d, 0)
    b, n, m = x.shape
    return prim.bind(x.reshape(b * n, m), **params).reshape(b, n), 0


def which_table(module, prim):
    for name in TABLE_NAMES:
        table = getattr(module, name, None)
        if isinstance(table, dict) and prim in table:
            return name
    return None


def table_sizes(module):
    return {n: len(t) for n in TABLE_NAMES if isinstance(t := getattr(module, n, None), dict)}


# ---- wrong: spies --------------------------------------------------------------------------------

def spy_copies_in_axes(f, in_axes, *args):
    report = []

    def watched(*xs):
        report[:] = [(a, tuple(x.shape), tuple(x.shape) if a is None else tuple(x.val.shape))
                     for x, a in zip(xs, in_axes)]
        return f(*xs)

    jax.vmap(watched, in_axes=in_axes)(*args)
    return report


def spy_reports_seen_shape(f, in_axes, *args):
    report = []

    def watched(*xs):
        report[:] = [(None, x.shape, x.shape) if a is None else (x.batch_dim, x.shape, x.shape)
                     for x, a in zip(xs, in_axes)]
        return f(*xs)

    jax.vmap(watched, in_axes=in_axes)(*args)
    return report


def spy_assumes_tracers(f, in_axes, *args):
    report = []

    def watched(*xs):
        report[:] = [(x.batch_dim, x.shape, x.val.shape) for x in xs]
        return f(*xs)

    jax.vmap(watched, in_axes=in_axes)(*args)
    return report


def spy_trusts_hasattr(f, in_axes, *args):
    report = []

    def watched(*xs):
        report[:] = [(x.batch_dim, x.shape, x.val.shape) if hasattr(x, "batch_dim")
                     else (None, x.shape, x.shape) for x in xs]
        return f(*xs)

    jax.vmap(watched, in_axes=in_axes)(*args)
    return report


def spy_reports_val_as_seen(f, in_axes, *args):
    report = []

    def watched(*xs):
        report[:] = [(None, tuple(x.shape), tuple(x.shape)) if a is None
                     else (int(x.batch_dim), tuple(x.val.shape), tuple(x.val.shape))
                     for x, a in zip(xs, in_axes)]
        return f(*xs)

    jax.vmap(watched, in_axes=in_axes)(*args)
    return report


# ---- wrong: rules --------------------------------------------------------------------------------

def softsign_front(prim, vals, dims, **params):
    return prim.bind(vals[0], **params), 0


def softsign_loop(prim, vals, dims, **params):
    x = jnp.moveaxis(vals[0], dims[0], 0)
    return jnp.stack([prim.bind(row, **params) for row in x]), 0


def scaled_diff_materialised(prim, vals, dims, **params):
    size = next(v.shape[d] for v, d in zip(vals, dims) if d is not None)
    moved = [jnp.broadcast_to(v, (size,) + v.shape) if d is None else jnp.moveaxis(v, d, 0)
             for v, d in zip(vals, dims)]
    return prim.bind(*moved, **params), 0


def scaled_diff_no_size1(prim, vals, dims, **params):
    moved = [v if d is None else jnp.moveaxis(v, d, 0) for v, d in zip(vals, dims)]
    return prim.bind(*moved, **params), 0


def scaled_diff_drops_scale(prim, vals, dims, **params):
    moved = [jnp.expand_dims(v, 0) if d is None else jnp.moveaxis(v, d, 0)
             for v, d in zip(vals, dims)]
    return prim.bind(*moved, scale=1.0), 0


def sumsq_unshifted(prim, vals, dims, *, axes):
    return prim.bind(vals[0], axes=axes), dims[0]


def sumsq_axes_unshifted(prim, vals, dims, *, axes):
    (x,), (d,) = vals, dims
    return prim.bind(x, axes=axes), d - sum(1 for a in axes if a < d)


def sumsq_out_dim_unadjusted(prim, vals, dims, *, axes):
    (x,), (d,) = vals, dims
    return prim.bind(x, axes=tuple(a + 1 if a >= d else a for a in axes)), d


def scaled_diff_moves_one(prim, vals, dims, **params):
    """Moves the first mapped operand's batch axis to the front and leaves the other's where it is."""
    first = next(i for i, d in enumerate(dims) if d is not None)
    moved = [jnp.expand_dims(v, 0) if d is None else jnp.moveaxis(v, d, 0) if i == first else v
             for i, (v, d) in enumerate(zip(vals, dims))]
    return prim.bind(*moved, **params), 0


def rowmax_wrong_unfold(prim, vals, dims, **params):
    x = jnp.moveaxis(vals[0], dims[0], 0)
    b, n, m = x.shape
    return prim.bind(x.reshape(b * n, m), **params).reshape(n, b), 1


def rowmax_vectorized(prim, vals, dims, **params):
    return prim.bind(vals[0], **params), dims[0]


def rowmax_assumes_front(prim, vals, dims, **params):
    b, n, m = vals[0].shape
    return prim.bind(vals[0].reshape(b * n, m)).reshape(b, n), 0


# ---- wrong: table readers ------------------------------------------------------------------------

def which_table_asks_proxies(module, prim):
    for name in TABLE_NAMES:
        table = getattr(module, name, None)
        if table is not None and prim in table:
            return name
    return None


def which_table_by_name(module, prim):
    for name in TABLE_NAMES:
        table = getattr(module, name, None)
        if isinstance(table, dict) and prim.name in {p.name for p in table}:
            return name
    return None


def which_table_tries_in(module, prim):
    for name in TABLE_NAMES:
        try:
            if prim in getattr(module, name):
                return name
        except Exception:  # a proxy or a missing table: skip it, as the mistaken answer does
            pass
    return None


def which_table_assumes_every_table(module, prim):
    for name in TABLE_NAMES:
        table = getattr(module, name)
        if isinstance(table, dict) and prim in table:
            return name
    return None


def table_sizes_tries_len(module):
    sizes = {}
    for name in TABLE_NAMES:
        try:
            sizes[name] = len(getattr(module, name))
        except Exception:  # a proxy that raises, or no such table
            pass
    return sizes


def table_sizes_every_batchers_dict(module):
    return {k: len(v) for k, v in vars(module).items()
            if k.endswith("batchers") and isinstance(v, dict)}


def table_sizes_counts_proxies(module):
    return {n: len(getattr(module, n)) for n in TABLE_NAMES if hasattr(module, n)}


def hints(res) -> str:
    """The hints of a failed result, joined (a passed result is a test failure here)."""
    assert not res.passed, res.summary()
    return " | ".join(f.hint for f in res.findings)
