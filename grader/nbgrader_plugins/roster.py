"""``make roster FILE=...``: an LMS roster export into the gradebook, through nbgrader's own
``nbgrader db student import`` (`DbStudentImportApp`, one start-up for the whole class).

nbgrader imports the columns ``id, first_name, last_name, email, lms_user_id``. The roster an LMS
hands out names them otherwise; `ROSTER_FORMATS` maps the ones recognised:

* nbgrader's own columns, as they are;
* a Canvas gradebook export (``Student, ID, SIS User ID, SIS Login ID, Section, ...``):
  ``SIS Login ID`` is the student's id (their JupyterHub user name), and their email when it
  holds an ``@``; ``ID`` (Canvas's user id) is ``lms_user_id``, so `CanvasExportPlugin` can key
  the grades by it; ``Student`` ("Last, First") gives the names. The ``Points Possible`` row and
  rows without a login (Canvas's "Test Student") are skipped, and said so;
* a Moodle participants or grades download (``First name, Last name`` or ``Surname, Email
  address``, optional ``ID number``, ``Username``): ``Username`` is the id, ``ID number`` is
  ``lms_user_id``.

``--RosterImport.id_column=COLUMN`` (``make roster ID_COLUMN=...``) names another column as the
student's id.
"""
from __future__ import annotations

import csv
import os
import tempfile

from nbgrader.apps.dbapp import DbStudentImportApp
from traitlets import Unicode, default

from . import safe

NBGRADER_COLUMNS = ("id", "first_name", "last_name", "email", "lms_user_id")

# format -> {nbgrader column: roster column, or a tuple of alternatives}; "name" is "Last, First".
ROSTER_FORMATS = {
    "nbgrader": {c: c for c in NBGRADER_COLUMNS},
    "Canvas gradebook export": {"id": "SIS Login ID", "lms_user_id": "ID", "name": "Student",
                                "email": ("Email", "SIS Login ID")},
    "Moodle download": {"id": "Username", "first_name": "First name",
                        "last_name": ("Last name", "Surname"), "email": "Email address",
                        "lms_user_id": "ID number"},
}
_SIGNATURE = {"nbgrader": "id", "Canvas gradebook export": "SIS Login ID",
              "Moodle download": "Email address"}


class RosterError(ValueError):
    pass


def detect(header: list[str]) -> str:
    for fmt, column in _SIGNATURE.items():
        if column in header:
            return fmt
    raise RosterError(f"cannot tell what roster this is: its columns are {header}; expected "
                      f"nbgrader's ({', '.join(NBGRADER_COLUMNS)}), a Canvas gradebook export "
                      "(Student, ID, SIS User ID, SIS Login ID, Section) or a Moodle download "
                      "(First name, Last name, Email address, ...)")


def _pick(row: dict, column, field: str = "") -> str:
    """The first non-empty of the alternative columns (a login counts as an email only when it
    is one)."""
    for c in (column,) if isinstance(column, str) else column:
        value = (row.get(c) or "").strip()
        if value and not (field == "email" and "@" not in value):
            return value
    return ""


def convert(path: str, id_column: str = "") -> tuple[str, list[dict], list[str]]:
    """(format, rows in nbgrader's columns, what was skipped and why) of the roster at path."""
    with open(path, newline="", encoding="utf-8-sig") as fh:    # -sig: Excel's byte-order mark
        reader = csv.DictReader(fh)
        header = [h.strip() for h in reader.fieldnames or []]
        reader.fieldnames = header
        fmt = detect(header)
        mapping = dict(ROSTER_FORMATS[fmt])
        if id_column:
            if id_column not in header:
                raise RosterError(f"no column {id_column!r} in {path} (its columns: {header})")
            mapping["id"] = id_column
        elif mapping["id"] not in header:
            raise RosterError(f"{path} looks like a {fmt} but has no {mapping['id']!r} column "
                              "for the students' ids; name the column that holds them "
                              "(make roster ID_COLUMN=...)")
        out, skipped, seen = [], [], set()
        for line, row in enumerate(reader, start=2):
            if "Points Possible" in (row.get("Student") or ""):
                skipped.append(f"line {line}: Canvas's Points Possible row")
                continue
            sid = (row.get(mapping["id"]) or "").strip()
            if not sid:
                skipped.append(f"line {line}: no {mapping['id']}")
                continue
            if sid in seen:
                skipped.append(f"line {line}: {sid} again")
                continue
            seen.add(sid)
            student = {"id": sid}
            for field, column in mapping.items():
                if field not in ("id", "name"):
                    student[field] = _pick(row, column, field)
            if "name" in mapping:
                last, _, first = _pick(row, mapping["name"]).partition(",")
                student["last_name"], student["first_name"] = last.strip(), first.strip()
            out.append(student)
    return fmt, out, skipped


class RosterImport(DbStudentImportApp):
    """nbgrader's ``db student import``, on an LMS roster mapped to nbgrader's columns first."""

    name = "inside-vmap-roster"
    description = "Import an LMS roster (Canvas, Moodle or nbgrader columns) into the gradebook."
    id_column = Unicode("", help="The roster column holding each student's nbgrader id (their "
                        "JupyterHub user name); empty: SIS Login ID (Canvas), Username (Moodle) "
                        "or id (nbgrader's columns).").tag(config=True)

    aliases = {**DbStudentImportApp.aliases, "id-column": "RosterImport.id_column"}

    @default("classes")
    def _classes_default(self):
        return super()._classes_default() + [RosterImport]

    @default("log_level")
    def _quiet(self):
        return "WARN"                   # nbgrader logs every student at INFO; one line says it

    def start(self):
        if len(self.extra_args) != 1:
            self.fail("Give the roster CSV: python -m grader.instructor roster FILE")
        source = os.path.abspath(self.extra_args[0])
        if not os.path.isfile(source):
            self.fail("No such roster file: %s", source)
        try:
            fmt, students, skipped = convert(source, self.id_column)
        except RosterError as err:
            self.fail(safe.text(err, 2000))
        fd, mapped = tempfile.mkstemp(suffix=".csv", prefix="inside-vmap-roster-")
        try:
            with os.fdopen(fd, "w", newline="", encoding="utf-8") as fh:
                out = csv.DictWriter(fh, NBGRADER_COLUMNS)
                out.writeheader()
                out.writerows(students)
            self.extra_args = [mapped]
            super().start()                 # nbgrader's own import
        finally:
            os.unlink(mapped)
        print(f"inside-vmap: imported {len(students)} students from {source} (a {fmt}: "
              + ", ".join(f"{c if isinstance(c, str) else ' or '.join(c)} -> {f}"
                          for f, c in self._mapping(fmt).items()) + ")", flush=True)
        for why in skipped:                 # a roster's ids are shown as written, never acting
            print(f"  skipped {safe.text(why)}", flush=True)

    def _mapping(self, fmt):
        mapping = dict(ROSTER_FORMATS[fmt])
        if self.id_column:
            mapping["id"] = self.id_column
        if "name" in mapping:
            mapping["last_name, first_name"] = mapping.pop("name")
        return mapping
