"""Where vmap meets autodiff inside JAX: the functions lesson 4 reads, and two live watches.

The names below are JAX's own objects on the installed release (so ``inspect.getsource`` shows
the student's code, not a copy): the transpose rules a batched program's backward pass runs, the
``BatchTrace`` methods a custom derivative reaches instead of ``process_primitive``, the function
that batches a custom VJP's backward rule and the one that sums its cotangents, and
``custom_vmap``'s own batching rule. `watch_transposes` records which transpose rule bound each
primitive of a backward program; it is the one place that patches ``Primitive.bind``.
"""
from __future__ import annotations

import contextlib
import functools
from dataclasses import dataclass

from jax._src import api as _api
from jax._src import core as jcore
from jax._src import custom_batching as _custom_batching
from jax._src import custom_derivatives as _custom_derivatives
from jax._src.interpreters import batching as _batching
from jax._src.lax import lax as _lax

from . import primitive_name
from .traces import transpose_tables

# jacfwd and jacrev map over a basis: the identity of the flattened inputs (or outputs).
std_basis = _api._std_basis

# Transposing: a broadcast's transpose is a sum (explicit broadcast_in_dim, or the implicit
# size-1 broadcasting of an elementwise primitive, which its transpose undoes with _unbroadcast).
broadcast_in_dim_transpose_rule = _lax._broadcast_in_dim_transpose_rule
unbroadcast = _lax._unbroadcast
add_jvp = _lax._add_jvp                   # a lone tangent is broadcast explicitly to the output

# Custom derivatives under vmap: how their call reaches a trace, their own BatchTrace methods,
# and the batched backward rule.
custom_jvp_call_bind = _custom_derivatives.CustomJVPCallPrimitive.bind_with_trace
process_custom_jvp_call = _batching.BatchTrace.process_custom_jvp_call
process_custom_vjp_call = _batching.BatchTrace.process_custom_vjp_call
batch_custom_vjp_bwd = _batching.batch_custom_vjp_bwd


def is_custom_call(primitive: str) -> bool:
    """A custom rule's call: ``custom_*`` (custom_jvp_call, custom_vjp_call, custom_vmap_call, ...)
    or the hijax primitive that JAX's opt-in custom_vjp binds (``call_hi_primitive``, 0.9.1+)."""
    return primitive.startswith("custom_") or primitive == "call_hi_primitive"


# custom_vmap: an ordinary primitive whose batching rule calls the user's rule.
custom_vmap_primitive = _custom_batching.custom_vmap_p
custom_vmap_batching = _custom_batching.custom_vmap_batching

# The tables a backward pass takes transpose rules from: ``primitive_transposes`` on every
# release, and ``fancy_transposes`` where a release has it (it is consulted first).
def unwrapped(fn):
    """The function inside partials: a transpose table holds partials of shared helpers
    (defbilinear's), a ``lu.transformation2`` is a partial of its generator."""
    while isinstance(fn, functools.partial):
        fn = fn.args[0] if fn.args and callable(fn.args[0]) else fn.func
    return fn


# The generator behind ``_match_axes_and_sum`` (a ``lu.transformation2``): its source is the rule.
match_axes_and_sum = unwrapped(_batching._match_axes_and_sum)


@dataclass(frozen=True)
class Bound:
    """One primitive bound while a transpose rule ran: whose rule, what it bound, the shapes."""
    rule: str                              # the primitive whose transpose rule was running
    primitive: str                         # the primitive that rule bound
    in_shapes: tuple[tuple[int, ...], ...]
    out_shapes: tuple[tuple[int, ...], ...]


def _shape(x) -> tuple[int, ...]:
    aval = getattr(x, "aval", None)
    shape = getattr(aval, "shape", None)
    if shape is None:
        shape = getattr(x, "shape", ())
    return tuple(int(d) for d in shape)


def _shapes(value) -> tuple[tuple[int, ...], ...]:
    items = value if isinstance(value, (list, tuple)) else [value]
    return tuple(_shape(v) for v in items)


@contextlib.contextmanager
def watch_transposes():
    """Record, as `Bound`s, every primitive a transpose rule binds itself inside the block.

    Each rule in the transpose tables is wrapped to note whose rule runs, and ``Primitive.bind``
    to note what it binds. Only the rule's own binds count: when a rule runs under a vmap, the
    bind it makes is batched by a batching rule, which binds again, and that inner bind is the
    vmap's, not the transpose rule's. Both are restored on the way out, whatever happened."""
    frames: list[list] = []                # per running rule: [its primitive's name, bind depth]
    log: list[Bound] = []
    tables = transpose_tables()
    saved = {name: dict(table) for name, table in tables.items()}
    original_bind = jcore.Primitive.bind

    def recording(owner, rule):
        @functools.wraps(unwrapped(rule))
        def run(*args, **kwargs):
            frames.append([primitive_name(owner), 0])
            try:
                return rule(*args, **kwargs)
            finally:
                frames.pop()
        return run

    def bind(self, *args, **params):
        frame = frames[-1] if frames else None
        if frame is None:
            return original_bind(self, *args, **params)
        frame[1] += 1
        try:
            out = original_bind(self, *args, **params)
        finally:
            frame[1] -= 1
        if frame[1] == 0:
            log.append(Bound(frame[0], primitive_name(self), _shapes(list(args)), _shapes(out)))
        return out

    wrappers = {}
    for name, table in tables.items():
        for prim, rule in saved[name].items():
            table[prim] = wrappers[name, prim] = recording(prim, rule)
    jcore.Primitive.bind = bind
    try:
        yield log
    finally:
        jcore.Primitive.bind = original_bind
        # Only our wrappers go: JAX registers rules lazily (a vjp of a jit adds one), and those stay.
        for name, table in tables.items():
            for prim, rule in saved[name].items():
                if table.get(prim) is wrappers[name, prim]:
                    table[prim] = rule
