"""A grader's manual grade survives a forced regrade (issue 29): autograded, overridden as the
formgrader does it, then `make autograde NBGRADER_ARGS="--force --student=ID"`; the gradebook, the
export's status and reason and the Canvas file must all say the human's grade stands.

nbgrader's `SaveAutoGrades` marks every cell that has a manual score as needing manual grading
again when it scores it anew (for a review), and keeps the manual score, which the cell's score
is; the judge's `FlagForManualGrading` does the same for a cell it flags. Neither may turn the
export's "overridden" into "needs manual grading" or empty the student's Canvas cell.

One throw-away course with the first assignment: "wrong" solves its first two exercises (the
third, stack2_rule, scores 0 and is overridden to 2 of 3); "flagged" solves all four but names
JAX's reducer_batcher in the moments answer, so the judge sends moments_rule to a human, who
grades it 3 of 3.
"""
import csv
import os
import shutil

import nbformat
import pytest
from nbgrader.api import Gradebook

from grader.nbgrader_plugins import NEEDS_MANUAL, OVERRIDDEN
from tools import classroom as C

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")]

FIRST = "01-the-rule-per-primitive"
TIMEOUT = 30
# The moments answer as an honest student writes it, plus a mention of JAX's own rule maker (a
# name the exercise's delegation rules forbid): the judge does not run it, a human must grade it.
FLAG = '\n_ = "reducer_batcher"\n'


def submission(course, kind, flag=False):
    released = nbformat.read(os.path.join(course.course, "release", FIRST, FIRST + ".ipynb"),
                             as_version=4)
    source = nbformat.read(os.path.join(course.exercises, FIRST, FIRST + ".ipynb"),
                           as_version=4)
    nb = C.answer(kind, released, source)
    if flag:
        (cell,) = [c for c in nb.cells
                   if c.metadata.get("nbgrader", {}).get("grade_id") == "moments_answer"]
        cell.source += FLAG
    return nb


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    work = tmp_path_factory.mktemp("override")
    only = work / "exercises-first"
    shutil.copytree(os.path.join(C.ROOT, "exercises", FIRST), only / FIRST,
                    ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    course = C.build_course(str(work / "term"), exercises=str(only))
    C.assign(course)
    for student, nb in (("wrong", submission(course, C.PARTIAL)),
                        ("flagged", submission(course, C.FULL, flag=True))):
        C.nbgrader(["db", "student", "add", student], course.course)
        folder = os.path.join(course.course, "submitted", student, FIRST)
        os.makedirs(folder)
        nbformat.write(nb, os.path.join(folder, FIRST + ".ipynb"))
    return course


def db(course):
    return "sqlite:///" + os.path.join(course.course, "gradebook.db")


def set_manual(course, student, cell, score):
    """What the formgrader's grade API does when a grader types a score (nbgrader 0.9.6,
    server_extensions/formgrader/apihandlers.py GradeHandler.put)."""
    with Gradebook(db(course), C.COURSE_ID) as gb:
        grade = gb.find_grade(cell, FIRST, FIRST, student)
        grade.manual_score = score
        grade.needs_manual_grade = grade.manual_score is None and grade.auto_score is None
        gb.db.commit()


def cell_of(course, student, cell):
    with Gradebook(db(course), C.COURSE_ID) as gb:
        g = gb.find_grade(cell, FIRST, FIRST, student)
        return g.auto_score, g.manual_score, g.score, g.needs_manual_grade


def exported(course):
    """``({student: long row}, {student: Canvas cell})`` from `make export` and `make export
    FORMAT=canvas`."""
    rows = {r["student_id"]: r for r in C.export(course)}
    C.nbgrader(["export", "--exporter=grader.nbgrader_plugins.CanvasExportPlugin"], course.course)
    with open(os.path.join(course.course, "grades-canvas.csv"), newline="",
              encoding="utf-8") as fh:
        head, _points, *body = list(csv.reader(fh))
    column = head.index(FIRST)
    return rows, {r[3] or r[0]: r[column] for r in body}


@pytest.fixture(scope="module")
def overridden(course):
    """Autograded, then the two cells graded by hand; the export before any regrade."""
    C.autograde(course, TIMEOUT)
    first = {s: cell_of(course, s, c) for s, c in (("wrong", "stack2_rule"),
                                                    ("flagged", "moments_rule"))}
    set_manual(course, "wrong", "stack2_rule", 2.0)
    set_manual(course, "flagged", "moments_rule", 3.0)
    return first, exported(course)


@pytest.fixture(scope="module")
def regraded(course, overridden):
    """Each student regraded on their own, as the issue did it."""
    printed = {s: C.autograde(course, TIMEOUT, extra=["--force", f"--student={s}"])
               for s in ("wrong", "flagged")}
    return printed, exported(course)


def test_the_first_grading_is_what_the_override_corrects(overridden):
    first, (rows, canvas) = overridden
    assert first["wrong"] == (0.0, None, 0.0, False)
    assert first["flagged"] == (None, None, 0.0, True)
    assert (rows["wrong"]["status"], rows["wrong"]["score"], canvas["wrong"]) == \
        (OVERRIDDEN, "8", "8")                  # spy 3 + moments 3 + the grader's 2
    assert (rows["flagged"]["status"], rows["flagged"]["score"], canvas["flagged"]) == \
        (OVERRIDDEN, "13", "13")


def test_the_gradebook_keeps_the_manual_grade(course, regraded):
    # nbgrader's own semantics: the manual score is the cell's score; the flag asks for a review
    assert cell_of(course, "wrong", "stack2_rule") == (0.0, 2.0, 2.0, True)
    assert cell_of(course, "flagged", "moments_rule") == (None, 3.0, 3.0, True)


def test_the_export_says_overridden_with_a_true_reason(regraded):
    _, (rows, canvas) = regraded
    wrong, flagged = rows["wrong"], rows["flagged"]
    assert (wrong["status"], wrong["score"]) == (OVERRIDDEN, "8"), wrong
    assert wrong["reason"] == "manual grade 2/3 on stack2_rule kept over the regrade " \
                              "(automatic score 0)", wrong
    assert (flagged["status"], flagged["score"]) == (OVERRIDDEN, "13"), flagged
    assert flagged["reason"].startswith(
        "manual grade 3/3 on moments_rule kept over the regrade (which sent it to manual "
        "grading: moments_answer: "), flagged
    assert "reducer_batcher" in flagged["reason"], flagged
    assert "no automatic score" not in wrong["reason"] + flagged["reason"]
    assert NEEDS_MANUAL not in (wrong["status"], flagged["status"])


def test_the_canvas_cell_carries_the_manual_grade(regraded):
    _, (_, canvas) = regraded
    assert canvas == {"wrong": "8", "flagged": "13"}


def test_autogrades_own_line_says_the_same(regraded):
    printed, _ = regraded
    assert "overridden 8/13: manual grade 2/3 on stack2_rule kept" in printed["wrong"], \
        printed["wrong"]
    assert "overridden 13/13: manual grade 3/3 on moments_rule kept" in printed["flagged"], \
        printed["flagged"]
