"""docs/instructors.md's term, command by command as it types them, for a small simulated class.

Each ``make`` line of docs/instructors.md's "A whole term" block runs as written, with three things added so
the test touches nothing of the real course: ``COURSE=`` a throw-away copy of course/ (whose
nbgrader_config.py sets its own exchange, where an instructor would set it), ``SIM=`` a throw-away
simulation folder (the guide's ``build/class``), and ``N=4`` students instead of 200. The copy's
config also gives the second assignment a due date a day and a half ago, so its submissions are
late. Then the Canvas file is checked against Canvas's import format and the scenario's scores,
and a manual grade shows up as ``overridden``. The copy holds the first two assignments (one on
time, one late): the commands are what is tested here; every assignment's grading is
tests/pipeline/test_class.py's.
"""
import csv
import datetime
import os
import re
import shutil
import subprocess

import nbformat
import pytest
from nbgrader.api import Gradebook

from grader.nbgrader_plugins import BLANK, GRADED, LATE, MISSING, OVERRIDDEN
from tools import classroom as C
from tools.classroom import simclass

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning"),
              pytest.mark.skipif(shutil.which("make") is None, reason="no make")]
README = os.path.join(C.ROOT, "docs", "instructors.md")
N = 4                                   # full, partial, blank, never submits (simclass.PATTERN)


def readme_term() -> list[str]:
    """The ``make`` lines of the guide's term block, comments dropped."""
    text = open(README, encoding="utf-8").read()
    after = text[text.index("**A whole term**"):].splitlines()
    first = next(i for i, line in enumerate(after) if line.startswith("    make "))
    block = []                          # the term's code block: its indented lines, to its end
    for line in after[first:]:
        if line.strip() and not line.startswith("    "):
            break
        block.append(line)
    lines = [line.strip().split("  #")[0].strip() for line in block
             if line.startswith("    make ")]
    assert len(lines) >= 8, lines
    return lines


def test_the_readme_term_covers_every_step():
    targets = [line.split()[1] for line in readme_term()]
    assert targets == ["class-roster", "roster", "assign", "class-submit", "collect", "autograde",
                       "feedback", "export"]


@pytest.fixture(scope="module")
def term(tmp_path_factory):
    """The guide's commands, run; the course, the simulation folder and what each printed."""
    work = tmp_path_factory.mktemp("term")
    due = datetime.datetime.now(datetime.UTC) - datetime.timedelta(hours=36)
    names = C.assignments(os.path.join(C.ROOT, "exercises"))[:2]       # on time, and late
    paths = C.build_course(str(work), C.some_exercises(str(work), names), settings={
        "DueDates.dates": {names[1]: due.strftime("%Y-%m-%d %H:%M:%S UTC")}})
    sim = os.path.join(paths.work, "sim")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MAKE")}
    printed = {}
    for line in readme_term():
        line = line.replace("N=200", f"N={N}").replace("build/class", sim)
        # -o: never rebuild the venv from inside a test
        cmd = ["make", "--no-print-directory", "-C", C.ROOT, "-o", ".venv/.installed", "-o", ".venv/.installed-all",
               *line.split()[1:], f"COURSE={paths.course}", f"SIM={sim}"]
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900)
        assert proc.returncode == 0, f"{line}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
        printed[line.split()[1]] = proc.stdout + proc.stderr
    return {"paths": paths, "sim": sim, "printed": printed, "names": names}


def expected_scores(paths, names):
    """{(assignment, student): (score, status)} of the simulated kinds, from the sources."""
    out = {}
    for i, a in enumerate(names):
        source = nbformat.read(os.path.join(paths.exercises, a, a + ".ipynb"), as_version=4)
        top, part = C.max_score(source), C.partial_score(source)
        late = 0.8 if i == 1 else 1.0                   # 36 h late: two started days, 10% each
        for k in range(N):
            sid, kind = f"s{k + 1:03d}", simclass.kind_of(k)
            out[a, sid] = {C.FULL: (top * late, LATE if i == 1 else GRADED),
                           C.PARTIAL: (part * late, LATE if i == 1 else GRADED),
                           C.BLANK: (0.0, BLANK), C.NEVER: (None, MISSING)}[kind]
    return out


def rows_of(path):
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.reader(fh))


def test_every_command_says_what_it_did(term):
    p = term["printed"]
    assert f"{N} simulated students" in p["class-roster"]
    assert f"imported {N} students" in p["roster"] and "SIS Login ID -> id" in p["roster"]
    assert "due " + term["names"][1] in p["assign"] and "writable by every user" in p["assign"]
    assert "handed in" in p["class-submit"]
    assert "To connect another client" not in p["autograde"]        # banners go to the log
    # the summary's counts, from the scenario (one assignment late, the others on time)
    statuses = [status for _, status in expected_scores(term["paths"], term["names"]).values()]
    for label, status in (("graded", GRADED), ("late \\(penalty applied\\)", LATE),
                          ("blank \\(unchanged release\\)", BLANK), ("missing", MISSING)):
        count = statuses.count(status)
        assert re.search(rf"^\s+{label}\s+{count}$", p["autograde"], re.M), (label, count, p["autograde"])
    assert "slowest:" in p["autograde"]
    assert "grades-canvas.csv" in p["export"] and "grades-canvas-status.csv" in p["export"]


def test_the_canvas_file_is_what_canvas_imports(term):
    paths, names = term["paths"], term["names"]
    head, points, *body = rows_of(os.path.join(paths.course, "grades-canvas.csv"))
    assert head == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"] + names
    assert points[0] == "Points Possible"
    assert len(body) == N
    want = expected_scores(paths, names)
    roster = {r[3]: r for r in rows_of(os.path.join(term["sim"], "roster.csv"))[1:]}
    for row in body:
        sid = next(s for s, r in roster.items() if r[1] == row[1])  # Canvas's ID: the key
        assert row[0] == roster[sid][0]                               # "Last, First"
        for a, cell in zip(names, row[5:]):
            score, _ = want[a, sid]
            assert cell == ("" if score is None else f"{score:g}"), (a, sid)


def test_the_companion_file_has_every_status(term):
    paths, names = term["paths"], term["names"]
    want = expected_scores(paths, names)
    with open(os.path.join(paths.course, "grades-canvas-status.csv"), newline="") as fh:
        got = {(r["assignment"], r["student_id"]): r for r in csv.DictReader(fh)}
    assert set(got) == set(want)
    for key, (_score, status) in want.items():
        assert got[key]["status"] == status, (key, got[key])
        if status == LATE:
            assert got[key]["reason"].startswith("late by 1 d 12 h; penalty"), got[key]


def test_a_manual_grade_shows_as_overridden(term):
    """What the formgrader does when a grader changes a score: a manual_score on the grade."""
    paths, first = term["paths"], term["names"][0]
    with Gradebook("sqlite:///" + os.path.join(paths.course, "gradebook.db"), C.COURSE_ID) as gb:
        grade = gb.find_submission(first, "s002").notebooks[0].grades[-1]
        grade.manual_score, name = grade.max_score, grade.name
        gb.db.commit()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MAKE")}
    out = subprocess.run(["make", "--no-print-directory", "-C", C.ROOT, "-o", ".venv/.installed",
                          "-o", ".venv/.installed-all", "export", f"COURSE={paths.course}"],
                         capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "grades.csv" in out.stdout
    with open(os.path.join(paths.course, "grades.csv"), newline="") as fh:
        row = next(r for r in csv.DictReader(fh) if (r["assignment"], r["student_id"]) ==
                   (first, "s002"))
    assert row["status"] == OVERRIDDEN and row["reason"].startswith(f"manual grade: {name} "), row
