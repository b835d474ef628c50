"""LMS rosters into the gradebook through nbgrader's own import (grader.nbgrader_plugins.roster)."""
import os
import subprocess
import sys

import pytest
from nbgrader.api import Gradebook

from grader.nbgrader_plugins.roster import RosterError, convert

pytestmark = pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

CANVAS = ("\ufeffStudent,ID,SIS User ID,SIS Login ID,Section,Exercise 1 (12)\n"
          "    Points Possible,,,,,13\n"
          '"Lovelace, Ada",1001,U1,ada,Section 1,13\n'
          '"Noether, Emmy",1002,U2,emmy@uni.example,Section 2,\n'
          '"Student, Test",1003,,,,\n')
MOODLE = ("First name,Last name,ID number,Email address,Username\n"
          "Ada,Lovelace,77,ada@uni.example,ada\n")
NBGRADER = "id,first_name,last_name,email,lms_user_id\nada,Ada,Lovelace,,9\n"


def write(tmp_path, text, name="roster.csv"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_a_canvas_gradebook_export(tmp_path):
    fmt, students, skipped = convert(write(tmp_path, CANVAS))
    assert fmt == "Canvas gradebook export"
    assert students == [
        {"id": "ada", "lms_user_id": "1001", "email": "", "last_name": "Lovelace",
         "first_name": "Ada"},
        {"id": "emmy@uni.example", "lms_user_id": "1002", "email": "emmy@uni.example",
         "last_name": "Noether", "first_name": "Emmy"}]
    assert skipped == ["line 2: Canvas's Points Possible row", "line 5: no SIS Login ID"]


def test_a_moodle_download_and_nbgraders_own_columns(tmp_path):
    fmt, students, _ = convert(write(tmp_path, MOODLE))
    assert (fmt, students) == ("Moodle download", [{
        "id": "ada", "first_name": "Ada", "last_name": "Lovelace", "email": "ada@uni.example",
        "lms_user_id": "77"}])
    fmt, students, _ = convert(write(tmp_path, NBGRADER))
    assert (fmt, students[0]["id"], students[0]["lms_user_id"]) == ("nbgrader", "ada", "9")


def test_another_id_column(tmp_path):
    _, students, _ = convert(write(tmp_path, CANVAS), id_column="SIS User ID")
    assert [s["id"] for s in students] == ["U1", "U2"]


@pytest.mark.parametrize("text, message", [
    ("name,mail\nx,y\n", "cannot tell what roster this is"),
    ("First name,Last name,Email address\nAda,L,a@b\n", "has no 'Username' column"),
])
def test_a_roster_it_cannot_read_is_refused_saying_why(tmp_path, text, message):
    with pytest.raises(RosterError, match=message):
        convert(write(tmp_path, text))


def test_the_import_is_nbgraders_and_says_what_it_did(tmp_path):
    course = tmp_path / "course"
    course.mkdir()
    (course / "nbgrader_config.py").write_text(
        "c = get_config()\nc.CourseDirectory.course_id = 'inside-vmap'\n"
        f"c.CourseDirectory.root = {str(course)!r}\n")
    roster = write(tmp_path, CANVAS)
    env = dict(os.environ, PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"])
    proc = subprocess.run([sys.executable, "-m", "grader.instructor", "roster", roster],
                          cwd=course, capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "imported 2 students from" in proc.stdout and "SIS Login ID -> id" in proc.stdout
    assert "skipped line 5: no SIS Login ID" in proc.stdout
    assert "Creating/updating" not in proc.stderr        # one line, not one per student
    with Gradebook("sqlite:///" + str(course / "gradebook.db"), "inside-vmap") as gb:
        ada = gb.find_student("ada")
        assert (ada.first_name, ada.last_name, ada.lms_user_id) == ("Ada", "Lovelace", "1001")
        assert len(gb.students) == 2
