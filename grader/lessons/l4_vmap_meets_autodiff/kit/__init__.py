"""Lesson 4's kit: what a student's answers may use, and the observers that watch them.

The student's side of the lesson and the only part of it that the judge's child can import: the
small models whose per-example gradients are asked for (`LOSSES`), the functions whose
jacobians are (`functions`), two kernels vmap cannot batch (`cummax`, `running_max`), the
program summaries an answer may use to let JAX show it a candidate (`summarize_fn`,
`primitives`, `batch_sizes`), and `observe`. Nothing here knows an expected answer.
"""
from ....core.jaxprs import primitives, summarize, summarize_fn
from . import functions, models
from .kernels import cummax, cummax_p, running_max, running_max_p
from .models import LOSSES
from .observe import batch_sizes

__all__ = ["LOSSES", "batch_sizes", "cummax", "cummax_p", "functions", "models", "primitives",
           "running_max", "running_max_p", "summarize", "summarize_fn"]
