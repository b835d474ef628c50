"""``matchaxis``: JAX's reconciliation of where the batch axis is with where it was asked for.

The adapter hides its signatures (history fact ``matchaxis_signature``) and reports outcomes as
plain data, so a student's implementation can be compared with JAX's own case by case.
"""
from __future__ import annotations

import contextlib
import functools
import sys
from dataclasses import dataclass, field

import numpy as np

from . import _jax


@dataclass(frozen=True)
class Outcome:
    """What ``matchaxis`` did: returned an array (shape and bytes) or raised (exception name)."""
    shape: tuple[int, ...] | None = None
    data: bytes | None = field(default=None, repr=False)
    error: str | None = None

    @property
    def raised(self) -> bool:
        return self.error is not None

    def to_dict(self) -> dict:
        return {"shape": self.shape, "error": self.error}


def matchaxis(src, dst, x, size=None, sum_match=False, name=None):
    """Call the installed JAX's ``matchaxis``. ``size`` defaults to ``x.shape[src]``.

    With no axis name (the default) the mismatch case raises JAX's ``SpecMatchError``, which
    ``vmap`` turns into its friendly out_axes message; with a name it raises ``ValueError``.
    """
    if size is None:
        size = np.shape(x)[src] if src is not None else 1
    axis_name = _jax.no_axis_name if name is None else name
    return _jax.call_matchaxis(src, dst, x, size, sum_match, axis_name)


def outcome(fn, *args, **kwargs) -> Outcome:
    """Run ``fn`` and describe the result as plain data; exceptions become their class name."""
    try:
        out = np.asarray(fn(*args, **kwargs))
    except Exception as err:  # the kind of exception *is* the outcome being compared
        return Outcome(error=type(err).__name__)
    return Outcome(tuple(int(d) for d in out.shape), np.ascontiguousarray(out).tobytes())


def _callers(depth: int = 8) -> tuple[str, ...]:
    """Names of the functions calling the caller of this one, innermost first."""
    frame, names = sys._getframe(2), []
    while frame is not None and len(names) < depth:
        names.append(frame.f_code.co_name)
        frame = frame.f_back
    return tuple(names)


@contextlib.contextmanager
def watch_matchaxis(callers: bool = False):
    """Record every call of the installed JAX's ``matchaxis`` as ``(src, dst, sum_match)``, with
    ``callers``: ``(src, dst, sum_match, names of the calling functions, innermost first)``.

    vmap's own output handling and the batched custom-VJP backward pass both look ``matchaxis``
    up in the batching module at call time, so replacing the module attribute sees them all.
    """
    module, calls = _jax.batching, []
    original = module.matchaxis

    # wraps: the adapter reads matchaxis's signature off the module attribute, this wrapper
    # while watching; inspect.signature follows __wrapped__ to the original's.
    @functools.wraps(original)
    def recording(*args, **kwargs):
        found = _jax.matchaxis_arguments(args, kwargs)
        calls.append(found + (_callers(),) if callers else found)
        return original(*args, **kwargs)

    module.matchaxis = recording
    try:
        yield calls
    finally:
        module.matchaxis = original
