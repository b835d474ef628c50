"""How JAX's batching internals differ across releases: measured history, and the live measure.

Each `Fact` is one question with the answer each release gave, measured in a fresh process per
release (``tools/measure-history`` re-measures them all). ``measure(name)`` asks the installed
JAX the same question, so a lesson can print the history with the student's own row computed
live, and the release matrix fails where the history is wrong for the JAX it runs.

``python -m grader.core._jax.history`` prints every live answer as JSON.
"""
from __future__ import annotations

import inspect
import json
import warnings
from dataclasses import dataclass
from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from . import (B, JAX_VERSION, ShapedArray, new_primitive, open_jaxpr, register_rule,  # noqa: F401
               release, unregister_rule)  # (release: for core.history)


@dataclass(frozen=True)
class Fact:
    """One way releases differ: a question, and the answer from each release on (oldest first)."""
    question: str
    since: tuple[tuple[str, object], ...]      # (first release, value), in release order

    def value_for(self, version: tuple[int, ...]) -> object:
        value = self.since[0][1]
        for first, later in self.since:
            if release(first) <= version:
                value = later
        return value

    def rows(self) -> list[tuple[str, object]]:
        """``("0.4.36 - 0.8.1", value)`` per range; the last range is open-ended."""
        out = []
        for i, (first, value) in enumerate(self.since):
            nxt = self.since[i + 1][0] if i + 1 < len(self.since) else None
            out.append((f"{first} - {PREVIOUS[nxt]}" if nxt else f"{first} and later", value))
        return out


# Every release from the oldest supported, in order: a range names its last measured release.
MEASURED = ("0.4.36", "0.4.37", "0.4.38", "0.5.0", "0.5.1", "0.5.2", "0.5.3", "0.6.0", "0.6.1",
            "0.6.2", "0.7.0", "0.7.1", "0.7.2", "0.8.0", "0.8.1", "0.8.2", "0.8.3", "0.9.0",
            "0.9.0.1", "0.9.1", "0.9.2", "0.10.0", "0.10.1", "0.10.2", "0.11.0", "0.11.1",
            "0.11.2", "0.12.0", "0.12.0.1")
PREVIOUS = {b: a for a, b in zip(MEASURED, MEASURED[1:])}
_FIRST, _PLAIN, _FANCY = MEASURED[0], "primitive_batchers", "fancy_primitive_batchers"
_MOVED_AT_0_5_1 = ((_FIRST, _PLAIN), ("0.5.1", _FANCY))
_MOVED_AT_0_8_0 = ((_FIRST, _PLAIN), ("0.8.0", _FANCY))

HISTORY: dict[str, Fact] = {
    "layout": Fact("how the batching-rule tables are laid out",
                   (("0.4.36", "split"), ("0.8.2", "collapsed"))),
    # Rules migrate from primitive_batchers to fancy_primitive_batchers release by release.
    "dot_general_table": Fact("which table holds dot_general's rule", _MOVED_AT_0_5_1),
    "broadcast_in_dim_table": Fact("which table holds broadcast_in_dim's rule", _MOVED_AT_0_5_1),
    "reshape_table": Fact("which table holds reshape's rule", _MOVED_AT_0_5_1),
    "add_any_table": Fact("which table holds add_any's rule", _MOVED_AT_0_8_0),
    "conv_table": Fact("which table holds conv_general_dilated's rule", _MOVED_AT_0_8_0),
    "proxy_in": Fact("what `lax.sin_p in primitive_batchers` does",
                     (("0.4.36", "answers"), ("0.8.2", "KeyError"), ("0.9.0", "TypeError"))),
    "skippable_batchers": Fact("whether batching has a skippable_batchers dict",
                               (("0.4.36", True), ("0.9.1", False))),
    "aval": Fact("how a BatchTracer gets its aval",
                 (("0.4.36", "property"), ("0.10.0", "stored in __init__"))),
    "not_mapped": Fact("whether batching still defines the not_mapped alias",
                       (("0.4.36", True), ("0.10.2", False))),
    "matchaxis_signature": Fact(
        "matchaxis's parameters",
        (("0.4.36", "axis_name, sz, src, dst, x, sum_match"),
         ("0.5.1", "axis_name, sz, mesh_axis, src, dst, x, sum_match"),
         ("0.10.0", "axis_data, src, dst, x, sum_match"))),
    "vectorized_batcher_axis_data": Fact("whether vectorized_batcher takes axis_data",
                                         (("0.4.36", False), ("0.8.2", True))),
    "make_jaxpr_returns": Fact("the class jax.make_jaxpr returns",
                               (("0.4.36", "ClosedJaxpr"), ("0.11.0", "Jaxpr"))),
    "jit_primitive": Fact("the name of jit's primitive in a jaxpr",
                          (("0.4.36", "pjit"), ("0.7.0", "jit"))),
    "literal_print": Fact("how a jaxpr prints the literal 2.0",
                          (("0.4.36", "2.0"), ("0.6.1", "2.0:f32[]"))),
    "process_call": Fact("whether BatchTrace has process_call",
                         (("0.4.36", True), ("0.11.1", False))),
    "scan_params": Fact("the parameters a scan equation counts its inputs with",
                        (("0.4.36", "num_consts, num_carry"), ("0.11.0", "ft_in, ft_out"))),
    "vmap_sum_match": Fact("what jax.vmap's sum_match parameter is",
                           (("0.4.36", "absent"), ("0.9.0", "undocumented"),
                            ("0.11.1", "documented"))),
    "vmap_out_axes_infer": Fact("whether jax.vmap accepts batching.infer in out_axes",
                                (("0.4.36", False), ("0.9.0", True))),
    "tracer_repr": Fact("how a BatchTracer prints itself",
                        (("0.4.36", "Traced<...>with<BatchTrace>"), ("0.7.0", "VmapTracer<...>"),
                         ("0.8.2", "VmapTracer(aval=..., batched=...)"))),
    "unmapped_sin_route": Fact("whether vmap calls sin's rule for an unmapped input, or binds it above",
                               (("0.4.36", "shortcut"), ("0.8.2", "rule"))),
    "out_axes_move_processed": Fact(
        "whether vmap's move of the result to out_axes=0 passes through process_primitive",
        (("0.4.36", False), ("0.6.0", True))),
    "origin_message": Fact("what a ConcretizationTypeError calls a vmap tracer",
                           (("0.4.36", "BatchTracer"), ("0.12.0", "VmapTracer"))),
    "public_batching_exports": Fact(
        "which of BatchTracer, matchaxis, vectorized_batcher jax.interpreters.batching exports",
        (("0.4.36", "BatchTracer, matchaxis, vectorized_batcher"), ("0.9.0", "none"))),
    "defreducer_signature": Fact("defreducer's parameters",
                                 (("0.4.36", "prim, ident"), ("0.9.1", "prim"))),
    # One row: the same answer on every release measured, checked on each so that a change shows.
    "jit_table": Fact("which table holds jit's (pjit's) rule", ((_FIRST, _FANCY),)),
    "in_axes_1_transpose_eqn": Fact("whether vmap(sin, in_axes=1)'s jaxpr holds a transpose",
                                    ((_FIRST, True),)),
    "leak_message": Fact("what an UnexpectedTracerError calls a leaked vmap tracer",
                         ((_FIRST, "BatchTracer"),)),
    "out_axes_none_error": Fact(
        "the error of out_axes=None on a batched output",
        ((_FIRST, "ValueError: at vmap out_axes, got axis spec None but output was batched on axis 0"),)),
    "reducer_np_add": Fact('whether reducer_batcher\'s source holds "np.add(axes, 1)"', ((_FIRST, True),)),
    # Added for the lessons (measured on all 29 releases, one fresh process each).
    "batch_dim_annotation": Fact("how BatchTracer.__init__ annotates batch_dim",
                                 (("0.4.36", "NotMapped | int | RaggedAxis"), ("0.8.2", "NotMapped | int"))),
    "matchaxis_extra_cases": Fact("which markers besides an int and None matchaxis's source handles",
                                  (("0.4.36", "jumble_axis"), ("0.8.2", "none"), ("0.9.0", "infer, sum_axis"))),
    "rule_numpy_int_out_dim": Fact("what vmap does when an old-style rule returns a numpy integer as its out dim",
                                   (("0.4.36", "accepts it"), ("0.10.0", "rejects it"))),
    "shared_rule_names": Fact("which primitive names key two different rules after one vmap",
                              (("0.4.36", "pbroadcast"), ("0.6.0", "none"))),
    "ordinary_rules_table": Fact("which table holds the rules of sin, add, reduce_sum and transpose",
                                 ((_FIRST, _PLAIN), ("0.8.2", _FANCY))),
    "vmap_out_axes_sum_axis": Fact("whether jax.vmap accepts batching.sum_axis in out_axes (and sums)",
                                   (("0.4.36", False), ("0.9.0", True))),
}


def expected(fact: str, version: tuple[int, ...] = JAX_VERSION) -> object:
    """What ``HISTORY`` says release ``version`` (default: the installed one) does."""
    return HISTORY[fact].value_for(version)


# ---- the live measures: the same question asked of the installed JAX -----------------------------

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


def _numpy_int_out_dim():
    """Register a rule answering ``np.int64(dim)`` on a fresh primitive, vmap it, take it away again."""
    prim = new_primitive("numpy_int_out_dim")
    prim.def_impl(lambda v: v)
    prim.def_abstract_eval(lambda v: ShapedArray(v.shape, v.dtype))
    register_rule(prim, lambda vals, dims, **params: (prim.bind(*vals, **params), np.int64(dims[0])))
    try:
        err = _raised(lambda: jax.vmap(prim.bind)(jnp.ones((2, 3))))
    finally:
        unregister_rule(prim)
    return "accepts it" if err is None else "rejects it"


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
    "rule_numpy_int_out_dim": _numpy_int_out_dim,
    "shared_rule_names": _shared_rule_names,
    "ordinary_rules_table": _ordinary_rules_table,
    "vmap_out_axes_sum_axis": _vmap_out_axes_sum_axis,
}
assert set(MEASURES) == set(HISTORY), "every fact needs a live measure"


def measure(fact: str) -> object:
    """The installed JAX's answer to ``HISTORY[fact].question``."""
    return MEASURES[fact]()


def _answer(fact: str) -> object:
    """``measure(fact)``, or the crash as text: one broken measure must not hide the others."""
    try:
        return measure(fact)
    except Exception as err:                  # reported, not raised: the matrix lists it
        return f"crashed: {type(err).__name__}: {err}"


def _main() -> None:
    print(json.dumps({"jax": jax.__version__, **{f: _answer(f) for f in HISTORY}}))


if __name__ == "__main__":
    _main()
