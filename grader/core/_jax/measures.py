"""The live measures: each fact of `history.HISTORY` asked of the installed JAX.

One tiny, defensive function per fact; ``tools/measure-history`` runs them all on every release
in a fresh process, and ``tests/core/test_history.py`` checks them against the history.
"""
from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable

import jax
import jax.numpy as jnp
from jax import lax

from . import B, open_jaxpr


def _raised(fn) -> Exception | None:
    """The exception ``fn()`` raises (the kind or message is the answer), else ``None``."""
    try:
        fn()
    except Exception as err:                  # any kind: telling them apart is the point
        return err
    return None


def _tracer_word(err: Exception | None):
    """Which class name an error message calls the tracer by."""
    if err is None:
        return "no error"
    return next((w for w in ("VmapTracer", "BatchTracer") if w in str(err)), None)


def _layout():
    return "split" if isinstance(getattr(B, "primitive_batchers", None), dict) else "collapsed"


def _table_of(*names: str):
    """The real table(s) holding a rule for the primitive called ``names[0]`` (or a later spelling)."""
    for name in names:
        held = [t for t in ("primitive_batchers", "fancy_primitive_batchers")
                if isinstance(getattr(B, t, None), dict) and any(p.name == name for p in getattr(B, t))]
        if held:
            return "+".join(held)
    return None


def _proxy_in():
    err = _raised(lambda: lax.sin_p in B.primitive_batchers)
    return "answers" if err is None else type(err).__name__


def _aval():
    static = inspect.getattr_static(B.BatchTracer, "aval")
    return "property" if isinstance(static, property) else "stored in __init__"


def _eqns(fn, *args):
    return open_jaxpr(jax.make_jaxpr(fn)(*args)).eqns


def _literal_print():
    text = str(jax.make_jaxpr(lambda x: x * 2.0)(jnp.ones(3)))
    return "2.0:f32[]" if "2.0:f32[]" in text else "2.0"


def _scan_params():
    eqn = _eqns(lambda xs: jax.lax.scan(lambda c, x: (c + x, c), 0.0, xs), jnp.ones(3))[0]
    return "num_consts, num_carry" if "num_consts" in eqn.params else "ft_in, ft_out"


def _vmap_sum_match():
    if "sum_match" not in inspect.signature(jax.vmap).parameters:
        return "absent"
    return "documented" if "sum_match" in (jax.vmap.__doc__ or "") else "undocumented"


def _vmap_out_axes_infer():
    return hasattr(B, "infer") and _raised(
        lambda: jax.vmap(lambda x: x * 2.0, out_axes=B.infer)(jnp.ones((2, 3)))) is None


def _tracer_repr():
    seen = []
    jax.vmap(lambda x: seen.append(repr(x)) or x)(jnp.ones((2, 3)))
    if seen[0].startswith("VmapTracer("):
        return "VmapTracer(aval=..., batched=...)"
    return "VmapTracer<...>" if seen[0].startswith("VmapTracer") else "Traced<...>with<BatchTrace>"


def _unmapped_sin_route():
    """Wrap sin's rule in every table, vmap sin of an unmapped input, and see whether it ran."""
    tables = [t for t in (getattr(B, n, None) for n in ("primitive_batchers", "fancy_primitive_batchers"))
              if isinstance(t, dict) and lax.sin_p in t]
    called, rules = [], [t[lax.sin_p] for t in tables]
    for table, rule in zip(tables, rules):
        table[lax.sin_p] = lambda *a, _rule=rule, **k: called.append(1) or _rule(*a, **k)
    try:
        jax.vmap(lambda x, y: lax.add(x, lax.sin(y)), in_axes=(0, None))(jnp.ones((4, 3)), jnp.ones(3))
    finally:
        for table, rule in zip(tables, rules):
            table[lax.sin_p] = rule
    return "rule" if called else "shortcut"


def _sin_in_axes_1():
    return jax.vmap(jax.lax.sin, in_axes=1), jnp.ones((3, 7, 5))


def _move_processed():
    """Whether a ``transpose`` reaches ``process_primitive`` while vmap(sin, in_axes=1) runs."""
    seen, original = [], B.BatchTrace.process_primitive

    def spy(self, p, *rest):
        seen.append(p.name)
        return original(self, p, *rest)

    B.BatchTrace.process_primitive = spy
    try:
        fn, x = _sin_in_axes_1()
        fn(x)
    finally:
        B.BatchTrace.process_primitive = original
    return "transpose" in seen


def _leak_message():
    leaked = []
    jax.vmap(lambda x: leaked.append(x) or x)(jnp.ones(2))
    return _tracer_word(_raised(lambda: leaked[0] + 1.0))


def _out_axes_none_error():
    err = _raised(lambda: jax.vmap(lambda x: x, out_axes=None)(jnp.ones(3)))
    return "no error" if err is None else f"{type(err).__name__}: {err}"


def _public_exports():
    import jax.interpreters.batching as public
    with warnings.catch_warnings():           # deprecated names warn on access
        warnings.simplefilter("ignore")
        names = [n for n in ("BatchTracer", "matchaxis", "vectorized_batcher") if hasattr(public, n)]
    return ", ".join(names) or "none"


def _params(fn) -> str:
    return ", ".join(inspect.signature(fn).parameters)


def _vmap_out_axes_sum_axis():
    if not hasattr(B, "sum_axis"):
        return False
    x = jnp.arange(6.0).reshape(2, 3)
    try:
        out = jax.vmap(lambda v: v * 2.0, out_axes=B.sum_axis)(x)
    except Exception:                         # refused: the answer is "no"
        return False
    return bool(jnp.all(out == (x * 2.0).sum(0)))


def _matchaxis_extra_cases():
    source = inspect.getsource(B.matchaxis)
    found = [name for name, piece in (("jumble_axis", "jumble_axis"), ("infer", "dst is infer"),
                                      ("sum_axis", "sum_axis")) if piece in source]
    return ", ".join(found) or "none"


def _shared_rule_names():
    jax.vmap(lambda x: jnp.sum(jnp.tanh(x)))(jnp.ones((2, 2)))    # the first vmap imports more rules
    objects: dict[str, set] = {}
    for name in ("primitive_batchers", "fancy_primitive_batchers"):
        table = getattr(B, name, None)
        for prim in table if isinstance(table, dict) else ():
            objects.setdefault(prim.name, set()).add(id(prim))
    return ", ".join(sorted(n for n, ids in objects.items() if len(ids) > 1)) or "none"


def _ordinary_rules_table():
    held = {_table_of(name) for name in ("sin", "add", "reduce_sum", "transpose")}
    return held.pop() if len(held) == 1 else "mixed: " + ", ".join(sorted(map(str, held)))


MEASURES: dict[str, Callable[[], object]] = {
    "layout": _layout,
    "dot_general_table": lambda: _table_of("dot_general"),
    "broadcast_in_dim_table": lambda: _table_of("broadcast_in_dim"),
    "reshape_table": lambda: _table_of("reshape"),
    "jit_table": lambda: _table_of("jit", "pjit"),
    "add_any_table": lambda: _table_of("add_any"),
    "conv_table": lambda: _table_of("conv_general_dilated"),
    "proxy_in": _proxy_in,
    "skippable_batchers": lambda: isinstance(getattr(B, "skippable_batchers", None), dict),
    "aval": _aval,
    "not_mapped": lambda: hasattr(B, "not_mapped"),
    "matchaxis_signature": lambda: _params(B.matchaxis),
    "vectorized_batcher_axis_data":
        lambda: "axis_data" in inspect.signature(B.vectorized_batcher).parameters,
    "make_jaxpr_returns": lambda: type(jax.make_jaxpr(lambda x: x)(1.0)).__name__,
    "jit_primitive": lambda: _eqns(jax.jit(lambda x: x + 1.0), 1.0)[0].primitive.name,
    "literal_print": _literal_print,
    "process_call": lambda: hasattr(B.BatchTrace, "process_call"),
    "scan_params": _scan_params,
    "vmap_sum_match": _vmap_sum_match,
    "vmap_out_axes_infer": _vmap_out_axes_infer,
    "tracer_repr": _tracer_repr,
    "unmapped_sin_route": _unmapped_sin_route,
    "in_axes_1_transpose_eqn": lambda: "transpose" in [e.primitive.name for e in _eqns(*_sin_in_axes_1())],
    "out_axes_move_processed": _move_processed,
    "leak_message": _leak_message,
    "origin_message": lambda: _tracer_word(_raised(lambda: jax.vmap(lambda x: float(x))(jnp.ones(2)))),
    "out_axes_none_error": _out_axes_none_error,
    "public_batching_exports": _public_exports,
    "reducer_np_add": lambda: "np.add(axes, 1)" in inspect.getsource(B.reducer_batcher),
    "defreducer_signature": lambda: _params(B.defreducer),
    "batch_dim_annotation":
        lambda: str(inspect.signature(B.BatchTracer.__init__).parameters["batch_dim"].annotation),
    "matchaxis_extra_cases": _matchaxis_extra_cases,
    "shared_rule_names": _shared_rule_names,
    "ordinary_rules_table": _ordinary_rules_table,
    "vmap_out_axes_sum_axis": _vmap_out_axes_sum_axis,
}

# ---- lesson 4 (vmap meets autodiff): its measures live in measures_autodiff.py ------------------
from .measures_autodiff import MEASURES as _AUTODIFF  # noqa: E402  (after MEASURES exists)

MEASURES.update(_AUTODIFF)
