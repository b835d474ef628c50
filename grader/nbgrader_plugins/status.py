"""What became of each submission: the statuses and reasons, kept in the gradebook's database.

`GradingStatus` is the course's record (graded, failed and why, missing): a table of the course's
own, `TABLE`, beside nbgrader's in the gradebook's database (``CourseDirectory.db_url``, SQLite or
PostgreSQL), made with SQLAlchemy on an engine like nbgrader's. Every way of autograding writes
it, because the autograde steps do (`RecordGrading`, `RecordGraded` and the course's
``BoundedExecute``, whose failures it records): ``nbgrader autograde``, nbgrader's Python API
(``NbGraderAPI.autograde``, the formgrader's Autograde button) and ``make autograde``, which adds
the digest of what it saw written. Each `Record` names the content it is about (the digest of
the submitted notebooks), so a resubmission is told from the graded one by its content, never by
its timestamp. `GradingStatus.exclusive` is the one-autograde-per-gradebook lock
(`grader.nbgrader_plugins.lock`). What is in the folders is `grader.nbgrader_plugins.submission`'s.
"""
from __future__ import annotations

import contextlib
import datetime
import os
from dataclasses import asdict, dataclass, fields

import sqlalchemy as sa
from nbgrader.api import Gradebook
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Unicode
from traitlets.config import LoggingConfigurable

from . import lock, safe
from .states import (  # noqa: F401  (the status's words, re-exported)
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
)
from .submission import digest, read_timestamp

# The course's table in the gradebook's database: one row per course, assignment and student
# (the key's lengths are nbgrader's own for these ids).
TABLE = sa.Table(
    "inside_vmap_grading_status", sa.MetaData(),
    sa.Column("course_id", sa.String(128), primary_key=True),
    sa.Column("assignment", sa.String(128), primary_key=True),
    sa.Column("student", sa.String(128), primary_key=True),
    sa.Column("status", sa.String(32), nullable=False),
    sa.Column("reason", sa.Text, nullable=False),
    sa.Column("timestamp", sa.Text),
    sa.Column("at", sa.String(32), nullable=False),
    sa.Column("digest", sa.String(64), nullable=False),
    sa.Column("graded", sa.String(64), nullable=False),
)


@dataclass(frozen=True)
class Record:
    """What became of one submission, as its row in `TABLE` keeps it."""
    status: str
    reason: str = ""
    timestamp: str | None = None        # the submission's timestamp.txt, as a string
    at: str = ""                        # when this was recorded (UTC, ISO 8601)
    digest: str = ""                    # of the submitted notebooks it is about (submission.digest)
    graded: str = ""                    # graded by make autograde: the digest of what it wrote

    def about(self, here) -> bool:
        """Whether this record is about the submission ``here`` (a `submission.Submitted`):
        the same content; a record without a digest goes by the timestamp."""
        return self.digest == here.digest if self.digest else self.timestamp == here.timestamp


@contextlib.contextmanager
def _engine(db_url: str):
    """An engine on the gradebook's database, as nbgrader's ``Gradebook`` makes one, with the
    course's table there (made on first use, beside nbgrader's)."""
    engine = sa.create_engine(db_url, future=True)
    try:
        try:
            TABLE.create(engine, checkfirst=True)
        except sa.exc.SQLAlchemyError:
            if not sa.inspect(engine).has_table(TABLE.name):   # else another process made it
                raise
        yield engine
    finally:
        engine.dispose()


class GradingStatus(LoggingConfigurable):
    """The records: one `Record` per (assignment, student) of a course, each written in one
    transaction. ``coursedir`` is where they are: its ``db_url`` and ``course_id``."""

    lock_file = Unicode("autograde.lock", help="The lock file that keeps a second autograde "
                        "from grading into a SQLite gradebook at once; relative to "
                        "CourseDirectory.root (a PostgreSQL gradebook is locked inside the "
                        "database instead).").tag(config=True)

    def load(self, coursedir) -> dict[tuple[str, str], Record]:
        names = [f.name for f in fields(Record)]
        with _engine(coursedir.db_url) as engine, engine.connect() as conn:
            found = conn.execute(sa.select(TABLE).where(
                TABLE.c.course_id == coursedir.course_id)).mappings().all()
        return {(r["assignment"], r["student"]): Record(**{n: r[n] for n in names})
                for r in found}

    def record(self, coursedir, assignment: str, student: str, status: str, reason: str = "",
               timestamp: str | None = None, digest: str = "", graded: str = "") -> Record:
        """Write one record (the reason made safe to show), replacing the one before."""
        at = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
        rec = Record(status, safe.text(reason), timestamp, at, digest, graded)
        key = {"course_id": coursedir.course_id, "assignment": assignment, "student": student}
        with _engine(coursedir.db_url) as engine, engine.begin() as conn:
            conn.execute(TABLE.delete().where(*(TABLE.c[k] == v for k, v in key.items())))
            conn.execute(TABLE.insert().values(**key, **asdict(rec)))
        return rec

    def exclusive(self, root: str, db_url: str = "", course_id: str = "", wait: bool = False,
                  say=None):
        """Hold the gradebook's autograde lock, so two runs never grade into one gradebook at
        once: a file lock beside a SQLite gradebook, an advisory lock inside a PostgreSQL one
        (so it holds across machines). ``wait``: a second run waits its turn (``say`` tells
        who holds it) instead of failing with RuntimeError."""
        if lock.is_postgres(db_url):
            return lock.postgres_lock(db_url, f"inside-vmap autograde {course_id}", wait, say)
        return lock.file_lock(os.path.join(root, self.lock_file), wait, say)


# ---- the autograde steps that write it, whichever front end runs autograde ------------------
def _submission(step: NbGraderPreprocessor, resources):
    """(coursedir, assignment, student, timestamp, digest) of the submission whose notebook is
    being autograded, the digest as `submission.inspect_submission` computes it (nothing parsed
    again); None outside a submission's autograde (a step run alone, the judge's warm-up)."""
    names = resources.get("nbgrader") or {}
    if not all(names.get(k) for k in ("db_url", "assignment", "student")):
        return None
    coursedir = CourseDirectory(parent=step, db_url=names["db_url"])
    assignment, student = names["assignment"], names["student"]
    with Gradebook(names["db_url"], coursedir.course_id) as gb:
        notebooks = [nb.name for nb in gb.find_assignment(assignment).notebooks]
    folder = coursedir.format_path(coursedir.submitted_directory, student, assignment)
    paths = [os.path.join(folder, n + ".ipynb") for n in notebooks]
    return (coursedir, assignment, student, read_timestamp(folder),
            digest(p for p in paths if os.path.isfile(p)))


def record_step(step: NbGraderPreprocessor, resources, status: str, reason: str = "") -> None:
    """Record ``status`` for the submission whose notebook ``step`` is autograding."""
    found = _submission(step, resources)
    if found is not None:
        coursedir, assignment, student, timestamp, content = found
        GradingStatus(parent=step).record(coursedir, assignment, student, status, reason,
                                          timestamp, content)


class RecordGrading(NbGraderPreprocessor):
    """First of the sanitizing steps: the submission is being graded (a run that stops before
    `RecordGraded` or a recorded failure leaves it so: the export says it did not finish)."""

    def preprocess(self, nb, resources):
        record_step(self, resources, GRADING)
        return nb, resources


class RecordGraded(NbGraderPreprocessor):
    """Last of the autograde steps: the submission is graded (its notebooks' scores are in the
    gradebook; a later notebook of the same submission that fails records that instead)."""

    def preprocess(self, nb, resources):
        record_step(self, resources, GRADED)
        return nb, resources
