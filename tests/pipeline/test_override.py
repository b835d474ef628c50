"""A grader's manual grade survives a forced regrade (issue 29), each step through the path an
instructor takes: `make autograde`, the score typed into the formgrader (its page's REST call, PUT
/formgrader/api/grade/ID), then `make autograde ASSIGNMENT=... NBGRADER_ARGS="--force
--student=ID"` and `make export` (long and Canvas). The gradebook, the export's status and reason,
the Canvas file, autograde's own line and the formgrader's API must all say the human's grade
stands.

nbgrader's `SaveAutoGrades` marks every cell that has a manual score as needing manual grading
again when it scores it anew (for a review), and keeps the manual score, which the cell's score
is; the judge's `FlagForManualGrading` does the same for a cell it flags. Neither may turn the
export's "overridden" into "needs manual grading" or empty the student's Canvas cell.

One throw-away course with the first assignment, served by a Jupyter server at its top level as
`make lab` serves the repository (the formgrader stays open through the regrade, as a grader's
does): "wrong" solves its first two exercises (the third, stack2_rule, scores 0 and is overridden
to 2 of 3); "flagged" solves all four but names JAX's reducer_batcher in the moments answer, so
the judge sends moments_rule to a human, who grades it 3 of 3.
"""
import csv
import json
import os
import shutil
import subprocess

import nbformat
import pytest
from nbgrader.api import Gradebook

from grader.nbgrader_plugins import NEEDS_MANUAL, OVERRIDDEN
from tests.fixtures.servers import course_server, start_server
from tools import classroom as C

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning"),
              pytest.mark.skipif(shutil.which("make") is None, reason="no make")]

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
    shutil.copy(os.path.join(C.ROOT, "nbgrader_config.py"), course.work)   # as `make lab` finds it
    C.assign(course)
    for student, nb in (("wrong", submission(course, C.PARTIAL)),
                        ("flagged", submission(course, C.FULL, flag=True))):
        C.nbgrader(["db", "student", "add", student], course.course)
        folder = os.path.join(course.course, "submitted", student, FIRST)
        os.makedirs(folder)
        nbformat.write(nb, os.path.join(folder, FIRST + ".ipynb"))
    return course


@pytest.fixture(scope="module")
def formgrader(course, tmp_path_factory):
    """A Jupyter server at the course copy's top level, up for the whole module."""
    command, popen = course_server(course.work)
    server = start_server(command, tmp_path_factory.mktemp("formgrader") / "server.log", **popen)
    yield server
    server.stop()


def make(course, *args):
    """The repository's Makefile on the course copy (-o: never rebuild the venv from a test)."""
    cmd = ["make", "--no-print-directory", "-C", C.ROOT, "-o", ".venv/.installed", "-o",
           ".venv/.installed-all", *args, f"COURSE={course.course}", f"ASSIGNMENT={FIRST}"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("MAKE")}
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc.stdout + proc.stderr


def autograde(course, *nbgrader_args):
    return make(course, "autograde",
                "NBGRADER_ARGS=" + " ".join([f"--Execute.timeout={TIMEOUT}", *nbgrader_args]))


def grade_by_hand(formgrader, student, cell, score):
    """What the formgrader's page does when a grader types a score: its grades come from GET
    /formgrader/api/grades?submission_id=NOTEBOOK, and the grade box saves the whole grade back
    with the new manual_score (Backbone's ``model.save``: PUT /formgrader/api/grade/ID, nbgrader
    0.9.6's GradeHandler.put). Returns the grade as the server answered the PUT."""
    (notebook,) = formgrader.get_json(
        f"/formgrader/api/student_notebook_submissions/{student}/{FIRST}")
    grade = formgrader_grade(formgrader, notebook["id"], cell)
    code, body = formgrader.put_json(f"/formgrader/api/grade/{grade['id']}",
                                     dict(grade, manual_score=score))
    assert code == 200, body
    return json.loads(body)


def formgrader_grade(formgrader, notebook_id, cell):
    (grade,) = [g for g in formgrader.get_json(f"/formgrader/api/grades?submission_id={notebook_id}")
                if g["name"] == cell]
    return grade


def formgrader_view(formgrader, student, cell):
    """The submission's score and the cell's grade, as the formgrader's API serves them."""
    submission = formgrader.get_json(f"/formgrader/api/submission/{FIRST}/{student}")
    (notebook,) = formgrader.get_json(
        f"/formgrader/api/student_notebook_submissions/{student}/{FIRST}")
    grade = formgrader_grade(formgrader, notebook["id"], cell)
    return (submission["score"], submission["max_score"], grade["auto_score"],
            grade["manual_score"])


def cell_of(course, student, cell):
    with Gradebook("sqlite:///" + os.path.join(course.course, "gradebook.db"), C.COURSE_ID) as gb:
        g = gb.find_grade(cell, FIRST, FIRST, student)
        return g.auto_score, g.manual_score, g.score, g.needs_manual_grade


def exported(course):
    """``({student: long row}, {student: Canvas cell})`` from `make export` and `make export
    FORMAT=canvas`."""
    make(course, "export")
    make(course, "export", "FORMAT=canvas")
    with open(os.path.join(course.course, "grades.csv"), newline="", encoding="utf-8") as fh:
        rows = {r["student_id"]: r for r in csv.DictReader(fh)}
    with open(os.path.join(course.course, "grades-canvas.csv"), newline="",
              encoding="utf-8") as fh:
        head, _points, *body = list(csv.reader(fh))
    column = head.index(FIRST)
    return rows, {r[3] or r[0]: r[column] for r in body}


@pytest.fixture(scope="module")
def overridden(course, formgrader):
    """Autograded, then the two cells graded by hand in the formgrader; the export before any
    regrade."""
    autograde(course)
    first = {s: cell_of(course, s, c) for s, c in (("wrong", "stack2_rule"),
                                                    ("flagged", "moments_rule"))}
    saved = {"wrong": grade_by_hand(formgrader, "wrong", "stack2_rule", 2.0),
             "flagged": grade_by_hand(formgrader, "flagged", "moments_rule", 3.0)}
    return first, saved, exported(course)


@pytest.fixture(scope="module")
def regraded(course, overridden):
    """Each student regraded on their own, as the issue did it."""
    printed = {s: autograde(course, "--force", f"--student={s}") for s in ("wrong", "flagged")}
    return printed, exported(course)


def test_the_first_grading_is_what_the_override_corrects(overridden):
    first, saved, (rows, canvas) = overridden
    assert first["wrong"] == (0.0, None, 0.0, False)
    assert first["flagged"] == (None, None, 0.0, True)
    # the formgrader took the grades: a manual score, no longer needing a grader
    assert [(saved[s]["manual_score"], saved[s]["needs_manual_grade"]) for s in saved] == \
        [(2.0, False), (3.0, False)]
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


def test_the_formgrader_shows_the_same(formgrader, regraded):
    # what a grader reopening the formgrader after the regrade sees: the submission's score
    # counts the manual grade, the cell keeps the automatic one beside it
    assert formgrader_view(formgrader, "wrong", "stack2_rule") == (8.0, 13.0, 0.0, 2.0)
    assert formgrader_view(formgrader, "flagged", "moments_rule") == (13.0, 13.0, None, 3.0)


def test_autogrades_own_line_says_the_same(regraded):
    printed, _ = regraded
    assert "overridden 8/13: manual grade 2/3 on stack2_rule kept" in printed["wrong"], \
        printed["wrong"]
    assert "overridden 13/13: manual grade 3/3 on moments_rule kept" in printed["flagged"], \
        printed["flagged"]
