"""Where vmap meets autodiff, observed live: which ``BatchTrace`` method a call reaches, which
transpose rule bound each equation of a backward program, and what a program costs.

``watch_methods`` wraps the methods through which a value reaches a vmap: ``process_primitive``
for an ordinary primitive, ``process_custom_jvp_call`` / ``process_custom_vjp_call`` for a
function with a custom derivative (JAX's default custom_vjp; its opt-in implementation, a hijax
primitive, goes through ``process_primitive``: the history's ``custom_vjp3_route``). The
transpose watch lives beside JAX's transpose tables, in ``_jax.autodiff``.
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass

import jax
import numpy as np

from . import _jax
from ._jax.autodiff import Bound, is_custom_call, watch_transposes  # noqa: F401  (re-exported)
from .dispatch import patched_methods

METHODS = ("process_primitive", "process_custom_jvp_call", "process_custom_vjp_call")


@dataclass(frozen=True)
class Reached:
    """One call of a ``BatchTrace`` method: which method, for which primitive, mapping what size."""
    method: str
    primitive: str
    size: int


def _primitive_of(args) -> str:
    prim = args[0] if args else None
    return _jax.primitive_name(prim) if hasattr(prim, "name") else repr(prim)


@contextlib.contextmanager
def watch_methods(methods=METHODS):
    """Record a `Reached` for every call of ``methods`` of ``BatchTrace`` inside the block (a
    method this release lacks is skipped); the originals are back on the way out."""
    calls: list[Reached] = []
    originals = {m: getattr(_jax.BatchTrace, m) for m in methods if hasattr(_jax.BatchTrace, m)}

    def wrapped(method, original):
        def run(self, *args, **kwargs):
            calls.append(Reached(method, _primitive_of(args), int(self.axis_data.size)))
            return original(self, *args, **kwargs)
        return run

    with patched_methods(originals, wrapped):
        yield calls


def reached(fn, *args, methods=METHODS) -> list[Reached]:
    """Run ``fn(*args)`` and return every `Reached` on its way."""
    jax.clear_caches()      # a traced program JAX kept would be replayed without these calls
    with watch_methods(methods) as calls:
        fn(*args)
    return calls


@dataclass(frozen=True)
class Cost:
    """A program's size: its equations, and the elements all of them write. Program-level
    measures: neither is a run time (a loop body counted once runs many times)."""
    equations: int
    elements: int
    largest: int

    @classmethod
    def of(cls, eqns) -> Cost:
        sizes = [int(np.prod(s)) for e in eqns for s in e.out_shapes]
        return cls(len(eqns), sum(sizes), max(sizes, default=0))
