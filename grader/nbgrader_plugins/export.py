"""``nbgrader export`` plugins (``ExportApp.plugin_class``; ``make export FORMAT=...``).

* `StatusExportPlugin` (``long``): one row per enrolled student and assignment, with status and
  reason (`grader.nbgrader_plugins.outcome`).
* `CanvasExportPlugin` (``canvas``): what Canvas's gradebook import reads, one row per student.
  Checked against Canvas's importer (instructure/canvas-lms, app/models/gradebook_importer.rb:
  ``header?``/``update_column_count``/``check_for_non_student_row``/``process_student``) and its
  guide "How do I import grades in the Gradebook?" (community.canvaslms.com/t5/Instructor-Guide/
  How-do-I-import-grades-in-the-Gradebook/ta-p/807): the header must start ``Student, ID``, may
  go on ``SIS User ID, SIS Login ID``, and must end its student columns with ``Section``; every
  later column is an assignment, matched by ``Title (canvas id)`` or by title, else created, so
  status cannot be a column there: it goes to a companion file (the long format). A first
  column containing ``Points Possible`` marks the row of maxima. A student is matched by ``ID``
  (Canvas's user id: our ``lms_user_id``), then ``SIS User ID``, then ``SIS Login ID``, then by
  name. An empty cell changes nothing in Canvas. A class imported from a Canvas gradebook
  (``make roster``) gets back its ``SIS User ID``, ``SIS Login ID`` (the nbgrader id) and
  ``Section``, and its assignment columns' titles (``Exercises 1 (5501)``), from
  ``lms-roster.json`` (`lms`); a student added otherwise has their email as ``SIS Login ID``.
* `MoodleExportPlugin` (``moodle``): Moodle's "Import grades from CSV file" (grade/import/csv;
  docs.moodle.org/en/Grade_import): the instructor maps one column to the user (``Email
  address`` -> useremail or ``ID number`` -> useridnumber) and each other column to a grade item
  or to its feedback; an empty cell or ``-`` is no grade. Status and reason travel in each
  assignment's feedback column (Moodle: import the grade and feedback columns together).

Each writes relative paths under the course folder (CourseDirectory.root) and says which files
it wrote. Every cell of every file goes through `safe.cell` (`Sheet`): a cell starting with ``=``,
``+``, ``-``, ``@``, tab or CR is disarmed with a ``'``, as OWASP advises against CSV injection.
"""
from __future__ import annotations

import csv
import os

from nbgrader.coursedir import CourseDirectory
from nbgrader.plugins import ExportPlugin
from traitlets import Dict, List, Unicode

from . import lms, safe
from .outcome import Row, rows
from .status import BLANK, GRADED, LATE, OVERRIDDEN, GradingStatus

COLUMNS = ["assignment", "student_id", "score", "max_score", "status", "reason", "lms_user_id",
           "email"]
CANVAS_STUDENT_COLUMNS = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
MOODLE_STUDENT_COLUMNS = ["First name", "Last name", "ID number", "Email address"]


def _num(x: float | None) -> str:
    return "" if x is None else str(int(x)) if float(x).is_integer() else f"{x:g}"


class Sheet:
    """``csv.writer`` whose every cell is `safe.cell`: no formula a spreadsheet would run, no
    control character (names, ids and reasons are the students' and their code's words)."""

    def __init__(self, fh):
        self._out = csv.writer(fh)

    def writerow(self, row) -> None:
        self._out.writerow([safe.cell(v) for v in row])

    def writerows(self, rows_) -> None:
        for row in rows_:
            self.writerow(row)


class CourseExport(ExportPlugin):
    """What every format shares: the rows, the course folder, saying what was written."""

    def rows(self, gradebook) -> list[Row]:
        coursedir = self._coursedir()
        return rows(gradebook, coursedir, GradingStatus(parent=self).load(coursedir),
                    {str(a) for a in self.assignment}, {str(s) for s in self.student}, self)

    def path(self, name: str) -> str:
        return os.path.join(self._coursedir().root, name)

    def say(self, text: str) -> None:
        print(f"inside-vmap: {text}", flush=True)

    def write_long(self, rows_: list[Row], path: str) -> None:
        with open(path, "w", newline="", encoding="utf-8") as fh:
            out = Sheet(fh)
            out.writerow(COLUMNS)
            out.writerows([r.assignment, r.student_id, _num(r.score), _num(r.max_score),
                           r.status, r.reason, r.lms_user_id, r.email] for r in rows_)

    def _coursedir(self) -> CourseDirectory:
        coursedir = getattr(self.parent, "coursedir", None)
        return coursedir if coursedir is not None else CourseDirectory(parent=self)


class StatusExportPlugin(CourseExport):
    """One CSV row per enrolled student and assignment: score (empty unless graded), max,
    status (graded, needs manual grading, overridden, blank, late, failed, missing) and reason.
    Enrolled students are the gradebook's (``make roster``, ``nbgrader db student add``)."""

    to = Unicode("grades.csv", help="The CSV file to write, relative to the course folder "
                 "(CourseDirectory.root).").tag(config=True)

    def export(self, gradebook) -> None:
        found = self.rows(gradebook)
        path = self.path(self.to)
        self.write_long(found, path)
        self.say(f"wrote {path}: {len(found)} rows, one per enrolled student and assignment, "
                 "with status and reason")


class LmsExport(CourseExport):
    """One row per student, one column per assignment, for a learning-management system."""

    columns = Dict(key_trait=Unicode(), value_trait=Unicode(), help="LMS column title per "
                   "assignment, e.g. {'01-the-rule-per-primitive': 'Exercise 1 (4711)'}; an "
                   "assignment not named keeps its nbgrader name.").tag(config=True)
    scored = List(Unicode(), [GRADED, LATE, OVERRIDDEN, BLANK], help="Statuses whose score goes "
                  "into the LMS file; the others (needs manual grading, failed, missing) "
                  "leave the cell empty, which changes nothing there.").tag(config=True)
    companion = True                    # the LMS file has no room for status and reason
    status_to = Unicode("", help="Where the status and reason of every student and assignment "
                        "go (the long format), relative to the course folder; empty: beside "
                        "the LMS file, as NAME-status.csv (Canvas; Moodle gets them in its "
                        "feedback columns and no such file unless this is set).").tag(config=True)

    def export(self, gradebook) -> None:
        found = self.rows(gradebook)
        assignments = sorted({r.assignment for r in found})
        by_student: dict[str, dict[str, Row]] = {}
        for r in found:
            by_student.setdefault(r.student_id, {})[r.assignment] = r
        path = self.path(self.to)
        with open(path, "w", newline="", encoding="utf-8") as fh:
            self.write(Sheet(fh), assignments, by_student)
        keyed = [self.key(next(iter(v.values()))) for v in by_student.values()]
        counts = ", ".join(f"{keyed.count(k)} by {k}" for k in dict.fromkeys(keyed))
        self.say(f"wrote {path}: {len(by_student)} students x {len(assignments)} assignments "
                 f"for {self.lms} (students matched {counts or 'none'})")
        if self.companion or self.status_to:
            status = self.path(self.status_to or os.path.splitext(self.to)[0] + "-status.csv")
            self.write_long(found, status)
            self.say(f"wrote {status}: status and reason of every student and assignment")

    def cell(self, row: Row | None) -> str:
        return _num(row.score) if row is not None and row.status in self.scored else ""

    def title(self, assignment: str) -> str:
        return self.columns.get(assignment, assignment)


class CanvasExportPlugin(LmsExport):
    """Canvas's gradebook CSV (see the module's docstring for what Canvas reads)."""

    lms = "Canvas"
    to = Unicode("grades-canvas.csv", help="The Canvas gradebook CSV to write, relative to the "
                 "course folder.").tag(config=True)

    def write(self, out, assignments, by_student) -> None:
        roster = lms.load(self._coursedir().root)
        self._sis = roster["students"]
        titles = {**lms.titles(assignments, roster["columns"]), **self.columns}
        out.writerow(CANVAS_STUDENT_COLUMNS + [titles.get(a, a) for a in assignments])
        maxima = {r.assignment: r.max_score for v in by_student.values() for r in v.values()}
        out.writerow(["Points Possible", "", "", "", ""] + [_num(maxima[a]) for a in assignments])
        for sid in sorted(by_student):
            some = next(iter(by_student[sid].values()))
            name = ", ".join(p for p in (some.last_name, some.first_name) if p) or sid
            sis = self._sis.get(sid, {})
            out.writerow([name, some.lms_user_id, sis.get("SIS User ID", ""),
                          sis.get("SIS Login ID") or some.email, sis.get("Section", "")]
                         + [self.cell(by_student[sid].get(a)) for a in assignments])

    def key(self, row: Row) -> str:
        sis = getattr(self, "_sis", {}).get(row.student_id, {})
        return "ID (lms_user_id)" if row.lms_user_id else \
            "SIS User ID" if sis.get("SIS User ID") else \
            "SIS Login ID" if sis.get("SIS Login ID") or row.email else "name"


class MoodleExportPlugin(LmsExport):
    """Moodle's grade import CSV, with each assignment's status and reason as its feedback."""

    lms = "Moodle"
    companion = False                   # status and reason are each assignment's feedback
    to = Unicode("grades-moodle.csv", help="The Moodle grade import CSV to write, relative to "
                 "the course folder.").tag(config=True)

    def write(self, out, assignments, by_student) -> None:
        head = list(MOODLE_STUDENT_COLUMNS)
        for a in assignments:
            head += [self.title(a), f"{self.title(a)} (Feedback)"]
        out.writerow(head)
        for sid in sorted(by_student):
            some = next(iter(by_student[sid].values()))
            line = [some.first_name or sid, some.last_name, some.lms_user_id, some.email]
            for a in assignments:
                r = by_student[sid].get(a)
                line += [self.cell(r), "" if r is None else
                         r.status + (f": {r.reason}" if r.reason else "")]
            out.writerow(line)

    @staticmethod
    def key(row: Row) -> str:
        return "Email address" if row.email else "ID number (lms_user_id)" if row.lms_user_id \
            else "nothing (no email or lms_user_id: Moodle cannot match them)"
