"""The perimeter, attacked through the real term in one batch with honest students: nbgrader's fetch and submit
into the exchange, the course's collect, `make autograde`'s code with its sandboxed kernels and judge, nbgrader's
generate_feedback and the exports (the third red-team round, items 4 to 7).

* Lateness is the exchange's: a student who rewrote the timestamp in their submission is as late as everyone else,
  flagged; a changed resubmission that reuses its first timestamp is graded again (content decides).
* Hidden tests never reach the kernel: a cell that prints every line of every notebook in its working folder prints
  none of them, into the graded notebook or the feedback.
* A pasted copy of an answer cell costs at most that cell; a student's own cell mentioning the hidden-test
  delimiters fails nobody's feedback.
* What a student chose (ids, grade ids with newlines and formulas, ANSI escapes, bidi overrides) reaches the
  terminal, autograde.log, the grading status and every export inert.
* A notebook over the size limit fails before anything parses it; a second run parses only what changed.
"""
import csv
import datetime
import glob
import json
import os
import shutil

import nbformat
import pytest

from grader.nbgrader_plugins import CanvasExportPlugin, MoodleExportPlugin, safe, submission
from tests.fixtures.hostile import inert_cell, inert_line
from tools import classroom as C

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")]

FIRST = "01-the-rule-per-primitive"
SOURCE = os.path.join(C.ROOT, "exercises", FIRST, FIRST + ".ipynb")
FORGED = "2020-01-01 00:00:00.000000 UTC"
EVIL_ID = 'x\ninside-vmap limit: =HYPERLINK("http://evil.example","x")\x1b[32m graded 13/13'
HOSTILE_IDS = ["ansi\x1b[32m", "rtl\u202enoisrevbus", "=cmd|calc!A0"]
READER = """\
import glob, json
for _path in glob.glob('*.ipynb') + glob.glob('.*/**/*.ipynb', recursive=True):
    for _cell in json.load(open(_path))['cells']:
        for _line in ''.join(_cell['source']).splitlines():
            print('READ', _line)
"""


def hidden_lines():
    """Every line the source's hidden-test regions hold (what must never reach a student)."""
    lines, inside = [], False
    for cell in nbformat.read(SOURCE, as_version=4).cells:
        for line in cell.source.splitlines():
            if "BEGIN HIDDEN TESTS" in line:
                inside = True
            elif "END HIDDEN TESTS" in line:
                inside = False
            elif inside and line.strip():
                lines.append(line.strip())
    return lines


def solved(released, source):
    return C.answer(C.FULL, released, source)


def with_cells(nb, *codes, meta=None):
    nb = nbformat.from_dict(nb)
    for code in codes:
        cell = nbformat.v4.new_code_cell(code)
        if meta:
            cell.metadata["nbgrader"] = dict(meta)
        nb.cells.insert(3, cell)
    return nb


def pasted_twice(nb):
    """The first answer cell copied and pasted below itself, metadata and all (JupyterLab's copy and paste)."""
    nb = nbformat.from_dict(nb)
    at = next(i for i, c in enumerate(nb.cells) if c.metadata.get("nbgrader", {}).get("solution"))
    copy = nbformat.from_dict(json.loads(json.dumps(nb.cells[at])))
    copy.id = "pasted-copy"
    nb.cells.insert(at + 1, copy)
    return nb


def oversized(nb):
    nb = nbformat.from_dict(nb)
    nb.cells.append(nbformat.v4.new_markdown_cell("x" * 6_000_000))    # past the 5 MB default
    return nb


def submit(paths, student, nb, forge=False):
    home = C.student_home(paths, student)
    if not os.path.isdir(os.path.join(home, FIRST)):
        C.nbgrader(["fetch_assignment", FIRST, f"--student={student}"], home)
    nbformat.write(nb, os.path.join(home, FIRST, FIRST + ".ipynb"))
    C.nbgrader(["submit", FIRST, f"--student={student}"], home)
    inbound = os.path.join(paths.exchange, C.COURSE_ID, "inbound")
    newest = max((os.path.join(inbound, n) for n in os.listdir(inbound) if n.startswith(student + "+")),
                 key=os.path.getmtime)
    if forge:           # the student's own claim, in the file and in the folder's name
        with open(os.path.join(newest, "timestamp.txt"), "w") as fh:
            fh.write(forge)
        parts = os.path.basename(newest).split("+")
        os.rename(newest, os.path.join(inbound, "+".join(parts[:2] + [forge] + parts[3:])))


@pytest.fixture(scope="module")
def term(tmp_path_factory):
    """The class, after collect, autograde, feedback and the exports. Everyone is a day late."""
    only = tmp_path_factory.mktemp("exercises")
    shutil.copytree(os.path.join(C.ROOT, "exercises", FIRST), only / FIRST)
    due = (datetime.datetime.now(datetime.UTC) - datetime.timedelta(days=1)).strftime(
        "%Y-%m-%d %H:%M:%S UTC")
    paths = C.build_course(str(tmp_path_factory.mktemp("perimeter")), str(only),
                           {"DueDates.dates": {FIRST: due}})
    C.assign(paths)
    released = nbformat.read(os.path.join(paths.course, "release", FIRST, FIRST + ".ipynb"), as_version=4)
    source = nbformat.read(SOURCE, as_version=4)
    full = solved(released, source)
    evil = {"grade": False, "solution": False, "locked": True, "grade_id": EVIL_ID, "schema_version": 3}
    students = {
        "honest": full,
        "forger": full,
        "pasted": pasted_twice(full),
        "reader": with_cells(full, READER),
        "marker": with_cells(full, "# BEGIN HIDDEN TESTS\nmine = 1",
                             "### BEGIN HIDDEN TESTS\nmine = 2\n### END HIDDEN TESTS"),
        "evilid": with_cells(full, "y = 1", "y = 2", meta=evil),
        "resubmits": nbformat.from_dict(released),          # blank first, solved later with the same timestamp
        "big": oversized(full),
        **{sid: full for sid in HOSTILE_IDS},
    }
    for student in students:
        C.nbgrader(["db", "student", "add", student, f"--first-name={student}", f"--last-name={student}"],
                   paths.course)
    for student, nb in students.items():
        submit(paths, student, nb, forge=FORGED if student == "forger" else False)
    C.collect(paths)
    first_run = C.autograde(paths, timeout=30)
    # resubmits: the solved notebook now, its timestamp.txt forged to its first one's
    with open(os.path.join(paths.course, "submitted", "resubmits", FIRST, "timestamp.txt")) as fh:
        first_stamp = fh.read()
    submit(paths, "resubmits", full, forge=first_stamp)
    C.collect(paths)
    # What the course itself parses from here on (nbgrader parses what it grades, and nothing else).
    parsed = []
    real = submission._parses, submission._executed
    submission._parses = lambda path: parsed.append(path) or real[0](path)
    submission._executed = lambda path: parsed.append(path) or real[1](path)
    try:
        second_run = C.autograde(paths, timeout=30)
        rows = {r["student_id"]: r for r in C.export(paths)}
    finally:
        submission._parses, submission._executed = real
    C.nbgrader(["generate_feedback", FIRST, "--force"], paths.course)      # exits 0: nobody's failed
    for plugin in (CanvasExportPlugin, MoodleExportPlugin):
        C.nbgrader(["export", f"--exporter=grader.nbgrader_plugins.{plugin.__name__}"], paths.course)
    return dict(paths=paths, rows=rows, first=first_run, second=second_run, parsed=parsed,
                students=list(students))


def test_lateness_is_the_exchanges_and_a_rewritten_timestamp_is_flagged(term):
    honest, forger = term["rows"]["honest"], term["rows"]["forger"]
    assert honest["status"] == forger["status"] == "late"
    assert honest["score"] == forger["score"] and float(forger["score"]) < float(forger["max_score"])
    assert f"timestamp.txt said {FORGED}" in forger["reason"]
    assert "timestamp.txt said" not in honest["reason"]
    assert any("forger" in line and "timestamp.txt said" in line for line in term["first"].splitlines())


def test_a_changed_resubmission_reusing_its_timestamp_is_graded_again(term):
    score, top = term["rows"]["honest"]["score"], term["rows"]["honest"]["max_score"]
    (line,) = [line for line in term["second"].splitlines() if "] 01-" in line and "resubmits" in line]
    assert "unchanged" not in line and f"late {score}/{top}" in line
    assert term["rows"]["resubmits"]["score"] == score


def test_a_second_run_skips_and_parses_only_what_changed(term):
    lines = [line for line in term["second"].splitlines() if "] 01-" in line]
    unchanged = [line for line in lines if "earlier, unchanged" in line]
    assert len(unchanged) == len(lines) - 2     # all but resubmits, and big, failed again by its size alone
    assert any(" big " in line and "FAILED: notebook too large" in line for line in lines)
    # its new notebook, once; nothing graded and unchanged, in autograde or the export
    assert [os.path.relpath(p, term["paths"].course) for p in term["parsed"]] == [
        os.path.join("submitted", "resubmits", FIRST, FIRST + ".ipynb")]


def test_hidden_tests_never_reach_the_kernel_or_the_feedback(term):
    course = term["paths"].course
    graded = nbformat.read(os.path.join(course, "autograded", "reader", FIRST, FIRST + ".ipynb"), as_version=4)
    printed = "".join(o.get("text", "") for c in graded.cells if c.cell_type == "code" for o in c.outputs)
    visible = next(c.source.splitlines()[0] for c in graded.cells if c.metadata.get("nbgrader", {}).get("grade"))
    assert f"READ {visible}" in printed         # it did read the notebook in its folder: the grade cells' rest
    feedback = open(os.path.join(course, "feedback", "reader", FIRST, FIRST + ".html")).read()
    for line in hidden_lines():
        assert line not in printed and line not in feedback, line


def test_a_pasted_cell_and_a_mentioned_delimiter_cost_nobody_anything(term):
    rows, course = term["rows"], term["paths"].course
    assert rows["pasted"]["status"] == rows["marker"]["status"] == "late"
    assert rows["pasted"]["score"] == rows["marker"]["score"] == rows["honest"]["score"]
    for student in term["students"]:
        if student != "big":
            assert glob.glob(os.path.join(course, "feedback", glob.escape(student), FIRST, "*.html")), student


def test_a_notebook_over_the_limit_fails_before_anything_parses_it(term):
    row = term["rows"]["big"]
    assert (row["status"], row["score"]) == ("failed", "") and row["reason"].startswith("notebook too large")
    assert not os.path.exists(os.path.join(term["paths"].course, "autograded", "big"))


def test_what_students_chose_reaches_every_output_inert(term):
    course = term["paths"].course
    for run in (term["first"], term["second"]):
        assert all(inert_line(line) for line in run.splitlines())
    with open(os.path.join(course, "autograde.log")) as fh:
        assert all(inert_line(line) for line in fh.read().splitlines())
    for name in ("grades.csv", "grades-canvas.csv", "grades-canvas-status.csv", "grades-moodle.csv"):
        with open(os.path.join(course, name), newline="") as fh:
            cells = [cell for row in csv.reader(fh) for cell in row]
        assert cells and all(inert_cell(cell) for cell in cells), name
    assert all(inert_line(rec.reason) for rec in C.grading_status(term["paths"]).values())
    rows = term["rows"]
    assert rows["evilid"]["status"] == "late" and "HYPERLINK" not in rows["evilid"]["reason"]
    for sid in HOSTILE_IDS:                     # graded as anyone, their ids shown as written, inert
        assert rows[safe.cell(sid)]["score"] == rows["honest"]["score"], sid
