"""nbgrader plugins of the Inside vmap course, configured in ``course/nbgrader_config.py``.

Each class does one job through one of nbgrader's documented extension points:

* `GradingStatus` (`status`): the course's record of what became of each submission, a table in
  the gradebook's database that every autograde writes (`RecordGrading`, `RecordGraded`: the
  first and last autograde steps), and the one-autograde-per-gradebook lock (`lock`);
  `submission`: what a collected folder holds, its size checked before anything parses it
  (`SubmissionSize`).
* `safe`: text a student influenced, made safe to show (terminal, logs, status, every export).
* `StatusExportPlugin`, `CanvasExportPlugin`, `MoodleExportPlugin` (`export`):
  ``nbgrader export`` (``ExportApp.plugin_class``) with a truthful status per student and
  assignment (`outcome`): a failed, missing, blank, late, overridden or flagged submission is
  never a plain number.
* `DueDates`, `SetDueDate`, `PercentPerDay` (`late`): the term's due dates and late policy.
* `ClearHiddenTestsInFeedback` (`feedback`): a ``GenerateFeedback.preprocessors`` entry that
  takes hidden tests out of the feedback a student receives (upstream nbgrader shows them
  verbatim, #917).
* `roster.RosterImport`: ``nbgrader db student import`` on an LMS roster (imported on use: it
  pulls in nbgrader's apps); `lms`: what the roster held that the gradebook has no column for
  (Canvas's SIS ids, sections and assignment columns), for the Canvas export.

Nothing here imports JAX: nbgrader loads this package for every command, formgrader included.
"""
from .export import CanvasExportPlugin, MoodleExportPlugin, StatusExportPlugin
from .feedback import ClearHiddenTestsInFeedback
from .late import DueDates, PercentPerDay, SetDueDate, record_due_dates
from .outcome import JUDGE_FLAG, Row
from .status import (
    BLANK,
    FAILED,
    GRADED,
    GRADING,
    INTERRUPTED,
    KERNEL_DIED,
    LATE,
    MISSING,
    NEEDS_MANUAL,
    NO_NOTEBOOK,
    NOT_AUTOGRADED,
    NOTHING_SUBMITTED,
    OVERRIDDEN,
    STALE,
    TIMED_OUT,
    TOO_LARGE,
    UNCHANGED,
    UNREADABLE,
    GradingStatus,
    Record,
    RecordGraded,
    RecordGrading,
)
from .submission import SubmissionSize, Submitted, autograded_complete, digest, inspect_submission

__all__ = [
    "BLANK", "FAILED", "GRADED", "GRADING", "INTERRUPTED", "KERNEL_DIED", "LATE", "MISSING",
    "NEEDS_MANUAL", "NO_NOTEBOOK", "NOT_AUTOGRADED", "NOTHING_SUBMITTED", "OVERRIDDEN", "STALE",
    "TIMED_OUT", "TOO_LARGE", "UNCHANGED", "UNREADABLE", "JUDGE_FLAG",
    "CanvasExportPlugin", "ClearHiddenTestsInFeedback", "DueDates", "GradingStatus",
    "MoodleExportPlugin", "PercentPerDay", "Record", "RecordGraded", "RecordGrading", "Row",
    "SetDueDate", "StatusExportPlugin", "SubmissionSize", "Submitted", "autograded_complete",
    "digest", "inspect_submission", "record_due_dates",
]
