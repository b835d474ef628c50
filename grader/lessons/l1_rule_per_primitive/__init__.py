"""Lesson 1, "The rule per primitive": its kit, its exercises and its self-checks.

The notebook imports this package as ``L1``. The kit's names (``L1.make_primitives``,
``L1.install``, ``L1.current_trace``, ...) are here at once; the checks
(``L1.check_spy``, ``L1.selfcheck_route``, ...) come from the trusted modules beside the kit,
looked up by name when first used (`grader.lessons.lookup`).
"""
from .kit import *  # noqa: F401,F403  (the kit is this package's public face)
from .kit import __all__ as _kit_names

__all__ = list(_kit_names)


def __getattr__(name):
    from .. import lookup
    return lookup(__name__, name)
