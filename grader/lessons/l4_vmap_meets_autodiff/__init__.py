"""Lesson 4, "vmap meets autodiff": its kit, its live tables, exercises and self-checks.

The notebook imports this package as ``L4``. The kit's names (``L4.LOSSES``, ``L4.cummax``,
``L4.running_max``, ``L4.batch_sizes``, ...) are here at once; everything else
(``L4.costs``, ``L4.check_per_example_grads``, ``L4.selfcheck_routes``, ...) comes from the
trusted modules beside the kit, looked up by name when first used (`grader.lessons.lookup`).
"""
from .kit import *  # noqa: F401,F403  (the kit is this package's public face)
from .kit import __all__ as _kit_names

__all__ = list(_kit_names)


def __getattr__(name):
    from .. import lookup
    return lookup(__name__, name)
