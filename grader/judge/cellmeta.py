"""A notebook cell's nbgrader metadata, read the way nbgrader reads it.

The flags come from ``nbgrader.utils`` (``is_grade``, ``is_solution``, ``is_locked``), so the judge
and nbgrader's own preprocessors agree on what a cell is; nbgrader has no reader of a cell's id or
points, which are here. Trusted side only: the judge's child never imports nbgrader (it is not in
the kit tree, `grader.judge.kit_tree`).
"""
from __future__ import annotations


def _nbgrader(cell) -> dict:
    return cell.metadata.get("nbgrader", {})


def grade_id(cell) -> str | None:
    """The cell's nbgrader id, or None for a cell nbgrader does not know."""
    return _nbgrader(cell).get("grade_id")


def points(cell) -> float:
    """What a grade cell is worth (0 when its metadata says nothing)."""
    return float(_nbgrader(cell).get("points", 0))
