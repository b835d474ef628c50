"""Lesson 3's kit: what a student's answers may use, and the observers that watch them.

The per-example functions of the memory exercise (`FUNCTIONS`), the jaxpr summaries an answer may
read a program with (`summarize_fn`, `primitives`), and `observe`. Nothing here knows an expected
answer.
"""
from ....core.jaxprs import primitives, summarize, summarize_fn
from .functions import FUNCTIONS

__all__ = ["FUNCTIONS", "primitives", "summarize", "summarize_fn"]
