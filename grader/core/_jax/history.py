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
from dataclasses import dataclass
from typing import Callable

from . import B, JAX_VERSION, release


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

HISTORY: dict[str, Fact] = {
    "layout": Fact("how the batching-rule tables are laid out",
                   (("0.4.36", "split"), ("0.8.2", "collapsed"))),
    "dot_general_table": Fact("which table holds dot_general's rule",
                              (("0.4.36", "primitive_batchers"),
                               ("0.5.0", "fancy_primitive_batchers"))),
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
         ("0.5.3", "axis_name, sz, mesh_axis, src, dst, x, sum_match"),
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
                         (("0.4.36", True), ("0.11.0", False))),
    "scan_params": Fact("the parameters a scan equation counts its inputs with",
                        (("0.4.36", "num_consts, num_carry"), ("0.11.0", "ft_in, ft_out"))),
    "vmap_sum_match": Fact("what jax.vmap's sum_match parameter is",
                           (("0.4.36", "absent"), ("0.10.0", "undocumented"),
                            ("0.11.0", "documented"))),
    "vmap_out_axes_infer": Fact("whether jax.vmap accepts batching.infer in out_axes",
                                (("0.4.36", False), ("0.11.0", True))),
    "tracer_repr": Fact("how a BatchTracer prints itself",
                        (("0.4.36", "Traced<...>with<BatchTrace>"), ("0.7.0", "VmapTracer<...>"),
                         ("0.8.2", "VmapTracer(aval=..., batched=...)"))),
}


def expected(fact: str, version: tuple[int, ...] = JAX_VERSION) -> object:
    """What ``HISTORY`` says release ``version`` (default: the installed one) does."""
    return HISTORY[fact].value_for(version)


# ---- the live measures: the same question asked of the installed JAX -----------------------------

def _jnp():
    import jax.numpy as jnp
    return jnp


def _layout():
    real = {n for n in ("primitive_batchers", "fancy_primitive_batchers")
            if isinstance(getattr(B, n, None), dict)}
    return "split" if "primitive_batchers" in real else "collapsed"


def _dot_general_table():
    from jax import lax
    for name in ("primitive_batchers", "fancy_primitive_batchers"):
        table = getattr(B, name, None)
        if isinstance(table, dict) and any(k is lax.dot_general_p for k in table):
            return name
    return None


def _proxy_in():
    from jax import lax
    try:
        lax.sin_p in B.primitive_batchers    # noqa: B015 (the question is whether it raises)
    except Exception as err:                 # the kind of exception is the answer
        return type(err).__name__
    return "answers"


def _aval():
    static = inspect.getattr_static(B.BatchTracer, "aval")
    return "property" if isinstance(static, property) else "stored in __init__"


def _make_jaxpr_returns():
    import jax
    return type(jax.make_jaxpr(lambda x: x)(1.0)).__name__


def _first_primitive(fn, *args):
    import jax
    from . import open_jaxpr
    return open_jaxpr(jax.make_jaxpr(fn)(*args)).eqns[0]


def _jit_primitive():
    import jax
    return _first_primitive(jax.jit(lambda x: x + 1.0), 1.0).primitive.name


def _literal_print():
    import jax
    text = str(jax.make_jaxpr(lambda x: x * 2.0)(_jnp().ones(3)))
    return "2.0:f32[]" if "2.0:f32[]" in text else "2.0"


def _scan_params():
    import jax
    eqn = _first_primitive(lambda xs: jax.lax.scan(lambda c, x: (c + x, c), 0.0, xs),
                           _jnp().ones(3))
    return "num_consts, num_carry" if "num_consts" in eqn.params else "ft_in, ft_out"


def _vmap_sum_match():
    import jax
    if "sum_match" not in inspect.signature(jax.vmap).parameters:
        return "absent"
    return "documented" if "sum_match" in (jax.vmap.__doc__ or "") else "undocumented"


def _vmap_out_axes_infer():
    import jax
    if not hasattr(B, "infer"):
        return False
    try:
        jax.vmap(lambda x: x * 2.0, out_axes=B.infer)(_jnp().ones((2, 3)))
    except Exception:                         # refused: not accepted
        return False
    return True


def _tracer_repr():
    import jax
    seen = []
    jax.vmap(lambda x: seen.append(repr(x)) or x)(_jnp().ones((2, 3)))
    text = seen[0]
    if text.startswith("VmapTracer("):
        return "VmapTracer(aval=..., batched=...)"
    return "VmapTracer<...>" if text.startswith("VmapTracer") else "Traced<...>with<BatchTrace>"


MEASURES: dict[str, Callable[[], object]] = {
    "layout": _layout,
    "dot_general_table": _dot_general_table,
    "proxy_in": _proxy_in,
    "skippable_batchers": lambda: isinstance(getattr(B, "skippable_batchers", None), dict),
    "aval": _aval,
    "not_mapped": lambda: hasattr(B, "not_mapped"),
    "matchaxis_signature": lambda: ", ".join(inspect.signature(B.matchaxis).parameters),
    "vectorized_batcher_axis_data":
        lambda: "axis_data" in inspect.signature(B.vectorized_batcher).parameters,
    "make_jaxpr_returns": _make_jaxpr_returns,
    "jit_primitive": _jit_primitive,
    "literal_print": _literal_print,
    "process_call": lambda: hasattr(B.BatchTrace, "process_call"),
    "scan_params": _scan_params,
    "vmap_sum_match": _vmap_sum_match,
    "vmap_out_axes_infer": _vmap_out_axes_infer,
    "tracer_repr": _tracer_repr,
}
assert set(MEASURES) == set(HISTORY), "every fact needs a live measure"


def measure(fact: str) -> object:
    """The installed JAX's answer to ``HISTORY[fact].question``."""
    return MEASURES[fact]()


def _main() -> None:
    import jax
    print(json.dumps({"jax": jax.__version__, **{f: measure(f) for f in HISTORY}}))


if __name__ == "__main__":
    _main()
