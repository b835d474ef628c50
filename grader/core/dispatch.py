"""How a bind reaches a ``BatchTrace``, observed live: the chain of traces, the entry points.

``bind`` dispatches on the *current* trace, not on its inputs; a ``BatchTrace`` has one entry point
per kind of bind (``process_primitive`` for ordinary primitives, ``process_custom_jvp_call`` and
``process_custom_vjp_call`` for custom derivatives, ``process_call`` for call primitives where it
exists). `watch_entries` records every call of each; `trace_chain` walks a tracer's trace to the
trace below every vmap. Nothing here parses printed text.
"""
from __future__ import annotations

import contextlib
import inspect
from dataclasses import dataclass

import jax

from . import _jax
from ._jax import traces as _traces

current_trace = _traces.current_trace
reads_axis_data = _traces.reads_axis_data
axis_env_sizes = _traces.axis_env_sizes


def trace_chain(x) -> tuple[str, ...]:
    """Class names of ``x``'s trace and each ``parent_trace`` below it, down to the first trace
    that is not a ``BatchTrace`` (the eval trace, or the jaxpr trace under ``make_jaxpr``)."""
    names, trace = [], getattr(x, "_trace", None)
    while trace is not None:
        names.append(type(trace).__name__)
        if not isinstance(trace, _jax.BatchTrace):
            break
        trace = trace.parent_trace
    return tuple(names)


@dataclass(frozen=True)
class Entry:
    """One call of a BatchTrace entry point: which method, for which primitive, with what dims."""
    method: str
    primitive: str
    in_dims: tuple
    depth: int = 0            # >0: reached while another entry point was running


def _dims(trace, args) -> tuple:
    tracers = next((a for a in args if isinstance(a, (list, tuple))), ())
    return tuple(_jax.batch_info(trace, t)[1] for t in tracers)


@contextlib.contextmanager
def watch_entries():
    """Record every call of every BatchTrace entry point this release has; yields the list."""
    seen: list[Entry] = []
    depth = [0]
    originals = {m: getattr(_jax.BatchTrace, m) for m in _traces.ENTRY_POINTS
                 if m in vars(_jax.BatchTrace)}

    def spy(method, original):
        def entry(self, prim, *args, **kwargs):
            seen.append(Entry(method, _jax.primitive_name(prim), _dims(self, args), depth[0]))
            depth[0] += 1
            try:
                return original(self, prim, *args, **kwargs)
            finally:
                depth[0] -= 1
        return entry

    with patched_methods(originals, spy):
        yield seen


@contextlib.contextmanager
def patched_methods(originals: dict, wrap):
    """``BatchTrace``'s methods ``originals`` ({name: function}) replaced by ``wrap(name,
    function)`` inside the block, and put back on the way out, whatever happened."""
    for method, original in originals.items():
        setattr(_jax.BatchTrace, method, wrap(method, original))
    try:
        yield
    finally:
        for method, original in originals.items():
            setattr(_jax.BatchTrace, method, original)


def entries(fn, *args) -> list[Entry]:
    """Call ``fn(*args)`` and return every BatchTrace entry-point call it made, in order."""
    jax.clear_caches()      # a traced program JAX kept would be replayed without these calls
    with watch_entries() as seen:
        fn(*args)
    return seen


def entry_points() -> tuple[str, ...]:
    """The entry points this release's BatchTrace defines (``process_call`` until 0.11.0)."""
    return tuple(m for m in _traces.ENTRY_POINTS if m in vars(_jax.BatchTrace))


def primitive_named(name: str):
    """The primitive object whose batching rule is registered under ``name`` (newest spelling:
    ``jit`` finds ``pjit`` too), for primitives the public API does not export (``add_any``)."""
    from .tables import real_tables
    for table in real_tables().values():
        for prim in table:
            if _jax.primitive_name(prim) == name:
                return prim
    raise LookupError(f"no batching rule is registered for a primitive named {name!r}")


def rule_function(prim):
    """The function behind ``prim``'s batching rule (partials and wrappers removed), or None."""
    from .tables import rule_for
    _, rule = rule_for(prim)
    return None if rule is None else _traces.unwrap(rule)


def source(fn) -> str:
    """The installed source of ``fn`` (unwrapped first, so a decorated helper shows its body)."""
    return inspect.getsource(_traces.unwrap(fn))


def source_lines(fn, *pieces: str) -> str:
    """The lines of ``fn``'s source that hold any of ``pieces``, numbered within the function:
    a few lines set beside another function, where the whole source would bury them."""
    lines = source(fn).splitlines()
    hits = [f"{i:3}  {line}" for i, line in enumerate(lines, 1) if any(p in line for p in pieces)]
    missing = [p for p in pieces if not any(p in line for line in lines)]
    if missing:
        raise LookupError(f"{getattr(fn, '__name__', fn)!r} has no line holding {missing}")
    return "\n".join(hits)


@contextlib.contextmanager
def watch_recorded():
    """Record the name of every primitive that reaches the jaxpr trace (each becomes an equation
    of the program ``make_jaxpr`` returns), with the BatchTrace depth it was bound from."""
    seen: list[tuple[str, int]] = []
    cls = _traces.jaxpr_trace_class()
    original = cls.process_primitive
    depth = [0]
    batch_original = _jax.BatchTrace.process_primitive

    def record(self, prim, *args, **kwargs):
        seen.append((_jax.primitive_name(prim), depth[0]))
        return original(self, prim, *args, **kwargs)

    def nest(self, prim, *args, **kwargs):
        depth[0] += 1
        try:
            return batch_original(self, prim, *args, **kwargs)
        finally:
            depth[0] -= 1

    cls.process_primitive, _jax.BatchTrace.process_primitive = record, nest
    try:
        yield seen
    finally:
        cls.process_primitive, _jax.BatchTrace.process_primitive = original, batch_original
