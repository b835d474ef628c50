"""Lesson 2's kit: what a student's answers may use, and the observers that watch them.

The student's side of the lesson and the only part of it that the judge's child can import: the
per-example functions a layout names (`FUNCTIONS`), the jaxpr summaries an answer may use to let
JAX show it a candidate (`summarize_fn`, `primitives`), and `observe`. Nothing here knows an
expected answer.
"""
from ....core.jaxprs import primitives, summarize, summarize_fn
from .functions import FUNCTIONS

__all__ = ["FUNCTIONS", "primitives", "summarize", "summarize_fn"]
