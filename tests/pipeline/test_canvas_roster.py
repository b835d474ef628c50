"""A Canvas gradebook download -> ``make roster`` -> ``make export FORMAT=canvas``: the file
Canvas re-imports carries every roster field of every student (SIS User ID, SIS Login ID = the
nbgrader id, Section) and lands in the gradebook's own assignment columns."""
import csv
import os
import shutil
import subprocess

import pytest
from nbgrader.api import Gradebook

from tools import classroom as C

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning"),
              pytest.mark.skipif(shutil.which("make") is None, reason="no make")]

STUDENTS = [("Lovelace, Ada", "1001", "U0001", "ada", "Section A"),
            ("Noether, Emmy", "1002", "U0002", "emmy", "Section B"),
            ("Turing, Alan", "1003", "", "alan", "Section A"),
            ("Hopper, Grace", "1004", "U0004", "grace", "")]
COLUMNS = ["Exercises 1 (5501)", "Exercises 2 (5502)", "Exercises 3 (5503)",
           "Exercises 4 (5504)"]


def canvas_download(path):
    """What Canvas's "Export entire gradebook" gives, as far as an import reads it."""
    with open(path, "w", newline="", encoding="utf-8-sig") as fh:
        out = csv.writer(fh)
        out.writerow(["Student", "ID", "SIS User ID", "SIS Login ID", "Section", *COLUMNS,
                      "Current Score", "Final Score"])
        out.writerow(["    Points Possible", "", "", "", "", "13", "12", "14", "12", "", ""])
        for s in STUDENTS:
            out.writerow([*s, "", "", "", "", "", ""])
        out.writerow(["Student, Test", "1999", "", "", "", "", "", "", "", "", ""])


def make(course, *args):
    cmd = ["make", "--no-print-directory", "-C", C.ROOT, "-o", ".venv/.installed", "-o",
           ".venv/.installed-all", *args, f"COURSE={course.course}"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("MAKE")}
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc.stdout + proc.stderr


def test_the_canvas_file_matches_the_roster_it_came_from(tmp_path):
    course = C.build_course(str(tmp_path / "term"))
    roster = str(tmp_path / "canvas.csv")
    canvas_download(roster)
    said = make(course, "roster", f"FILE={roster}")
    assert "-> email (none held one)" in said, said          # no email claimed that was not kept
    with Gradebook("sqlite:///" + os.path.join(course.course, "gradebook.db"), C.COURSE_ID) as gb:
        for a in C.assignments(course.exercises):
            gb.add_assignment(a)
    make(course, "export", "FORMAT=canvas")
    with open(os.path.join(course.course, "grades-canvas.csv"), newline="",
              encoding="utf-8") as fh:
        head, points, *body = list(csv.reader(fh))
    assert head == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", *COLUMNS]
    assert points[0] == "Points Possible"
    assert sorted(tuple(r[:5]) for r in body) == sorted(STUDENTS)      # the Test Student is not
    assert all(r[5:] == [""] * len(COLUMNS) for r in body)              # nothing submitted yet
