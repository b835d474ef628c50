"""The Makefile's instructor targets are thin wrappers that work: one student through the term."""
import csv
import os
import shutil
import subprocess

import nbformat
import pytest
from nbgrader.api import Gradebook

from tools import classroom as C

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning"),
              pytest.mark.skipif(shutil.which("make") is None, reason="no make")]


@pytest.fixture
def course(tmp_path):
    return C.build_course(str(tmp_path))


def make(course, *targets, extra="", ok=True):
    # the exchange is the course copy's own (its nbgrader_config.py): nothing to pass
    args = ["--ExchangeCollect.check_owner=False", "--Execute.timeout=30"]
    first = C.assignments(course.exercises)[0]
    # -o: never rebuild the venv from inside a test
    cmd = ["make", "--no-print-directory", "-C", C.ROOT, "-o", ".venv/.installed", "-o", ".venv/.installed-all",
           *targets, f"COURSE={course.course}", f"ASSIGNMENT={first}", "NBGRADER_ARGS=" + " ".join(args)]
    env = {k: v for k, v in os.environ.items() if not k.startswith("MAKE")}
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert (proc.returncode == 0) is ok, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc.stdout + proc.stderr


def submit_without_a_grade_cell(course, student, assignment):
    """A blank submission whose student deleted the first grade cell; returns its grade id."""
    home = C.student_home(course, student)
    C.nbgrader(["fetch_assignment", assignment, f"--student={student}"], home)
    path = os.path.join(home, assignment, assignment + ".ipynb")
    nb = nbformat.read(path, as_version=4)
    gid = next(c.metadata.nbgrader["grade_id"] for c in nb.cells
               if c.metadata.get("nbgrader", {}).get("grade"))
    nb.cells = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") != gid]
    nbformat.write(nb, path)
    C.nbgrader(["submit", assignment, f"--student={student}"], home)
    return gid


def test_assign_collect_autograde_feedback_export(course):
    first = C.assignments(course.exercises)[0]
    make(course, "assign")
    assert os.path.isdir(os.path.join(course.exchange, C.COURSE_ID, "outbound", first))
    C.enrol(course, [C.Student("ben", C.BLANK), C.Student("dev", C.DIES), C.Student("hana", C.NEVER)])
    C.submit_all(course, [C.Student("ben", C.BLANK, False), C.Student("dev", C.DIES, False)])
    deleted = submit_without_a_grade_cell(course, "ivy", first)
    out = make(course, "collect", "autograde", "feedback", "export")
    assert "[1/3]" in out and "ben" in out and "blank 0/" in out
    assert "Exchange.root" not in out                # no warning: the exchange is in the config
    assert f"wrote {os.path.join(course.course, 'grades.csv')}" in out
    # OverwriteCells.add_missing_cells: the deleted grade cell is put back and graded (0 here),
    # not left ungraded for manual grading
    with Gradebook("sqlite:///" + os.path.join(course.course, "gradebook.db"), C.COURSE_ID) as gb:
        grades = {g.name: g for g in gb.find_submission(first, "ivy").notebooks[0].grades}
        assert (grades[deleted].auto_score, grades[deleted].needs_manual_grade) == (0, False)
    assert os.path.isfile(os.path.join(course.course, "feedback", "ben", first, first + ".html"))
    # dev's kernel died: a page saying so and what to do, released with ben's and ivy's
    with open(os.path.join(course.course, "feedback", "dev", first, first + ".html"), encoding="utf-8") as fh:
        page = fh.read()
    assert "stopped the grading kernel" in page and "fresh kernel" in page and "Traceback" not in page
    assert len(os.listdir(os.path.join(course.exchange, C.COURSE_ID, "feedback"))) == 3
    with open(os.path.join(course.course, "grades.csv"), newline="") as fh:
        rows = {r["student_id"]: r for r in csv.DictReader(fh)}
    assert (rows["ben"]["score"], rows["ben"]["status"]) == ("0", "blank")
    assert (rows["hana"]["score"], rows["hana"]["status"]) == ("", "missing")
    assert (rows["dev"]["score"], rows["dev"]["status"], rows["dev"]["reason"]) == ("", "failed", "kernel died")
    # its answers are the release's, untouched: blank, whatever became of the grade cell
    assert (rows["ivy"]["score"], rows["ivy"]["status"]) == ("0", "blank")

    # One student whose feedback cannot be made costs no one else's: ivy's autograded notebook is broken now.
    graded = os.path.join(course.course, "autograded", "ivy", first, first + ".ipynb")
    os.chmod(graded, 0o644)
    with open(graded, "w") as fh:
        fh.write("{not a notebook")
    released = os.path.join(course.exchange, C.COURSE_ID, "feedback")
    shutil.rmtree(released)
    out = make(course, "feedback", ok=False)
    assert f"feedback of some students of {first} could not be made" in out
    assert os.listdir(released)                     # ben's was released all the same


def test_bin_nbgrader_runs_without_activating_anything(course, tmp_path):
    """bin/nbgrader: the venv's nbgrader, the course's configuration, no `activate`; from a
    folder without nbgrader_config.py it says where to run it instead of using no course."""
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV",)}
    env["PATH"] = "/usr/bin:/bin"                   # nothing of the venv on PATH
    wrapper = os.path.join(C.ROOT, "bin", "nbgrader")
    added = subprocess.run([wrapper, "db", "student", "add", "zoe", "--last-name=Z"],
                           cwd=course.course, env=env, capture_output=True, text=True, timeout=300)
    assert added.returncode == 0, added.stderr
    listed = subprocess.run([wrapper, "db", "student", "list"], cwd=course.course, env=env,
                            capture_output=True, text=True, timeout=300)
    assert "zoe (Z, None)" in listed.stdout, listed.stdout + listed.stderr
    elsewhere = subprocess.run([wrapper, "db", "student", "list"], cwd=tmp_path, env=env,
                               capture_output=True, text=True, timeout=60)
    assert elsewhere.returncode == 2 and "run bin/nbgrader from" in elsewhere.stderr
