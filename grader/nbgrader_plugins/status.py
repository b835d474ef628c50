"""What became of each submission: the statuses and reasons, and the course's status file.

`GradingStatus` is the course's record (graded, failed and why, missing), kept beside the gradebook
in ``grading-status.json``; ``python -m grader.instructor autograde`` writes it, nbgrader never
needs it. Each `Record` names the content it is about (the digest of the submitted notebooks),
so a resubmission is told from the graded one by its content, never by its timestamp. Its
`GradingStatus.exclusive` is the one-autograde-per-gradebook lock (`grader.nbgrader_plugins.lock`).
What is in the folders is `grader.nbgrader_plugins.submission`'s.
"""
from __future__ import annotations

import contextlib
import datetime
import json
import os
import tempfile
from dataclasses import asdict, dataclass

from traitlets import Unicode
from traitlets.config import LoggingConfigurable

from . import lock, safe

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
TOO_LARGE = "notebook too large"
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
    digest: str = ""                    # of the submitted notebooks it is about (submission.digest)
    graded: str = ""                    # graded: the digest of the autograded notebooks written

    def about(self, here) -> bool:
        """Whether this record is about the submission ``here`` (a `submission.Submitted`):
        the same content; a record without a digest (an older one) goes by the timestamp."""
        return self.digest == here.digest if self.digest else self.timestamp == here.timestamp


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
               timestamp: str | None = None, digest: str = "", graded: str = "") -> Record:
        """Write one record (the reason made safe to show); the file is replaced in one step, so
        a kill never leaves it torn."""
        at = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
        rec = Record(status, safe.text(reason), timestamp, at, digest, graded)
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
