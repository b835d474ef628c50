"""Lesson 1's kit: what a student's answers may use, and the observers that watch them.

This is the student's side of the lesson and the only part of it that the judge's child can
import: the primitives to batch, the stand-in batching modules, and `observe`. Nothing here knows
an expected answer; that lives in the lesson's other modules, which never run beside student code.
"""
from ....core._jax import batching, new_primitive
from .primitives import REFERENCES, install, make_primitives, uninstall
from .standins import (TABLE_NAMES, ReadableProxy, ReadThroughProxy, WriteOnlyProxy,
                       installed_primitive, query_prim, standin)

__all__ = ["REFERENCES", "TABLE_NAMES", "ReadThroughProxy", "ReadableProxy", "WriteOnlyProxy",
           "batching", "install", "installed_primitive", "make_primitives", "new_primitive",
           "query_prim", "standin", "uninstall"]
