"""Which way each primitive went through ``BatchTrace.process_primitive``, observed live.

We wrap ``process_primitive`` and, for the duration, every rule in the real tables, then run the
function. A primitive whose rule was called went by *rule* (and we know the table); one that
raised ``NotImplementedError`` without calling a rule was *refused*; one that returned without
calling any rule took the *unmapped shortcut*. Nothing here parses JAX's source or printed text.
"""
from __future__ import annotations

import contextlib
from dataclasses import asdict, dataclass

from . import _jax
from .tables import real_tables


@dataclass(frozen=True)
class Step:
    """One primitive reaching a BatchTrace: its name, input batch dims, route and result dims."""
    primitive: str
    in_dims: tuple
    route: str                 # "rule", "shortcut", "refused" or "error" (a rule raised)
    table: str | None          # the table whose rule ran (route == "rule")
    out_dims: object = None
    depth: int = 0             # >0 when reached from inside another primitive's rule

    def to_dict(self) -> dict:
        return asdict(self)


class _Recorder:
    """Stands in for one rule while we watch: notes the call, then defers to the rule."""

    def __init__(self, table_name, rule, frames):
        self.table_name, self.rule, self.frames = table_name, rule, frames

    def __call__(self, *args, **params):
        if self.frames:
            self.frames[-1]["table"] = self.table_name
        out = self.rule(*args, **params)
        if self.frames:
            self.frames[-1]["out_dims"] = _plain_dims(out[1])
        return out


def _plain_dims(dims):
    if isinstance(dims, (list, tuple)):
        return tuple(_plain_dims(d) for d in dims)
    return None if dims is None else int(dims) if isinstance(dims, int) else repr(dims)


@contextlib.contextmanager
def _wrapped_rules(frames):
    tables = real_tables()
    for name, table in tables.items():
        for prim, rule in list(table.items()):
            table[prim] = _Recorder(name, rule, frames)
    try:
        yield
    finally:
        for table in tables.values():
            for prim, rule in list(table.items()):
                if isinstance(rule, _Recorder):
                    table[prim] = rule.rule


@contextlib.contextmanager
def watch():
    """Record every ``process_primitive`` call inside the block; yields the list of Steps."""
    steps: list[Step] = []
    frames: list[dict] = []
    original = _jax.BatchTrace.process_primitive

    def process_primitive(self, p, tracers, params, *rest):
        dims = tuple(_plain_dims(_jax.batch_info(self, t)[1]) for t in tracers)
        frames.append({"table": None, "out_dims": None})
        slot, depth, route = len(steps), len(frames) - 1, "error"
        steps.append(None)  # keep calling order: inner steps come after their caller
        try:
            out = original(self, p, tracers, params, *rest)
            route = "rule" if frames[-1]["table"] else "shortcut"
            return out
        except NotImplementedError:
            route = "refused" if frames[-1]["table"] is None else "error"
            raise
        finally:
            frame = frames.pop()
            steps[slot] = Step(p.name, dims, route, frame["table"], frame["out_dims"], depth)

    _jax.BatchTrace.process_primitive = process_primitive
    try:
        with _wrapped_rules(frames):
            yield steps
    finally:
        _jax.BatchTrace.process_primitive = original


def trace_routes(fn, *args) -> list[Step]:
    """Call ``fn(*args)`` (typically a vmapped function) and return the route of every primitive.

    A refusal is recorded and re-raised, so the caller sees JAX's own error.
    """
    with watch() as steps:
        fn(*args)
    return steps
