"""nbgrader plugins of the Inside vmap course, configured in ``course/nbgrader_config.py``.

Each class does one job through one of nbgrader's documented extension points:

* `GradingStatus`: the course's record of what became of each submission (graded, failed and why,
  missing), kept beside the gradebook in ``grading-status.json``. ``python -m grader.instructor
  autograde`` writes it; nbgrader never needs it.
* `StatusExportPlugin`: ``nbgrader export`` (``ExportApp.plugin_class``) writes one CSV row per
  enrolled student and assignment, with a status, so a failed or missing submission is never a
  plain zero.
* `ClearHiddenTestsInFeedback`: a ``GenerateFeedback.preprocessors`` entry that takes hidden tests
  out of the feedback a student receives (upstream nbgrader shows them verbatim, #917).

Nothing here imports JAX: nbgrader loads this module for every command, formgrader included.
"""
from __future__ import annotations

import contextlib
import csv
import datetime
import fcntl
import json
import os
import re
import tempfile
from dataclasses import asdict, dataclass

import nbformat
from nbgrader.api import Gradebook, MissingEntry
from nbgrader.coursedir import CourseDirectory
from nbgrader.plugins import ExportPlugin
from nbgrader.preprocessors import ClearHiddenTests, GetGrades
from traitlets import List, Unicode
from traitlets.config import LoggingConfigurable

# The statuses a submission can have, as written in the export's ``status`` column.
GRADED = "graded"
NEEDS_MANUAL = "needs manual grading"
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
    timestamp = _timestamp(path)
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


def _timestamp(path: str) -> str | None:
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

    @contextlib.contextmanager
    def exclusive(self, root: str):
        """Hold the course's autograde lock, so two runs never grade into one gradebook."""
        with open(self.file(root) + ".lock", "a") as fh:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise RuntimeError(f"another autograde holds {fh.name}; wait for it to finish")
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)


@dataclass(frozen=True)
class Row:
    """One line of the export."""
    assignment: str
    student_id: str
    score: float | None
    max_score: float
    status: str
    reason: str

    def cells(self) -> list[str]:
        return [self.assignment, self.student_id, "" if self.score is None else _num(self.score),
                _num(self.max_score), self.status, self.reason]


COLUMNS = ["assignment", "student_id", "score", "max_score", "status", "reason"]


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


class StatusExportPlugin(ExportPlugin):
    """``nbgrader export``: a CSV row per enrolled student and assignment, with a status.

    status is ``graded``, ``needs manual grading``, ``failed`` (reason: kernel died, timed out,
    unreadable notebook, ...) or ``missing``; score is empty unless the submission was graded.
    Enrolled students are the gradebook's (``nbgrader db student add``).
    """

    to = Unicode("grades.csv", help="The CSV file to write (relative to the current directory, "
                 "which is the course folder when nbgrader is run from it).").tag(config=True)

    def export(self, gradebook: Gradebook) -> None:
        rows = self.rows(gradebook)
        self.log.info("Exporting %d rows to %s", len(rows), self.to)
        with open(self.to, "w", newline="", encoding="utf-8") as fh:
            out = csv.writer(fh)
            out.writerow(COLUMNS)
            out.writerows(r.cells() for r in rows)

    def rows(self, gradebook: Gradebook) -> list[Row]:
        coursedir = self._coursedir()
        records = GradingStatus(parent=self).load(coursedir.root)
        wanted_a = {str(a) for a in self.assignment}
        wanted_s = {str(s) for s in self.student}
        rows = []
        for assignment in gradebook.assignments:
            if wanted_a and assignment.name not in wanted_a:
                continue
            notebooks = [nb.name for nb in assignment.notebooks]
            for student in sorted(gradebook.students, key=lambda s: s.id):
                if wanted_s and student.id not in wanted_s:
                    continue
                rows.append(self.row(gradebook, coursedir, assignment, student.id, notebooks,
                                     records.get((assignment.name, student.id))))
        return rows

    def row(self, gradebook, coursedir, assignment, student_id, notebooks, rec) -> Row:
        name, max_score = assignment.name, assignment.max_score

        def graded_row(reason=""):
            sub = gradebook.find_submission(name, student_id)
            score = max(0.0, sub.score - (sub.late_submission_penalty or 0.0))
            return Row(name, student_id, score, max_score,
                       NEEDS_MANUAL if sub.needs_manual_grade else GRADED, reason)

        def failed(reason):
            return Row(name, student_id, None, max_score, FAILED, reason)

        here = inspect_submission(coursedir, name, student_id, notebooks)
        try:
            gradebook.find_submission(name, student_id)
            in_gradebook = True
        except MissingEntry:
            in_gradebook = False
        if here.state == MISSING:
            if here.reason == NOTHING_SUBMITTED and in_gradebook and \
                    autograded_complete(coursedir, name, student_id, notebooks):
                return graded_row()         # graded, then the submitted folder was removed
            return Row(name, student_id, None, max_score, MISSING, here.reason)
        if here.state == "unreadable":
            return failed(here.reason)
        if rec is not None and rec.timestamp != here.timestamp:
            rec = None                      # a record about an earlier submission
        if rec is not None and rec.status == GRADING:
            return failed(INTERRUPTED)
        if in_gradebook and autograded_complete(coursedir, name, student_id, here.notebooks):
            graded_from = _timestamp(coursedir.format_path(coursedir.autograded_directory,
                                                           student_id, name))
            if graded_from != here.timestamp:
                return failed(STALE)        # collected again (--update) since it was graded
            absent = [n for n in notebooks if n not in here.notebooks]
            return graded_row(f"not submitted: {', '.join(absent)}" if absent else "")
        if rec is not None and rec.status == FAILED:
            return failed(rec.reason)
        return failed(NOT_AUTOGRADED)

    def _coursedir(self) -> CourseDirectory:
        coursedir = getattr(self.parent, "coursedir", None)
        return coursedir if coursedir is not None else CourseDirectory(parent=self)


class ClearHiddenTestsInFeedback(ClearHiddenTests):
    """Feedback preprocessor: hidden-test regions leave the grade cells' source, and any output
    line that quotes a hidden-test line (a traceback, say) is replaced, while the grader's own
    messages (expected, got, hint) stay.

    Put it in ``GenerateFeedback.preprocessors`` after ``GetGrades``.
    """

    # nbconvert's HTML exporter configures this for every NbConvertBase; declared configurable
    # here (as nbgrader's GetGrades does) so traitlets does not warn about it.
    display_data_priority = List(GetGrades.display_data_priority.default_value,
                                 help="Output formats in order of preference.").tag(config=True)

    replacement = Unicode(
        "[hidden test]",
        help="Shown in the feedback in place of an output line that quotes a hidden test.",
    ).tag(config=True)

    def preprocess_cell(self, cell, resources, cell_index):
        before = cell.source
        cell, resources = super().preprocess_cell(cell, resources, cell_index)
        hidden = _removed_lines(before, cell.source)
        if hidden and cell.cell_type == "code":
            for output in cell.get("outputs", []):
                self._scrub(output, hidden)
        return cell, resources

    def _scrub(self, output, hidden):
        def clean(text: str) -> str:
            return "\n".join(self.replacement if any(h in _plain(line) for h in hidden) else line
                             for line in text.split("\n"))
        if "traceback" in output:
            output["traceback"] = [clean(t) for t in output["traceback"]]
        if "text" in output:
            output["text"] = clean(output["text"])
        for mime, value in output.get("data", {}).items():
            if isinstance(value, str) and mime.startswith("text/"):
                output["data"][mime] = clean(value)


_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def _plain(line: str) -> str:
    """A line without ANSI colour codes (IPython colours tracebacks token by token)."""
    return _ANSI.sub("", line)


def _removed_lines(before: str, after: str) -> list[str]:
    kept = {line.strip() for line in after.split("\n")}
    return [s for s in (line.strip() for line in before.split("\n"))
            if s and s not in kept and not s.startswith("#")]
