"""The students of a simulated class (see `tools.classroom`): the kinds of student, the class of
``make demo`` and the end-to-end test, what each kind hands in (built from the release and the
source's solution cells) and what the export must then say about each of them."""
from __future__ import annotations

import os
from dataclasses import dataclass

import nbformat

from grader.nbgrader_plugins import (
    FAILED,
    GRADED,
    KERNEL_DIED,
    MISSING,
    NO_NOTEBOOK,
    NOTHING_SUBMITTED,
    TIMED_OUT,
    UNCHANGED,
    UNREADABLE,
)

from .course import Paths, assignments, source_notebooks

# What each kind of student does to the released notebook; see `answer`.
FULL, BLANK, PARTIAL = "full", "blank", "partial"
DIES, LOOPS, CORRUPT, NO_NB, NEVER = ("kernel-dies", "infinite-loop", "corrupt-json",
                                      "no-notebook", "never-submitted")
PARTIAL_EXERCISES = 2           # a partial solution solves this many graded exercises

KILL = "import os\nos._exit(1)  # the kernel dies here\n"
LOOP = ("import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n"
        "while True:  # never ends, and ignores the interrupt nbgrader sends\n    pass\n")


@dataclass(frozen=True)
class Student:
    id: str
    kind: str
    all_assignments: bool = True    # False: submits only the first assignment


# The class of `make demo` and of the end-to-end test. The broken submissions are made for the
# first assignment only (they cost the most time); their second assignment is "missing".
CLASS = (
    Student("ada", FULL),
    Student("ben", BLANK),
    Student("cleo", PARTIAL),
    Student("dev", DIES, False),
    Student("eve", LOOPS, False),
    Student("finn", CORRUPT, False),
    Student("gus", NO_NB, False),
    Student("hana", NEVER, False),
)


@dataclass
class Expected:
    score: float | None
    max_score: float
    status: str
    reason: str = ""


# ---- the source's grade cells and solutions ----------------------------------------------
def _meta(cell) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {})


def solutions(source) -> dict[str, str]:
    """``{grade_id: the answer a student would write}`` for every solution cell of ``source``."""
    return {_meta(c)["grade_id"]: "\n".join(
                line for line in c.source.split("\n")
                if "BEGIN SOLUTION" not in line and "END SOLUTION" not in line)
            for c in source.cells if _meta(c).get("solution")}


def exercises_in(source) -> list[tuple[str, float, list[str]]]:
    """``(grade_id, points, answer cell ids)`` per grade cell, in order; the answer cells are the
    solution cells since the previous grade cell (the layout of every exercise here)."""
    found, pending = [], []
    for cell in source.cells:
        m = _meta(cell)
        if m.get("solution"):
            pending.append(m["grade_id"])
        if m.get("grade"):
            found.append((m["grade_id"], float(m.get("points", 0)), pending))
            pending = []
    return found


def max_score(source) -> float:
    return sum(points for _, points, _ in exercises_in(source))


def partial_score(source) -> float:
    return sum(points for _, points, _ in exercises_in(source)[:PARTIAL_EXERCISES])


# ---- what each kind hands in, and what the export must say ---------------------------------
def answer(kind: str, released, source):
    """The released notebook as a student of this kind hands it in (a new notebook)."""
    nb = nbformat.from_dict(released)
    if kind in (BLANK, NO_NB, NEVER):
        return nb
    answers = solutions(source)
    if kind == PARTIAL:
        solved = {cid for _, _, cells in exercises_in(source)[:PARTIAL_EXERCISES] for cid in cells}
        answers = {k: v for k, v in answers.items() if k in solved}
    first = True
    for cell in nb.cells:
        gid = _meta(cell).get("grade_id")
        if gid in answers and _meta(cell).get("solution"):
            cell.source = answers[gid]
            if cell.cell_type == "code" and first and kind in (DIES, LOOPS):
                cell.source = (KILL if kind == DIES else LOOP) + cell.source
                first = False
    return nb


def expected(paths: Paths, students=CLASS) -> dict[tuple[str, str], Expected]:
    """What the export must say for every student and assignment, from the source notebooks."""
    out = {}
    names = assignments(paths.exercises)
    for i, assignment in enumerate(names):
        sources = [nbformat.read(os.path.join(paths.exercises, assignment, f), as_version=4)
                   for f in source_notebooks(paths.exercises, assignment)]
        top = sum(max_score(s) for s in sources)
        for st in students:
            submits = st.kind != NEVER and (st.all_assignments or i == 0)
            if not submits:
                out[assignment, st.id] = Expected(None, top, MISSING, NOTHING_SUBMITTED)
            elif st.kind == FULL:
                out[assignment, st.id] = Expected(top, top, GRADED)
            elif st.kind == BLANK:
                out[assignment, st.id] = Expected(0.0, top, BLANK, UNCHANGED)
            elif st.kind == PARTIAL:
                out[assignment, st.id] = Expected(sum(partial_score(s) for s in sources), top,
                                                  GRADED)
            elif st.kind == DIES:
                out[assignment, st.id] = Expected(None, top, FAILED, KERNEL_DIED)
            elif st.kind == LOOPS:
                out[assignment, st.id] = Expected(None, top, FAILED, TIMED_OUT)
            elif st.kind == CORRUPT:
                first = source_notebooks(paths.exercises, assignment)[0]
                out[assignment, st.id] = Expected(None, top, FAILED, f"{UNREADABLE} ({first})")
            elif st.kind == NO_NB:
                out[assignment, st.id] = Expected(None, top, MISSING, NO_NOTEBOOK)
    return out
