"""Autograde's bookkeeping of one submission: whether it needs grading, and what it became.

`check` looks at a collected submission before anything grades it: missing (recorded so), too
large to read (failed before nbgrader parses it), or graded or failed before and unchanged since
(skipped, nothing parsed: the grading status's record names the content's digest, and the digest
of the autograded notebooks it saw written). `settle` records what grading it gave, with the
reason nbgrader's exception named (`failures`), never one read from the log.
"""
from __future__ import annotations

import glob
import os
import re

from nbgrader.api import Gradebook

from ..nbgrader_plugins import FAILED, GRADED, MISSING, digest, inspect_submission, safe
from ..nbgrader_plugins.submission import OVERSIZED, PRESENT, autograded_complete, autograded_paths, size_limit
from .failures import failure_reason


def check(app, status, records, assignment: str, student: str):
    """``(outcome, None)`` when the submission needs no grading, else ``(None, submission)``;
    an outcome is (status, line to print, reason)."""
    coursedir = app.coursedir
    rec = records.get((assignment, student))
    limit = size_limit(app)
    vouched = rec.digest if rec is not None and rec.status in (GRADED, FAILED) else ""
    here = inspect_submission(coursedir, assignment, student, app.notebooks[assignment],
                              limit, vouched)
    if here.state == MISSING:
        status.record(app.coursedir, assignment, student, MISSING, here.reason, here.timestamp)
        return (MISSING, f"missing: {here.reason}", here.reason), None
    if here.state == OVERSIZED:     # never handed to nbgrader, which would parse it whole
        status.record(app.coursedir, assignment, student, FAILED, here.reason, here.timestamp,
                      here.digest)
        return (FAILED, f"FAILED: {here.reason}", here.reason), None
    if app.force or rec is None or not rec.about(here):
        return None, here
    if rec.status == FAILED:
        return (FAILED, f"failed earlier, unchanged: {rec.reason}", rec.reason), None
    if rec.status == GRADED and autograded_complete(coursedir, assignment, student,
                                                    here.notebooks, rec.graded, limit):
        return (GRADED, "graded earlier, unchanged", rec.reason), None
    return None, here


def settle(app, status, assignment: str, student: str, here, result: dict):
    """Record what grading ``here`` gave (``result``: `failures.outcome`'s, or a worker's
    failure as ``{"success": False, "reason": ...}``); returns (status, line, reason)."""
    if result.get("interrupted"):
        # Ctrl-C: stop the batch; this student stays "grading" and is graded again next run.
        raise KeyboardInterrupt
    if result["success"]:
        graded = digest(autograded_paths(app.coursedir, assignment, student, here.notebooks))
        status.record(app.coursedir, assignment, student, GRADED, "", here.timestamp, here.digest, graded)
        return GRADED, "graded", ""
    reason = here.reason if here.state != PRESENT else \
        result.get("reason") or failure_reason(None)
    status.record(app.coursedir, assignment, student, FAILED, reason, here.timestamp, here.digest)
    reason = safe.text(reason)
    return FAILED, f"FAILED: {reason}", reason


def assignments(app) -> tuple[list[str], dict[str, list[str]]] | None:
    """The assignments to grade (those named, else every one in the gradebook) and each
    assignment's notebook names; ``None`` when one named is not there."""
    coursedir = app.coursedir
    wanted = list(app.extra_args) or ([coursedir.assignment_id] if coursedir.assignment_id
                                      else [])
    with Gradebook(coursedir.db_url, coursedir.course_id) as gb:
        known = {a.name: [nb.name for nb in a.notebooks] for a in gb.assignments}
    for name in wanted:
        if name not in known:
            app.log.error("No assignment %r in the gradebook: run `make assign` "
                          "(nbgrader generate_assignment) first", name)
            app.say(f"autograde: no assignment {name!r} in the gradebook; generate it "
                     "first (make assign)")
            return None
    return wanted or sorted(known), known


def submitted_students(coursedir, assignment: str) -> list[str]:
    pattern = coursedir.format_path(coursedir.submitted_directory, coursedir.student_id,
                                    assignment)
    regexp = coursedir.format_path(coursedir.submitted_directory, "(?P<student_id>[^/]+)",
                                   assignment, escape=True)
    found = []
    for path in glob.glob(pattern):
        m = re.fullmatch(regexp, path)
        if m and os.path.isdir(path):
            found.append(m.group("student_id"))
    return sorted(found)


def report_absent(app, names, seen) -> int:
    """Say who submitted nothing (roster students without a submitted folder); their count."""
    coursedir = app.coursedir
    if coursedir.student_id != "*":
        return 0
    with Gradebook(coursedir.db_url, coursedir.course_id) as gb:
        roster = sorted(s.id for s in gb.students)
    count = 0
    for a in names:
        absent = [s for s in roster if (a, s) not in seen]
        count += len(absent)
        if absent:
            shown = ", ".join(absent[:20]) + (f" and {len(absent) - 20} more"
                                              if len(absent) > 20 else "")
            app.say(f"  nothing submitted for {a} ({len(absent)}): {shown}")
    return count
