"""Lateness by the exchange's clock (grader.nbgrader_plugins.received), through nbgrader's own
release, fetch, submit and collect: a student's rewritten timestamp changes nothing but a flag,
the same content resubmitted keeps the time it first arrived, and nothing but regular files
leaves the exchange, whatever a student leaves there (a link to the instructor's solution)."""
import datetime
import json
import os
import shutil
import time

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook
from nbgrader.utils import parse_utc

from grader.nbgrader_plugins.received import ReceivedTimes
from tools import classroom as C

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")]
A = "a1"
FORGED = "2020-01-01 00:00:00.000000 UTC"


@pytest.fixture
def course(tmp_path):
    """A one-cell assignment, released to a throw-away exchange; ada and eve fetched it."""
    src = tmp_path / "src" / A
    src.mkdir(parents=True)
    answer = new_code_cell("x = 1  # the instructor's solution", id="answer")
    answer.metadata["nbgrader"] = {"grade": False, "grade_id": "answer", "locked": False,
                                   "schema_version": 3, "solution": True}
    nbformat.write(new_notebook(cells=[answer]), str(src / f"{A}.ipynb"))
    paths = C.build_course(str(tmp_path / "w"), str(tmp_path / "src"))
    for student in ("ada", "eve"):
        C.nbgrader(["db", "student", "add", student], paths.course)
    C.assign(paths)
    for student in ("ada", "eve"):
        C.nbgrader(["fetch_assignment", A, f"--student={student}"], C.student_home(paths, student))
    return paths


def submit(paths, student, text="x = 2"):
    home = C.student_home(paths, student)
    path = os.path.join(home, A, f"{A}.ipynb")
    nb = nbformat.read(path, as_version=4)
    nb.cells[0].source = text
    nbformat.write(nb, path)
    C.nbgrader(["submit", A, f"--student={student}"], home)
    return inbound(paths, student)[-1]


def inbound(paths, student):
    folder = os.path.join(paths.exchange, C.COURSE_ID, "inbound")
    return sorted(os.path.join(folder, n) for n in os.listdir(folder) if n.startswith(student))


def forge(folder):
    """What the red team did: the student's own timestamp, in the file and the folder's name."""
    with open(os.path.join(folder, "timestamp.txt"), "w") as fh:
        fh.write(FORGED)
    name = os.path.basename(folder).split("+")
    os.rename(folder, os.path.join(os.path.dirname(folder), "+".join(
        [name[0], name[1], FORGED, *name[3:]])))


def collected(paths, student):
    with open(os.path.join(paths.course, "submitted", student, A, "timestamp.txt")) as fh:
        return parse_utc(fh.read())


def test_a_rewritten_timestamp_is_flagged_and_the_exchanges_clock_is_used(course):
    before = datetime.datetime.now(datetime.UTC).replace(tzinfo=None)
    forge(submit(course, "eve"))
    submit(course, "ada")
    C.collect(course)
    for student in ("ada", "eve"):
        assert abs((collected(course, student) - before).total_seconds()) < 120
    times = ReceivedTimes()
    receipts = times.load(course.course)
    assert receipts[(A, "eve")].claimed == FORGED
    assert times.note(receipts[(A, "eve")]).startswith(f"timestamp.txt said {FORGED}, received ")
    assert times.note(receipts[(A, "ada")]) == ""


def test_the_same_content_sent_again_keeps_the_time_it_first_arrived(course):
    submit(course, "ada", "x = 3")
    C.collect(course)
    first = collected(course, "ada")
    time.sleep(1.1)
    submit(course, "ada", "x = 3")              # the same answer, later
    C.collect(course)
    assert collected(course, "ada") == first
    time.sleep(1.1)
    submit(course, "ada", "x = 4")              # a changed one is new
    C.collect(course)
    assert collected(course, "ada") > first
    got = nbformat.read(os.path.join(course.course, "submitted", "ada", A, f"{A}.ipynb"), 4)
    assert got.cells[0].source == "x = 4"


def test_nothing_but_regular_files_leaves_the_exchange(course):
    folder = submit(course, "eve")
    notebook = os.path.join(folder, f"{A}.ipynb")
    os.remove(notebook)                         # the instructor's solution, through a link
    os.symlink(os.path.join(course.exercises, A, f"{A}.ipynb"), notebook)
    os.remove(os.path.join(folder, "timestamp.txt"))
    os.symlink(os.path.join(course.course, "gradebook.db"), os.path.join(folder, "timestamp.txt"))
    os.remove(os.path.join(folder, "submission_secret.txt"))
    os.mkfifo(os.path.join(folder, "submission_secret.txt"))    # a pipe would hang a copy
    C.collect(course)
    got = os.path.join(course.course, "submitted", "eve", A)
    assert sorted(os.listdir(got)) == ["timestamp.txt"]        # only the course's own
    receipt = ReceivedTimes().load(course.course)[(A, "eve")]
    assert sorted(receipt.refused) == [f"{A}.ipynb", "submission_secret.txt", "timestamp.txt"]
    assert "gradebook" not in json.dumps(receipt.__dict__) and receipt.claimed.startswith("20")
    assert "not collected (not a regular file)" in ReceivedTimes().note(receipt)
    shutil.rmtree(got)
