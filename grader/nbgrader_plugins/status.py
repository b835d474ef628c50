"""What became of each submission: the folders nbgrader leaves, and the course's status file.

`GradingStatus` is the course's record (graded, failed and why, missing), kept beside the gradebook
in ``grading-status.json``; ``python -m grader.instructor autograde`` writes it, nbgrader never
needs it. Its `GradingStatus.exclusive` is the one-autograde-per-gradebook lock (`grader.
nbgrader_plugins.lock`).
"""
from __future__ import annotations

import contextlib
import datetime
import json
import os
import tempfile
from dataclasses import asdict, dataclass

import nbformat
from nbgrader.coursedir import CourseDirectory
from traitlets import Unicode
from traitlets.config import LoggingConfigurable

from . import lock

# The statuses a submission can have, as written in the export's ``status`` column.
GRADED = "graded"
NEEDS_MANUAL = "needs manual grading"
OVERRIDDEN = "overridden"       # a grader set a manual score (formgrader or the gradebook)
BLANK = "blank"                 # no answer cell changed since the release
LATE = "late"                   # submitted after the due date; the penalty is applied
FAILED = "failed"
MISSING = "missing"
GRADING = "grading"             # only in the status file: autograde started and has not finished

# Reasons, as written in the export's ``reason`` column.
KERNEL_DIED = "kernel died"
TIMED_OUT = "timed out"
UNREADABLE = "unreadable notebook"
NOTHING_SUBMITTED = "nothing submitted"
NO_NOTEBOOK = "no notebook in the submission"
INTERRUPTED = "autograde was interrupted; run it again"
NOT_AUTOGRADED = "no autograded notebook (autograde failed or has not run; see its log)"
STALE = "not autograded since the latest submission"
UNCHANGED = "no answer cell changed since the release"


@dataclass(frozen=True)
class Record:
    """What became of one submission, as the status file keeps it."""
    status: str
    reason: str = ""
    timestamp: str | None = None        # the submission's timestamp.txt, as a string
    at: str = ""                        # when this was recorded (UTC, ISO 8601)


@dataclass(frozen=True)
class Submitted:
    """What is in ``submitted/<student>/<assignment>`` right now."""
    state: str                          # "present", "missing" or "unreadable"
    reason: str = ""
    timestamp: str | None = None
    notebooks: tuple[str, ...] = ()     # names (without .ipynb) of the notebooks found


def inspect_submission(coursedir: CourseDirectory, assignment: str, student: str,
                       expected: list[str]) -> Submitted:
    """Look at a collected submission without running it: is it there, and can it be read?"""
    path = coursedir.format_path(coursedir.submitted_directory, student, assignment)
    if not os.path.isdir(path):
        return Submitted(MISSING, NOTHING_SUBMITTED)
    timestamp = read_timestamp(path)
    found = tuple(n for n in expected if os.path.isfile(os.path.join(path, n + ".ipynb")))
    if not found:
        return Submitted(MISSING, NO_NOTEBOOK, timestamp)
    for name in found:
        try:
            with open(os.path.join(path, name + ".ipynb"), encoding="utf-8") as fh:
                nbformat.read(fh, as_version=4)
        except Exception:           # any way of not being a notebook is the same finding
            return Submitted("unreadable", f"{UNREADABLE} ({name}.ipynb)", timestamp, found)
    return Submitted("present", "", timestamp, found)


def read_timestamp(path: str) -> str | None:
    try:
        with open(os.path.join(path, "timestamp.txt"), encoding="utf-8") as fh:
            return fh.read().strip() or None
    except OSError:
        return None


def autograded_complete(coursedir: CourseDirectory, assignment: str, student: str,
                        notebooks) -> bool:
    """Whether every given notebook has its autograded version, executed. (nbgrader writes the
    sanitized notebook there before running it, so a run killed half-way leaves an unexecuted
    one behind; a failed run removes the folder.)"""
    path = coursedir.format_path(coursedir.autograded_directory, student, assignment)
    return bool(notebooks) and all(_executed(os.path.join(path, n + ".ipynb")) for n in notebooks)


def _executed(path: str) -> bool:
    try:
        with open(path, encoding="utf-8") as fh:
            nb = nbformat.read(fh, as_version=4)
    except Exception:
        return False
    return any(c.cell_type == "code" and c.get("execution_count") for c in nb.cells)


class GradingStatus(LoggingConfigurable):
    """The status file: one `Record` per (assignment, student), replaced atomically."""

    path = Unicode(
        "grading-status.json",
        help="Where autograde records each submission's status (graded, failed and why, "
             "missing); relative to CourseDirectory.root.").tag(config=True)

    def file(self, root: str) -> str:
        return os.path.join(root, self.path)

    def load(self, root: str) -> dict[tuple[str, str], Record]:
        try:
            with open(self.file(root), encoding="utf-8") as fh:
                raw = json.load(fh)
            return {(a, s): Record(**rec) for a, by_student in raw["assignments"].items()
                    for s, rec in by_student.items()}
        except FileNotFoundError:
            return {}
        except (OSError, ValueError, TypeError, KeyError, AttributeError) as err:
            self.log.warning("Ignoring unreadable status file %s: %s", self.file(root), err)
            return {}

    def record(self, root: str, assignment: str, student: str, status: str, reason: str = "",
               timestamp: str | None = None) -> Record:
        """Write one record; the file is replaced in one step, so a kill never leaves it torn."""
        at = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        rec = Record(status, reason, timestamp, at)
        records = self.load(root)
        records[(assignment, student)] = rec
        raw: dict = {"assignments": {}}
        for (a, s), r in sorted(records.items()):
            raw["assignments"].setdefault(a, {})[s] = asdict(r)
        target = self.file(root)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(target) or ".", prefix=".status-")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(raw, fh, indent=1, sort_keys=True)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        return rec

    def exclusive(self, root: str, db_url: str = "", course_id: str = "", wait: bool = False,
                  say=None):
        """Hold the gradebook's autograde lock, so two runs never grade into one gradebook at
        once: a file lock beside a SQLite gradebook, an advisory lock inside a PostgreSQL one
        (so it holds across machines). ``wait``: a second run waits its turn (``say`` tells
        who holds it) instead of failing with RuntimeError."""
        if lock.is_postgres(db_url):
            return lock.postgres_lock(db_url, f"inside-vmap autograde {course_id}", wait, say)
        return lock.file_lock(self.file(root) + ".lock", wait, say)
