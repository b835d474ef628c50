"""Lesson 2, "Where the axis goes": its kit, its live tables, exercises and self-checks.

The notebook imports this package as ``L2``. The kit's names (``L2.OPS``, ``L2.as_function``,
``L2.summarize_fn``, ...) are here at once; everything else (``L2.mv_table``,
``L2.check_widened``, ``L2.selfcheck_mv_table``, ...) comes from the trusted modules beside the
kit, looked up by name when first used (`grader.lessons.lookup`).
"""
from .kit import *  # noqa: F401,F403  (the kit is this package's public face)
from .kit import __all__ as _kit_names

__all__ = list(_kit_names)


def __getattr__(name):
    from .. import lookup
    return lookup(__name__, name)
