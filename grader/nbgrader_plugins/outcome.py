"""One truthful row per enrolled student and assignment, read from the gradebook and the folders.

A status is never guessed from a score: ``failed`` and ``missing`` come from the folders and the
grading status (a failed submission is not a zero); a graded submission is ``needs manual
grading``, ``overridden``, ``blank`` or ``late`` when the gradebook says so, else ``graded``:

* needs manual grading: a grade cell carries nbgrader's own flag (``Grade.needs_manual_grade``)
  and no ``manual_score``; the reason is the judge's comment on the cell (``auto_comment``
  starting with `JUDGE_FLAG`) where it left one.
* overridden: a grade cell has a ``manual_score`` (formgrader or the gradebook API). nbgrader
  0.9.6 keeps no record of who set it, so the reason names the cell and both scores only. A
  human's grade stands over any later autograde of the cell, as nbgrader's score says (it is
  the manual score when there is one): a regrade (``--force``) flags a manually graded cell
  again for review (``SaveAutoGrades``; the judge's `FlagForManualGrading` for one it sends to a
  human), which the formgrader clears when it saves a grade, so a flagged cell with a manual
  score is one whose manual grade was kept over the regrade, and the reason says so.
* blank: every answer cell carries nbgrader's "No response." comment, which ``SaveAutoGrades``
  writes when the cell's checksum equals the one recorded at release.
* late: the submission's timestamp is past its due date; ``AssignLatePenalties`` stored the
  penalty, and the score here has it subtracted. The timestamp is when the exchange received it
  (`received.ReceivedCollect`); a student's timestamp.txt that disagrees is named in the reason.

Every applicable note goes into the reason, the first of them (in that order) names the status;
every reason is made safe to show (`safe.text`: the judge quotes names the student chose).
"""
from __future__ import annotations

from dataclasses import dataclass

from nbgrader.api import MissingEntry

from . import safe
from .received import ReceivedTimes
from .status import (
    BLANK,
    FAILED,
    GRADED,
    GRADING,
    INTERRUPTED,
    LATE,
    MISSING,
    NEEDS_MANUAL,
    NOT_AUTOGRADED,
    NOTHING_SUBMITTED,
    OVERRIDDEN,
    STALE,
    UNCHANGED,
)
from .submission import (
    PRESENT,
    autograded_complete,
    autograded_paths,
    digest,
    inspect_submission,
    read_timestamp,
    size_limit,
)

# What the judge writes into a flagged cell's comment (grader.judge; the interface between the
# two): "inside-vmap: needs manual grading: <reason>".
JUDGE_FLAG = "inside-vmap: needs manual grading: "
# ... and into the answer cell of an exercise it stopped for time: "inside-vmap: timed out: <why>".
JUDGE_TIMED_OUT = "inside-vmap: timed out: "
NO_RESPONSE = "No response."            # nbgrader's SaveAutoGrades, for an unchanged answer
REASON_LIMIT = 2000                     # characters of one reason (the judge cuts each to 600)


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


def rows(gradebook, coursedir, records, assignments=(), students=(), parent=None) -> list[Row]:
    """A `Row` per enrolled student and assignment (optionally only those named). ``parent``
    (the export plugin) carries the configuration: the size limit, the received times."""
    max_bytes = size_limit(parent)
    times = ReceivedTimes(parent=parent)
    received = times.load(coursedir.root)
    out = []
    for assignment in gradebook.assignments:
        if assignments and assignment.name not in assignments:
            continue
        notebooks = [nb.name for nb in assignment.notebooks]
        for student in sorted(gradebook.students, key=lambda s: s.id):
            if students and student.id not in students:
                continue
            key = (assignment.name, student.id)
            row = classify(gradebook, coursedir, assignment, student.id, notebooks,
                           records.get(key), max_bytes, times.note(received.get(key)))
            out.append(Row(**{**row.__dict__, **identity(student)}))
    return out


def identity(student) -> dict:
    return {k: getattr(student, k) or "" for k in ("first_name", "last_name", "email",
                                                    "lms_user_id")}


def classify(gradebook, coursedir, assignment, student_id, notebooks, rec,
             max_bytes: int | None = None, dates: str = "") -> Row:
    """The row of one submission: from the folders and the grading status first (missing, failed),
    then from the gradebook (`graded_row`). What a record vouches for is not read again: a
    submission whose content it graded, an autograded notebook it saw written. ``dates``: what
    to flag about the submission's timestamp (`received.ReceivedTimes.note`)."""
    name, top = assignment.name, assignment.max_score

    def failed(reason):
        return Row(name, student_id, None, top, FAILED, safe.text(reason))

    vouched = rec.digest if rec is not None and rec.status in (GRADED, FAILED) else ""
    here = inspect_submission(coursedir, name, student_id, notebooks, max_bytes, vouched)
    try:
        gradebook.find_submission(name, student_id)
        in_gradebook = True
    except MissingEntry:
        in_gradebook = False
    if here.state == MISSING:
        if here.reason == NOTHING_SUBMITTED and in_gradebook and autograded_complete(
                coursedir, name, student_id, notebooks, rec.graded if rec else "", max_bytes):
            return graded_row(gradebook, name, student_id, top)   # submitted/ was removed since
        return Row(name, student_id, None, top, MISSING, here.reason)
    if here.state != PRESENT:
        return failed(here.reason)      # unreadable, or too large to read at all
    earlier = None
    if rec is not None and not rec.about(here):
        earlier, rec = rec, None        # a record about an earlier submission
    if rec is not None and rec.status == GRADING:
        return failed(INTERRUPTED)
    if in_gradebook:
        absent = [n for n in notebooks if n not in here.notebooks]
        notes = ([f"not submitted: {', '.join(absent)}"] if absent else []) + \
            ([dates] if dates else [])
        graded = _graded_content(coursedir, name, student_id, here.notebooks, rec, earlier)
        if graded is None and autograded_complete(coursedir, name, student_id, here.notebooks,
                                                  max_bytes=max_bytes):
            # The grading status cannot say (graded by nbgrader's CLI or the formgrader, whose
            # record has no digest of the notebooks written; or no record at all): the graded
            # notebook is this submission's when collect dated both the same.
            graded = read_timestamp(coursedir.format_path(
                coursedir.autograded_directory, student_id, name)) == here.timestamp
        if graded is False:
            return failed(STALE)        # collected again (--update) since it was graded
        if graded:
            return graded_row(gradebook, name, student_id, top, notes)
    if rec is not None and rec.status == FAILED:
        return failed(rec.reason)
    return failed(NOT_AUTOGRADED)


def _graded_content(coursedir, name, student_id, notebooks, rec, earlier) -> bool | None:
    """Whether the autograded notebooks are of this submission, as far as the grading status
    knows: True (graded from this content), False (from an earlier one), None (it cannot say:
    no record, or the autograded files changed since it was written)."""
    for known, verdict in ((rec, True), (earlier, False)):
        if known is not None and known.status == GRADED and known.graded:
            if digest(autograded_paths(coursedir, name, student_id, notebooks)) == known.graded:
                return verdict
    return None


def graded_row(gradebook, name, student_id, top, extra=()) -> Row:
    sub = gradebook.find_submission(name, student_id)
    penalty = sum(nb.late_submission_penalty or 0.0 for nb in sub.notebooks)
    grades = [g for nb in sub.notebooks for g in nb.grades]
    comments = [c for nb in sub.notebooks for c in nb.comments]
    notes = []                                  # (status, why), most important first
    # A cell awaits a human only while no human has graded it: nbgrader flags a manually graded
    # cell again whenever autograde scores it anew (and the judge, one it flags), yet its score
    # is the manual one (`sub.needs_manual_grade` is the flag of any cell).
    waiting = [g for g in grades if _awaits_human(g)]
    if waiting:
        notes.append((NEEDS_MANUAL, manual_reason(grades, comments)))
    manual = sorted((g for g in grades if g.manual_score is not None), key=lambda g: g.name)
    if manual:
        notes.append((OVERRIDDEN, overridden_reason(manual, comments, bool(waiting))))
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
               safe.text("; ".join(why for _, why in notes if why), REASON_LIMIT))


def overridden_reason(manual, comments, waiting: bool = False) -> str:
    """The cells a grader scored by hand, with both scores. A cell autograded since (nbgrader's
    `SaveAutoGrades` flags it for review: the formgrader clears the flag when a grade is saved)
    says its manual grade was kept; one the judge flagged then says so, with the judge's reason
    where it is this cell's alone (no other cell flagged, none awaiting a human)."""
    plain = [g for g in manual if not g.needs_manual_grade]
    kept = [g for g in manual if g.needs_manual_grade]
    flags = _flags(comments)
    parts = ["manual grade: " + ", ".join(
        f"{g.name} {_num(g.auto_score) if g.auto_score is not None else '-'} -> "
        f"{_num(g.manual_score)}" for g in plain)] if plain else []
    flagged = [g for g in kept if g.auto_score is None]
    for g in kept:
        why = f"automatic score {_num(g.auto_score)}" if g.auto_score is not None else \
            "which sent it to manual grading" + (
                f": {flags}" if flags and len(flagged) == 1 and not waiting else "")
        parts.append(f"manual grade {_num(g.manual_score)}/{_num(g.max_score)} on {g.name} "
                     f"kept over the regrade ({why})")
    return "; ".join(parts)


def _flags(comments) -> str:
    """The judge's reasons, ``cell: why``, for every answer cell it flagged."""
    return "; ".join(f"{cell}: {why}" for cell, why in sorted(
        (c.name, c.auto_comment[len(JUDGE_FLAG):].strip()) for c in comments
        if (c.auto_comment or "").startswith(JUDGE_FLAG)))


def _awaits_human(grade) -> bool:
    """Flagged for manual grading and not graded by hand since (a kept manual grade is flagged
    again by every regrade: `overridden_reason`)."""
    return grade.needs_manual_grade and grade.manual_score is None


def manual_reason(grades, comments) -> str:
    """The judge's reasons where it flagged a cell, else the cells nbgrader could not score."""
    flagged = _flags(comments)
    if flagged:
        return flagged
    cells = sorted(g.name for g in grades if _awaits_human(g))
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
