"""One record of what became of each submission, whichever front end autograded it (issue 29):
nbgrader's CLI (`nbgrader autograde`), the formgrader's Autograde button (its REST call, which is
nbgrader's Python API, NbGraderAPI.autograde, in the server) and `make autograde` all leave the
grading status in the gradebook's database, where the export and `make autograde`'s own lines
read it.

One throw-away course with the first assignment (its gradebook in SQLite, then on PostgreSQL),
served by a Jupyter server at its top level as `make lab` serves it. "fixed" hands in a notebook
that kills its kernel: `make autograde` fails it; the notebook is then fixed and regraded with the
formgrader's button (the issue's case: the export said 13/13 while `make autograde` still printed
the old failure). "cli" hands in a notebook that kills its kernel and is graded with `nbgrader
autograde`, which records why; `make feedback` then gives "cli" a page saying what happened and
what to do, and "fixed" nbgrader's own.
"""
import glob
import json
import os
import shutil

import nbformat
import pytest
from nbgrader.coursedir import CourseDirectory

from grader.nbgrader_plugins import FAILED, GRADED, KERNEL_DIED, GradingStatus
from tests.fixtures.servers import course_server
from tools import classroom as C

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")]

FIRST = "01-the-rule-per-primitive"
TIMEOUT = 30
STAMP = "2026-01-05 10:00:00.000000 UTC"


def hand_in(course, student, kind):
    released = nbformat.read(os.path.join(course.course, "release", FIRST, FIRST + ".ipynb"),
                             as_version=4)
    source = nbformat.read(os.path.join(course.exercises, FIRST, FIRST + ".ipynb"),
                           as_version=4)
    folder = os.path.join(course.course, "submitted", student, FIRST)
    os.makedirs(folder, exist_ok=True)
    nbformat.write(C.answer(kind, released, source), os.path.join(folder, FIRST + ".ipynb"))
    for name, text in (("timestamp.txt", STAMP), ("submission_secret.txt", student * 4)):
        with open(os.path.join(folder, name), "w") as fh:       # as `nbgrader submit` leaves them
            fh.write(text)


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def course(request, tmp_path_factory):
    """The course copy, its gradebook in SQLite beside it or on a real PostgreSQL server."""
    work = tmp_path_factory.mktemp("status")
    only = work / "exercises-first"
    shutil.copytree(os.path.join(C.ROOT, "exercises", FIRST), only / FIRST,
                    ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    url = request.getfixturevalue("postgres").create_database(f"t_status_{work.name}") \
        if request.param == "postgresql" else None
    course = C.build_course(str(work / "term"), exercises=str(only),
                            settings={"CourseDirectory.db_url": url} if url else {})
    course.db_url = url or "sqlite:///" + os.path.join(course.course, "gradebook.db")
    shutil.copy(os.path.join(C.ROOT, "nbgrader_config.py"), course.work)   # as `make lab` finds it
    C.assign(course)
    for student in ("fixed", "cli"):
        C.nbgrader(["db", "student", "add", student], course.course)
    return course


def status(course):
    """The grading status as the course's gradebook holds it."""
    return GradingStatus().load(CourseDirectory(db_url=course.db_url, course_id=C.COURSE_ID))


def formgrader(serve, course):
    command, popen = course_server(course.work)
    return serve(command, **popen)


@pytest.fixture(scope="module")
def graded(course):
    """`make autograde` fails the first notebook; the student fixes it."""
    steps = {}
    hand_in(course, "fixed", C.DIES)
    steps["make autograde, dead kernel"] = C.autograde(course, TIMEOUT, extra=["--student=fixed"])
    steps["after make autograde"] = status(course)[FIRST, "fixed"]
    hand_in(course, "fixed", C.FULL)            # the student's fixed notebook
    return steps


def test_make_autograde_records_the_failure(graded):
    rec = graded["after make autograde"]
    assert (rec.status, rec.reason) == (FAILED, KERNEL_DIED)
    assert f"FAILED {FIRST} fixed: {KERNEL_DIED}" in graded["make autograde, dead kernel"]


def test_every_front_end_leaves_one_record(course, graded, serve):
    # the formgrader's Autograde button, on the fixed notebook
    server = formgrader(serve, course)
    code, body = server.post(f"/formgrader/api/submission/{FIRST}/fixed/autograde", {})
    assert code == 200 and json.loads(body)["success"], body
    rec = status(course)[FIRST, "fixed"]
    assert (rec.status, rec.reason) == (GRADED, "")
    # nbgrader's CLI, on a notebook that kills its kernel
    hand_in(course, "cli", C.DIES)
    with pytest.raises(C.CommandFailed):          # nbgrader exits 1 when a submission failed
        C.nbgrader(["autograde", FIRST, "--student=cli"], course.course)
    rec = status(course)[FIRST, "cli"]
    assert (rec.status, rec.reason) == (FAILED, KERNEL_DIED)
    # make autograde reads the same records: nothing changed since, so nothing is graded again
    printed = C.autograde(course, TIMEOUT)
    assert "graded earlier, unchanged 13/13" in printed, printed
    assert f"failed earlier, unchanged: {KERNEL_DIED}" in printed, printed
    assert f"FAILED {FIRST} fixed" not in printed, printed
    # ... and so does the export
    rows = {r["student_id"]: r for r in C.export(course)}
    assert (rows["fixed"]["status"], rows["fixed"]["score"]) == (GRADED, "13"), rows["fixed"]
    assert (rows["cli"]["status"], rows["cli"]["reason"], rows["cli"]["score"]) == \
        (FAILED, KERNEL_DIED, ""), rows["cli"]
    assert not os.path.exists(os.path.join(course.course, "grading-status.json"))


def test_a_failed_submission_gets_feedback_saying_what_to_do(course, graded):
    """`make feedback` (nbgrader's generate and release, the course's page for a failed one):
    "cli", whose kernel died, is told so calmly; "fixed" gets nbgrader's feedback."""
    C.feedback(course, students=())
    page = os.path.join(course.course, "feedback", "cli", FIRST, FIRST + ".html")
    with open(page, encoding="utf-8") as fh:
        text = fh.read()
    assert "stopped the grading kernel" in text and KERNEL_DIED in text, text
    assert "run your notebook from top to bottom in a fresh kernel" in text, text
    assert "Traceback" not in text
    assert "_exit(1)" not in text and "grader." not in text      # nothing of the notebook or course
    released = glob.glob(os.path.join(course.exchange, C.COURSE_ID, "feedback", "*.html"))
    assert len(released) == 2, released          # cli's page and fixed's nbgrader feedback
    with open(os.path.join(course.course, "feedback", "fixed", FIRST, FIRST + ".html"),
              encoding="utf-8") as fh:
        assert "could not be graded" not in fh.read()
