"""Lesson 3, "Batching whole programs": its kit, its live programs, exercises and self-check.

The notebook imports this package as ``L3``. The kit's names (``L3.FUNCTIONS``,
``L3.summarize_fn``, ...) are here at once; everything else (``L3.cond_plan``,
``L3.check_cond_plan``, ...) comes from the trusted modules beside the kit, looked up by name
when first used (`grader.lessons.lookup`).
"""
from .kit import *  # noqa: F401,F403  (the kit is this package's public face)
from .kit import __all__ as _kit_names

__all__ = list(_kit_names)


def __getattr__(name):
    from .. import lookup
    return lookup(__name__, name)
