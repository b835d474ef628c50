"""What an LMS roster holds that nbgrader's gradebook has no column for, kept for the export.

nbgrader's students have ``id, first_name, last_name, email, lms_user_id``. A Canvas gradebook
export also carries each student's ``SIS User ID``, ``SIS Login ID`` and ``Section``, and the
gradebook's own assignment columns (``Exercises 1 (5501)``: title and Canvas id). ``make
roster`` keeps them in ``lms-roster.json`` beside the gradebook (`save`; one record per student
id, the roster's words as written); `CanvasExportPlugin` writes them back (`load`, `titles`), so
the file it makes carries every roster field and lands in the columns the gradebook already has.
"""
from __future__ import annotations

import json
import os
import re

FILE = "lms-roster.json"
STUDENT_FIELDS = ("SIS User ID", "SIS Login ID", "Section")
# A Canvas assignment column: "Title (canvas id)"; its first number says which assignment it is.
COLUMN = re.compile(r"^(?P<title>.*\S)\s*\((?P<id>\d+)\)$")
NUMBER = re.compile(r"\d+")


def canvas_columns(header: list[str]) -> list[str]:
    """The assignment columns of a Canvas gradebook export: after ``Section``, ``Title (id)``."""
    after = header[header.index("Section") + 1:] if "Section" in header else []
    return [h for h in after if COLUMN.match(h)]


def save(root: str, students: dict[str, dict], columns: list[str]) -> str:
    """Merge ``{student id: {field: value}}`` and the gradebook's columns into ROOT/FILE."""
    path = os.path.join(root, FILE)
    kept = load(root)
    kept["students"].update(students)
    if columns:
        kept["columns"] = list(columns)
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(kept, fh, indent=1, sort_keys=True)
    os.replace(tmp, path)
    return path


def load(root: str) -> dict:
    """``{"students": {id: {field: value}}, "columns": [title, ...]}``; empty without a file."""
    try:
        with open(os.path.join(root, FILE), encoding="utf-8") as fh:
            raw = json.load(fh)
    except FileNotFoundError:
        raw = {}
    students = raw.get("students") if isinstance(raw, dict) else None
    columns = raw.get("columns") if isinstance(raw, dict) else None
    return {"students": {str(k): {f: str(v.get(f, "")) for f in STUDENT_FIELDS}
                         for k, v in (students or {}).items() if isinstance(v, dict)},
            "columns": [str(c) for c in columns or []]}


def _number(name: str) -> int | None:
    found = NUMBER.search(name)
    return int(found.group()) if found else None


def titles(assignments: list[str], columns: list[str]) -> dict[str, str]:
    """``{assignment: Canvas column}`` for each nbgrader assignment a column names: the same
    title, else the one column whose title's first number is the assignment's (``Exercises 1
    (5501)`` for ``01-the-rule-per-primitive``). Ambiguous or absent: no entry."""
    out = {}
    for a in assignments:
        exact = [c for c in columns if COLUMN.match(c).group("title") == a]
        by_number = [c for c in columns if _number(a) is not None
                     and _number(COLUMN.match(c).group("title")) == _number(a)]
        pick = exact or by_number
        if len(pick) == 1:
            out[a] = pick[0]
    return out
