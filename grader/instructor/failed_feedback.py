"""Feedback for a submission autograde could not grade (``make feedback``, after nbgrader's own).

nbgrader's ``generate_feedback`` renders autograded notebooks only, and a failed autograde leaves
none (nbgrader removes it), so a student whose kernel died, who timed out or whose notebook could
not be read got no feedback at all. `FailedFeedback` writes, for every submission the grading
status records as failed (`grader.nbgrader_plugins.GradingStatus`, whichever front end graded it),
one calm page per notebook where nbgrader's feedback goes (``feedback/STUDENT/ASSIGNMENT/NB.html``):
what happened, in the student's terms, and what to do. It holds nothing of the notebook, of the
grading's log or of the course's code (no traceback, no hidden test): only the recorded reason,
escaped. The submission's timestamp.txt and submission_secret.txt go beside it, as nbgrader's
feedback has them, so ``nbgrader release_feedback`` releases it and the student's ``Fetch
Feedback`` gets it like any other. A submission graded since is left to nbgrader's feedback.
"""
from __future__ import annotations

import html
import os
import stat

from nbgrader.api import Gradebook
from nbgrader.apps.baseapp import NbGrader, nbgrader_aliases, nbgrader_flags
from traitlets import default

from ..nbgrader_plugins import FAILED, KERNEL_DIED, TIMED_OUT, TOO_LARGE, UNREADABLE, GradingStatus

RERUN = ("Restart the kernel and run your notebook from top to bottom in a fresh kernel "
         "(Kernel &gt; Restart Kernel and Run All Cells); fix the cell where it stops or hangs, "
         "check that every cell finishes, and submit again. Ask your instructor to regrade it "
         "if the deadline has passed.")
# What happened, by the recorded reason's start; the reason itself is shown below it.
WHAT = (
    (KERNEL_DIED, "Your notebook stopped the grading kernel: running it from the top, some cell "
                  "ended the Python process (for example os._exit or a crash) before grading "
                  "could finish.", RERUN),
    (TIMED_OUT, "A cell of your notebook ran longer than grading allows and could not be "
                "interrupted (an endless loop, or a computation far larger than the exercise "
                "needs).", RERUN),
    ("the grading kernel", "Your notebook went past a limit of the grading kernel (memory, "
                           "processes, disk or CPU time).", RERUN),
    (UNREADABLE, "The file you submitted is not a notebook Jupyter can read (it may have been "
                 "cut short or edited outside Jupyter).",
     "Open your notebook in Jupyter, save it (File &gt; Save Notebook), check that it opens "
     "again, and submit again."),
    (TOO_LARGE, "The notebook you submitted is too large to grade, mostly because of what its "
                "cells printed.",
     "Clear the outputs (Edit &gt; Clear Outputs of All Cells), save, and submit again."),
)
OTHER = ("Your notebook could not be graded.", RERUN)


def page(assignment: str, notebook: str, reason: str) -> str:
    """The feedback page of a notebook whose submission failed, ``reason`` as recorded."""
    what, todo = next(((w, t) for start, w, t in WHAT if reason.startswith(start)), OTHER)
    esc = html.escape
    return (f"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
            f"<title>{esc(assignment)}: not graded</title></head>\n<body>\n"
            f"<h1>{esc(notebook)}: your submission could not be graded</h1>\n"
            f"<p><strong>What happened.</strong> {what}</p>\n"
            f"<p>Recorded reason: <code>{esc(reason)}</code></p>\n"
            f"<p><strong>What to do.</strong> {todo}</p>\n"
            f"<p>No score was recorded for it: this is not a zero.</p>\n</body></html>\n")


class FailedFeedback(NbGrader):
    name = "inside-vmap-failed-feedback"
    description = ("Write a feedback page for every failed submission of the given assignments "
                   "(default: all), where nbgrader release_feedback finds it.")
    aliases = nbgrader_aliases
    flags = nbgrader_flags

    @default("classes")
    def _classes_default(self):
        return super()._classes_default() + [GradingStatus, FailedFeedback]

    def start(self) -> None:
        super().start()
        cd = self.coursedir
        wanted = set(self.extra_args) or ({cd.assignment_id} if cd.assignment_id else set())
        with Gradebook(cd.db_url, cd.course_id) as gb:
            notebooks = {a.name: [nb.name for nb in a.notebooks] for a in gb.assignments}
        for (assignment, student), rec in sorted(GradingStatus(parent=self).load(cd).items()):
            if rec.status != FAILED or assignment not in notebooks or \
                    (wanted and assignment not in wanted) or \
                    (cd.student_id not in ("*", "") and student != cd.student_id):
                continue
            if self.write(assignment, student, notebooks[assignment], rec.reason):
                print(f"failed-feedback: {assignment} {student}: {rec.reason}", flush=True)

    def write(self, assignment: str, student: str, notebooks, reason: str) -> bool:
        """The pages of one failed submission, with the two files release_feedback reads;
        False when its submitted folder is gone (nothing to release it against)."""
        cd = self.coursedir
        submitted = cd.format_path(cd.submitted_directory, student, assignment)
        kept = {n: _regular(os.path.join(submitted, n))
                for n in ("timestamp.txt", "submission_secret.txt")}
        if not os.path.isdir(submitted) or kept["timestamp.txt"] is None:
            return False
        dest = cd.format_path(cd.feedback_directory, student, assignment)
        os.makedirs(dest, exist_ok=True)
        for name, content in kept.items():
            if content is not None:
                with open(os.path.join(dest, name), "wb") as fh:
                    fh.write(content)
        for nb in notebooks:
            if os.path.isfile(os.path.join(submitted, nb + ".ipynb")):
                with open(os.path.join(dest, nb + ".html"), "w", encoding="utf-8") as fh:
                    fh.write(page(assignment, nb, reason))
        return True


def _regular(path: str, limit: int = 4096) -> bytes | None:
    """A small regular file's bytes (never through a link: a submission is the student's)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as fh:
        return fh.read(limit) if stat.S_ISREG(os.fstat(fd).st_mode) else None
