"""Lesson 1's kit: what a student's answers may use, and the observers that watch them.

This is the student's side of the lesson and the only part of it that the judge's child can
import: the primitives to batch, `install` / `install_collective` to try a rule by hand,
`current_trace` (where a bind made now goes), and `observe`. Nothing here knows an expected
answer; that lives in the lesson's other modules, which never run beside student code.
"""
from ....core._jax import TABLE_NAMES, BatchTrace, BatchTracer, batching, current_trace, new_primitive
from .primitives import REFERENCES, install, install_collective, make_primitives, uninstall

__all__ = ["REFERENCES", "TABLE_NAMES", "BatchTrace", "BatchTracer", "batching", "current_trace",
           "install", "install_collective", "make_primitives", "new_primitive", "uninstall"]
