"""Lesson 2's kit: what a student's answers may use, and the observers that watch them.

The student's side of the lesson and the only part of it that the judge's child can import: the
small programs the exercises describe as plain data (`as_function`, `example_shapes`), the jaxpr
summaries an answer may use to let JAX show it a program (`summarize_fn`, `primitives`), and
`observe`. Nothing here knows an expected answer.
"""
from ....core.jaxprs import primitives, summarize, summarize_fn
from .observe import batched_program
from .programs import OPS, as_function, example_shapes

__all__ = ["OPS", "as_function", "batched_program", "example_shapes", "primitives", "summarize",
           "summarize_fn"]
