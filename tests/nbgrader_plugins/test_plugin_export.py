"""The exports (grader.nbgrader_plugins.export, .outcome), on a gradebook and folders built here
with nbgrader's own API: every status a submission can have, in the long, Canvas and Moodle files."""
import csv
import shutil

import nbformat
import pytest
import sqlalchemy as sa
from nbformat.v4 import new_code_cell, new_notebook
from nbgrader.api import Gradebook
from nbgrader.coursedir import CourseDirectory
from traitlets.config import Config

from grader.nbgrader_plugins import (
    BLANK,
    FAILED,
    GRADED,
    GRADING,
    INTERRUPTED,
    JUDGE_FLAG,
    KERNEL_DIED,
    LATE,
    MISSING,
    NEEDS_MANUAL,
    NO_NOTEBOOK,
    NOT_AUTOGRADED,
    NOTHING_SUBMITTED,
    OVERRIDDEN,
    STALE,
    UNCHANGED,
    UNREADABLE,
    CanvasExportPlugin,
    GradingStatus,
    MoodleExportPlugin,
    StatusExportPlugin,
)
from grader.nbgrader_plugins.outcome import duration, manual_reason, overridden_reason
from grader.nbgrader_plugins.status import TABLE

pytestmark = pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")
COURSE = "inside-vmap"
STAMP = "2026-01-05 10:00:00.000000 UTC"
LATER = "2026-01-06 10:00:00.000000 UTC"
DUE = "2026-01-05 12:00:00 UTC"
STUDENTS = ("graded", "manual", "flagged", "overridden", "blank", "late", "died", "nothing",
            "empty", "corrupt", "killed", "plain", "stale", "resubmitted")


# ---- one assignment "a1", notebook "nb": answers s1, s2 and grade cells g1 (3 points), g2 (2) ---
@pytest.fixture(scope="module")
def root(tmp_path_factory):
    return tmp_path_factory.mktemp("course")


@pytest.fixture(scope="module")
def gradebook(root):
    url = "sqlite:///" + str(root / "gradebook.db")
    with Gradebook(url, COURSE) as gb:
        gb.add_assignment("a1", duedate=DUE)
        gb.add_notebook("nb", "a1")
        for s in ("s1", "s2"):
            gb.add_solution_cell(s, "nb", "a1")
        gb.add_grade_cell("g1", "nb", "a1", max_score=3, cell_type="code")
        gb.add_grade_cell("g2", "nb", "a1", max_score=2, cell_type="code")
        for i, s in enumerate(STUDENTS):
            gb.add_student(s, first_name=s.title(), last_name="Doe",
                           email=f"{s}@example.org" if i % 2 else None,
                           lms_user_id=str(1000 + i) if i % 3 else None)
    return url


def course(root):
    """Where the course at root keeps its gradebook, and with it the grading status."""
    return CourseDirectory(root=str(root), db_url="sqlite:///" + str(root / "gradebook.db"),
                           course_id=COURSE)


def forget(root, *which):
    """Delete grading-status rows of the course at root (all, or those ``which`` selects)."""
    engine = sa.create_engine(course(root).db_url)
    with engine.begin() as conn:
        conn.execute(TABLE.delete().where(*which))
    engine.dispose()


def grade(url, student, g1, g2, needs_manual=(), penalty=0.0, answered=True, timestamp=STAMP):
    """A submission as SaveAutoGrades (and AssignLatePenalties) leave it."""
    with Gradebook(url, COURSE) as gb:
        sub = gb.update_or_create_submission("a1", student, timestamp=timestamp)
        nb = sub.notebooks[0]
        for g in nb.grades:
            g.auto_score = {"g1": g1, "g2": g2}[g.name]
            g.needs_manual_grade = g.name in needs_manual
        for c in nb.comments:
            c.auto_comment = None if answered else "No response."
        nb.late_submission_penalty = penalty
        gb.db.commit()


def executed_nb():
    nb = new_notebook(cells=[new_code_cell("x = 1")])
    nb.cells[0].execution_count = 1
    return nb


def put(root, step, student, notebook=None, stamp=STAMP, raw=None):
    folder = root / step / student / "a1"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "timestamp.txt").write_text(stamp)
    if raw is not None:
        (folder / "nb.ipynb").write_text(raw)
    elif notebook is not None:
        nbformat.write(notebook, str(folder / "nb.ipynb"))


def export(root, plugin=StatusExportPlugin, **options):
    """Run an export plugin on the course at root; the files it wrote, read back."""
    cfg = Config()
    cfg.CourseDirectory.root = str(root)
    cfg.CourseDirectory.course_id = COURSE
    p = plugin(config=cfg, **options)
    with Gradebook("sqlite:///" + str(root / "gradebook.db"), COURSE) as gb:
        p.export(gb)
    return p


def read(path):
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.reader(fh))


def long_rows(root, **options):
    export(root, **options)
    with open(root / "grades.csv", newline="") as fh:
        return {r["student_id"]: r for r in csv.DictReader(fh)}


@pytest.fixture(scope="module")
def term(root, gradebook):
    """Every situation a submission can be in, with the grading status autograde would write."""
    status, where = GradingStatus(), course(root)
    graded = ("graded", "manual", "flagged", "overridden", "blank", "late", "plain", "stale",
              "resubmitted")
    for s in graded:
        put(root, "submitted", s, new_notebook(), stamp=LATER if s == "late" else STAMP)
        put(root, "autograded", s, executed_nb(), stamp=LATER if s == "late" else STAMP)
        status.record(where, "a1", s, GRADED, "", LATER if s == "late" else STAMP)
    grade(gradebook, "graded", 3, 1)
    grade(gradebook, "manual", 3, None, needs_manual=("g2",))
    grade(gradebook, "plain", 2, 2)
    grade(gradebook, "stale", 3, 2)
    grade(gradebook, "resubmitted", 3, 2)
    grade(gradebook, "blank", 0, 0, answered=False)
    grade(gradebook, "late", 3, 2, penalty=1.0, timestamp=LATER)   # a day after the due date
    # the judge's interface (grader.judge.preprocessor.FlagForManualGrading): g1 gets no
    # automatic score and needs a human; the reason is the comment of its answer cell, s1
    grade(gradebook, "flagged", None, 2, needs_manual=("g1",))
    with Gradebook(gradebook, COURSE) as gb:
        gb.find_comment("s1", "nb", "a1", "flagged").auto_comment = \
            JUDGE_FLAG + "the answer calls jax.vmap itself"
        gb.db.commit()
    # a grader overrode g2 (formgrader writes manual_score; SaveAutoGrades never touches it)
    grade(gradebook, "overridden", 3, 0)
    with Gradebook(gradebook, COURSE) as gb:
        g = gb.find_grade("g2", "nb", "a1", "overridden")
        g.manual_score = 2.0
        gb.db.commit()
    # failed: the kernel died; nbgrader removed the autograded folder and left None scores
    put(root, "submitted", "died", new_notebook())
    grade(gradebook, "died", None, None)
    status.record(where, "a1", "died", FAILED, KERNEL_DIED, STAMP)
    # a submitted folder without the notebook, and corrupt JSON
    put(root, "submitted", "empty")
    put(root, "submitted", "corrupt", raw='{"cells": [')
    # killed mid-grading: the sanitized (unexecuted) notebook is already in autograded/
    put(root, "submitted", "killed", new_notebook())
    put(root, "autograded", "killed", new_notebook())
    grade(gradebook, "killed", 3, None)
    status.record(where, "a1", "killed", GRADING, "", STAMP)
    # graded by a plain `nbgrader autograde`: no record at all
    forget(root, TABLE.c.student == "plain")
    # a newer submission collected after grading (the record is about the old one)
    put(root, "submitted", "stale", new_notebook(), stamp=LATER)
    # resubmitted and graded again by plain nbgrader: autograded/ carries the new timestamp
    put(root, "submitted", "resubmitted", new_notebook(), stamp=LATER)
    put(root, "autograded", "resubmitted", executed_nb(), stamp=LATER)
    return root


# ---- the long format ----------------------------------------------------------------------
def test_every_enrolled_student_has_one_row(term):
    rows = long_rows(term)
    assert set(rows) == set(STUDENTS)
    assert all(r["assignment"] == "a1" and r["max_score"] == "5" for r in rows.values())


@pytest.mark.parametrize("student, score, status, reason", [
    ("graded", "4", GRADED, ""),
    ("manual", "3", NEEDS_MANUAL, "no automatic score for g2"),
    ("flagged", "2", NEEDS_MANUAL, "s1: the answer calls jax.vmap itself"),
    ("overridden", "5", OVERRIDDEN, "manual grade: g2 0 -> 2"),
    ("blank", "0", BLANK, UNCHANGED),
    ("late", "4", LATE, "late by 22 h; penalty 1 point"),       # 5 points less the penalty
    ("plain", "4", GRADED, ""),                                 # plain nbgrader autograde
    ("died", "", FAILED, KERNEL_DIED),
    ("nothing", "", MISSING, NOTHING_SUBMITTED),
    ("empty", "", MISSING, NO_NOTEBOOK),
    ("corrupt", "", FAILED, UNREADABLE + " (nb.ipynb)"),
    ("killed", "", FAILED, INTERRUPTED),
    ("stale", "", FAILED, STALE),
    ("resubmitted", "5", GRADED, ""),
])
def test_each_row_tells_the_truth(term, student, score, status, reason):
    row = long_rows(term)[student]
    assert (row["score"], row["status"], row["reason"]) == (score, status, reason)


def test_identity_columns_come_from_the_roster(term):
    rows = long_rows(term)
    assert (rows["manual"]["lms_user_id"], rows["manual"]["email"]) == ("1001", "manual@example.org")
    assert (rows["graded"]["lms_user_id"], rows["graded"]["email"]) == ("", "")


def test_without_a_grading_status_failures_are_still_not_zeros(term, tmp_path):
    shutil.copytree(term, tmp_path / "copy")
    forget(tmp_path / "copy")
    rows = long_rows(tmp_path / "copy")
    assert (rows["died"]["status"], rows["died"]["reason"], rows["died"]["score"]) == \
        (FAILED, NOT_AUTOGRADED, "")
    assert (rows["corrupt"]["status"], rows["nothing"]["status"]) == (FAILED, MISSING)
    assert rows["graded"]["score"] == "4"


def test_assignment_and_student_filters(term):
    assert set(long_rows(term, student=["graded", "died"])) == {"graded", "died"}
    assert long_rows(term, assignment=["other"]) == {}


def test_the_long_columns_and_where_the_file_goes(term, capsys):
    export(term)
    assert read(term / "grades.csv")[0] == ["assignment", "student_id", "score", "max_score",
                                            "status", "reason", "lms_user_id", "email"]
    assert f"wrote {term / 'grades.csv'}" in capsys.readouterr().out


def test_upstream_csv_export_shows_failures_as_zero(term):
    """Why the plugin exists: nbgrader's own CsvExportPlugin writes 0.0 for a dead kernel."""
    from nbgrader.plugins import CsvExportPlugin
    with Gradebook("sqlite:///" + str(term / "gradebook.db"), COURSE) as gb:
        CsvExportPlugin(to=str(term / "upstream.csv")).export(gb)
    with open(term / "upstream.csv", newline="") as fh:
        upstream = {r["student_id"]: r for r in csv.DictReader(fh)}
    assert float(upstream["died"]["score"]) == 0.0 == float(upstream["nothing"]["score"])


# ---- Canvas -------------------------------------------------------------------------------
def test_canvas_file_is_what_canvas_imports(term, capsys):
    export(term, CanvasExportPlugin)
    head, points, *body = read(term / "grades-canvas.csv")
    # Canvas's GradebookImporter: "Student", "ID", then SIS User ID + SIS Login ID, then Section
    # ends the student columns; every later column is an assignment
    assert head == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "a1"]
    assert "Points Possible" in points[0] and points[5] == "5"
    assert len(body) == len(STUDENTS) and all(len(r) == len(head) for r in body)
    by_name = {r[0]: r for r in body}
    assert by_name["Doe, Graded"][5] == "4" and by_name["Doe, Late"][5] == "4"
    assert by_name["Doe, Blank"][5] == "0" and by_name["Doe, Overridden"][5] == "5"
    for empty in ("Died", "Nothing", "Corrupt", "Manual", "Flagged"):   # no change in Canvas
        assert by_name[f"Doe, {empty}"][5] == "", empty
    assert by_name["Doe, Manual"][1:4] == ["1001", "", "manual@example.org"]
    out = capsys.readouterr().out
    assert f"wrote {term / 'grades-canvas.csv'}: 14 students x 1 assignments for Canvas" in out
    assert f"wrote {term / 'grades-canvas-status.csv'}" in out
    status = {r[1]: r for r in read(term / "grades-canvas-status.csv")[1:]}
    assert status["flagged"][4:6] == [NEEDS_MANUAL, "s1: the answer calls jax.vmap itself"]


def test_canvas_columns_and_scored_statuses_are_configurable(term):
    export(term, CanvasExportPlugin, columns={"a1": "Exercise 1 (4711)"},
           scored=[GRADED, MISSING], to="other.csv")
    head, _, *body = read(term / "other.csv")
    assert head[5] == "Exercise 1 (4711)"
    by_name = {r[0]: r[5] for r in body}
    assert by_name["Doe, Nothing"] == "" and by_name["Doe, Late"] == ""     # missing: no score
    assert (term / "other-status.csv").exists()


# ---- Moodle -------------------------------------------------------------------------------
def test_moodle_file_carries_status_in_the_feedback_column(term, capsys):
    export(term, MoodleExportPlugin)
    head, *body = read(term / "grades-moodle.csv")
    assert head == ["First name", "Last name", "ID number", "Email address", "a1",
                    "a1 (Feedback)"]
    by_first = {r[0]: r for r in body}
    assert by_first["Late"][4:] == ["4", "late: late by 22 h; penalty 1 point"]
    assert by_first["Died"][4:] == ["", "failed: kernel died"]
    assert by_first["Graded"][4:] == ["4", "graded"]
    assert by_first["Manual"][2:4] == ["1001", "manual@example.org"]
    assert not (term / "grades-moodle-status.csv").exists()
    out = capsys.readouterr().out
    assert "14 students x 1 assignments for Moodle" in out and "7 by Email address" in out
    assert "3 by nothing (no email or lms_user_id: Moodle cannot match them)" in out


@pytest.mark.parametrize("seconds, text", [(40, "40 s"), (720, "12 min"), (3600 * 5 + 600, "5 h 10 min"),
                                           (86400 * 2 + 3 * 3600, "2 d 3 h"), (86400, "1 d")])
def test_lateness_reads_at_a_glance(seconds, text):
    assert duration(seconds) == text


def test_a_flag_on_the_grade_cell_itself_is_read_too():
    from types import SimpleNamespace as N
    grades = [N(name="g1", needs_manual_grade=True, manual_score=None),
              N(name="g2", needs_manual_grade=False, manual_score=None)]
    assert manual_reason(grades, [N(name="g1", auto_comment=JUDGE_FLAG + " eval ")]) == "g1: eval"
    assert manual_reason(grades, [N(name="s1", auto_comment="No response.")]) == \
        "no automatic score for g1"


def test_a_manual_grade_autograded_again_is_kept_and_says_so():
    """nbgrader's SaveAutoGrades flags a manually graded cell again when it scores it anew (the
    judge's FlagForManualGrading, one it flags); the manual score is still the cell's score."""
    from types import SimpleNamespace as N
    plain = N(name="g0", auto_score=1.0, manual_score=2.0, max_score=2.0, needs_manual_grade=False)
    wrong = N(name="g1", auto_score=0.0, manual_score=2.0, max_score=3.0, needs_manual_grade=True)
    flagged = N(name="g2", auto_score=None, manual_score=1.5, max_score=2.0,
                needs_manual_grade=True)
    flag = [N(name="s2", auto_comment=JUDGE_FLAG + "the answer calls jax.vmap itself")]
    assert overridden_reason([plain, wrong], flag) == \
        "manual grade: g0 1 -> 2; manual grade 2/3 on g1 kept over the regrade (automatic score 0)"
    assert overridden_reason([flagged], flag) == "manual grade 1.5/2 on g2 kept over the regrade " \
        "(which sent it to manual grading: s2: the answer calls jax.vmap itself)"
    # another cell awaits a human: the judge's reasons are that row's, not this cell's
    assert overridden_reason([flagged], flag, waiting=True) == \
        "manual grade 1.5/2 on g2 kept over the regrade (which sent it to manual grading)"

