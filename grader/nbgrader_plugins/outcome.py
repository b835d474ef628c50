"""One truthful row per enrolled student and assignment, read from the gradebook and the folders.

A status is never guessed from a score: ``failed`` and ``missing`` come from the folders and the
status file (a failed submission is not a zero); a graded submission is ``needs manual
grading``, ``overridden``, ``blank`` or ``late`` when the gradebook says so, else ``graded``:

* needs manual grading: nbgrader's own flag (``SubmittedAssignment.needs_manual_grade``); the
  reason is the judge's comment on the cell (``auto_comment`` starting with
  `JUDGE_FLAG`) where it left one.
* overridden: a grade cell has a ``manual_score`` (formgrader or the gradebook API). nbgrader
  0.9.6 keeps no record of who set it, so the reason names the cell and both scores only.
* blank: every answer cell carries nbgrader's "No response." comment, which ``SaveAutoGrades``
  writes when the cell's checksum equals the one recorded at release.
* late: the submission's timestamp is past its due date; ``AssignLatePenalties`` stored the
  penalty, and the score here has it subtracted.

Every applicable note goes into the reason, the first of them (in that order) names the status.
"""
from __future__ import annotations

from dataclasses import dataclass

from nbgrader.api import MissingEntry

from .status import (BLANK, FAILED, GRADED, GRADING, INTERRUPTED, LATE, MISSING, NEEDS_MANUAL,
                     NOT_AUTOGRADED, NOTHING_SUBMITTED, OVERRIDDEN, STALE, UNCHANGED,
                     autograded_complete, inspect_submission, read_timestamp)

# What the judge writes into a flagged cell's comment (grader.judge; the interface between the
# two): "inside-vmap: needs manual grading: <reason>".
JUDGE_FLAG = "inside-vmap: needs manual grading: "
# ... and into the answer cell of an exercise it stopped for time: "inside-vmap: timed out: <why>".
JUDGE_TIMED_OUT = "inside-vmap: timed out: "
NO_RESPONSE = "No response."            # nbgrader's SaveAutoGrades, for an unchanged answer


@dataclass(frozen=True)
class Row:
    """One student and assignment, as every export writes it."""
    assignment: str
    student_id: str
    score: float | None             # None unless graded: a failure is never a zero
    max_score: float
    status: str
    reason: str = ""
    first_name: str = ""
    last_name: str = ""
    email: str = ""
    lms_user_id: str = ""


def rows(gradebook, coursedir, records, assignments=(), students=()) -> list[Row]:
    """A `Row` per enrolled student and assignment (optionally only those named)."""
    out = []
    for assignment in gradebook.assignments:
        if assignments and assignment.name not in assignments:
            continue
        notebooks = [nb.name for nb in assignment.notebooks]
        for student in sorted(gradebook.students, key=lambda s: s.id):
            if students and student.id not in students:
                continue
            row = classify(gradebook, coursedir, assignment, student.id, notebooks,
                           records.get((assignment.name, student.id)))
            out.append(Row(**{**row.__dict__, **identity(student)}))
    return out


def identity(student) -> dict:
    return {k: getattr(student, k) or "" for k in ("first_name", "last_name", "email",
                                                    "lms_user_id")}


def classify(gradebook, coursedir, assignment, student_id, notebooks, rec) -> Row:
    """The row of one submission: from the folders and the status file first (missing, failed),
    then from the gradebook (`graded_row`)."""
    name, top = assignment.name, assignment.max_score

    def failed(reason):
        return Row(name, student_id, None, top, FAILED, reason)

    here = inspect_submission(coursedir, name, student_id, notebooks)
    try:
        gradebook.find_submission(name, student_id)
        in_gradebook = True
    except MissingEntry:
        in_gradebook = False
    if here.state == MISSING:
        if here.reason == NOTHING_SUBMITTED and in_gradebook and \
                autograded_complete(coursedir, name, student_id, notebooks):
            return graded_row(gradebook, name, student_id, top)   # submitted/ was removed since
        return Row(name, student_id, None, top, MISSING, here.reason)
    if here.state == "unreadable":
        return failed(here.reason)
    if rec is not None and rec.timestamp != here.timestamp:
        rec = None                      # a record about an earlier submission
    if rec is not None and rec.status == GRADING:
        return failed(INTERRUPTED)
    if in_gradebook and autograded_complete(coursedir, name, student_id, here.notebooks):
        graded_from = read_timestamp(coursedir.format_path(coursedir.autograded_directory,
                                                           student_id, name))
        if graded_from != here.timestamp:
            return failed(STALE)        # collected again (--update) since it was graded
        absent = [n for n in notebooks if n not in here.notebooks]
        return graded_row(gradebook, name, student_id, top,
                          [f"not submitted: {', '.join(absent)}"] if absent else [])
    if rec is not None and rec.status == FAILED:
        return failed(rec.reason)
    return failed(NOT_AUTOGRADED)


def graded_row(gradebook, name, student_id, top, extra=()) -> Row:
    sub = gradebook.find_submission(name, student_id)
    penalty = sum(nb.late_submission_penalty or 0.0 for nb in sub.notebooks)
    grades = [g for nb in sub.notebooks for g in nb.grades]
    comments = [c for nb in sub.notebooks for c in nb.comments]
    notes = []                                  # (status, why), most important first
    if sub.needs_manual_grade:
        notes.append((NEEDS_MANUAL, manual_reason(grades, comments)))
    manual = [g for g in grades if g.manual_score is not None]
    if manual:
        notes.append((OVERRIDDEN, "manual grade: " + ", ".join(
            f"{g.name} {_num(g.auto_score) if g.auto_score is not None else '-'} -> "
            f"{_num(g.manual_score)}" for g in sorted(manual, key=lambda g: g.name))))
    answers = [c for c in comments if c.cell is not None and c.cell.type == "SolutionCell"]
    if answers and all(c.auto_comment == NO_RESPONSE for c in answers):
        notes.append((BLANK, UNCHANGED))
    if sub.total_seconds_late > 0:
        notes.append((LATE, f"late by {duration(sub.total_seconds_late)}; penalty "
                            f"{_num(penalty)} point{'s' if penalty != 1 else ''}"))
    notes.extend((GRADED, c.auto_comment[len(JUDGE_TIMED_OUT):].strip())
                 for c in sorted(comments, key=lambda c: c.name)
                 if (c.auto_comment or "").startswith(JUDGE_TIMED_OUT))
    notes.extend((GRADED, why) for why in extra)
    status = notes[0][0] if notes else GRADED
    return Row(name, student_id, max(0.0, sub.score - penalty), top, status,
               "; ".join(why for _, why in notes if why))


def manual_reason(grades, comments) -> str:
    """The judge's reasons where it flagged a cell, else the cells nbgrader could not score."""
    flagged = sorted((c.name, c.auto_comment[len(JUDGE_FLAG):].strip()) for c in comments
                     if (c.auto_comment or "").startswith(JUDGE_FLAG))
    if flagged:
        return "; ".join(f"{cell}: {why}" for cell, why in flagged)
    cells = sorted(g.name for g in grades if g.needs_manual_grade)
    return ("no automatic score for " + ", ".join(cells)) if cells else ""


def duration(seconds: float) -> str:
    """``2 d 3 h``, ``5 h 10 min``, ``12 min``, ``40 s``: late enough to read at a glance."""
    s = int(round(seconds))
    d, h, m = s // 86400, s % 86400 // 3600, s % 3600 // 60
    if d:
        return f"{d} d {h} h" if h else f"{d} d"
    if h:
        return f"{h} h {m} min" if m else f"{h} h"
    return f"{m} min" if m else f"{s} s"


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"
