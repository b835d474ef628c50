"""Which lesson module judges which grade cell: every module's ``EXERCISES`` keyed by grade id."""
from __future__ import annotations

import importlib

LESSON_MODULES = ("grader.rule_per_primitive", "grader.where_the_axis_goes")


def exercises() -> dict[str, tuple[str, object]]:
    """``{grade_id: (module_name, Exercise)}``; grade ids are unique across the course."""
    found: dict[str, tuple[str, object]] = {}
    for name in LESSON_MODULES:
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        for grade_id, exercise in getattr(module, "EXERCISES", {}).items():
            if grade_id in found:
                raise ValueError(f"grade id {grade_id!r} is judged by two modules")
            found[grade_id] = (name, exercise)
    return found
