"""End to end: a simulated class through release, submit, collect, autograde, feedback, export.

The same scenario as `make demo` (tools/classroom/), in a throw-away course built from
the real exercises; every student's row of the export is asserted exactly. Then the gradebook's
safety: re-running autograde changes nothing, and a run killed half-way loses nothing.
"""
import glob
import html
import os
import re
import shutil
import signal
import subprocess
import sys
import time

import nbformat
import pytest
from nbgrader.api import Gradebook

from grader.nbgrader_plugins import BLANK, FAILED, GRADED, GRADING, INTERRUPTED, MISSING, NOT_AUTOGRADED, GradingStatus
from tools import classroom as C

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")]

TIMEOUT = 10                    # Execute.timeout here: the looping student costs this plus ~6 s
FIRST = "01-the-rule-per-primitive"


# ---- one fixture per throw-away resource, then the term ------------------------------------
@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """A copy of course/nbgrader_config.py beside a copy of exercises/, and the students' homes."""
    return C.build_course(str(tmp_path_factory.mktemp("term")))


@pytest.fixture(scope="module")
def exchange(course):
    """The nbgrader exchange of this course, empty and world-writable as nbgrader wants it."""
    assert os.listdir(course.exchange) == []
    return course.exchange


@pytest.fixture(scope="module")
def gradebook(course):
    """The gradebook, with the class enrolled (the roster the export reports on)."""
    C.enrol(course)
    return os.path.join(course.course, "gradebook.db")


@pytest.fixture(scope="module")
def collected(course, exchange, gradebook):
    """Released, submitted by every student, collected; a copy of the course at this point."""
    C.assign(course)
    C.submit_all(course)
    C.collect(course)
    snapshot = os.path.join(course.work, "collected")
    shutil.copytree(course.course, snapshot)
    return snapshot


@pytest.fixture(scope="module")
def term(course, collected):
    """Autograde, feedback and export; the export's rows and what autograde printed."""
    start = time.monotonic()
    printed = C.autograde(course, TIMEOUT)
    graded_in = time.monotonic() - start
    C.feedback(course)
    rows = C.export(course)
    return {"rows": rows, "printed": printed, "autograde_s": graded_in}


def scores(db_path):
    """Every submission's score and every grade's auto score, as nbgrader's gradebook has them."""
    with Gradebook("sqlite:///" + db_path, C.COURSE_ID) as gb:
        out = {}
        for a in gb.assignments:
            for sub in a.submissions:
                out[a.name, sub.student.id] = (sub.score, sub.needs_manual_grade, sorted(
                    (g.name, g.auto_score, g.manual_score) for nb in sub.notebooks
                    for g in nb.grades))
        return out


# ---- the grades ---------------------------------------------------------------------------
def test_every_student_scores_exactly_as_expected(course, term):
    want = C.expected(course)
    got = {(r["assignment"], r["student_id"]): r for r in term["rows"]}
    assert set(got) == set(want), "every enrolled student has a row for every assignment"
    for key, exp in sorted(want.items()):
        row = got[key]
        score = None if row["score"] == "" else float(row["score"])
        assert (score, float(row["max_score"]), row["status"], row["reason"]) == \
            (exp.score, exp.max_score, exp.status, exp.reason), key


def test_expected_scores_come_from_the_source(course):
    want = C.expected(course)
    for a in C.assignments(course.exercises):
        source = nbformat.read(os.path.join(course.exercises, a, a + ".ipynb"), as_version=4)
        assert want[a, "ada"].score == C.max_score(source) > 0
        assert 0 < want[a, "cleo"].score == C.partial_score(source) < C.max_score(source)
        assert want[a, "ben"].score == 0


def test_failed_or_missing_is_never_a_plain_zero(term):
    for row in term["rows"]:
        if row["status"] in (FAILED, MISSING):
            assert row["score"] == "" and row["reason"], row
        else:
            assert row["score"] != "", row


def table(printed):
    """The closing table's counts: {label: count}."""
    return {m.group(1).strip(): int(m.group(2)) for m in
            re.finditer(r"^  ([a-z][a-z :()]+?)\s+(\d+)$", printed, re.M)}


def test_one_bad_submission_never_stops_the_batch(term):
    printed = term["printed"]
    assert "FAILED 01-the-rule-per-primitive dev: kernel died" in printed
    assert "FAILED 01-the-rule-per-primitive eve: timed out" in printed
    assert "FAILED 01-the-rule-per-primitive finn: unreadable notebook" in printed
    # everyone after a failure was still graded: one line per submission, then the table
    progress = [line for line in printed.splitlines() if line.lstrip().startswith("[")]
    n = len(C.assignments(os.path.join(C.ROOT, "exercises")))
    # ada, ben and cleo hand in every assignment; dev, eve, finn and gus the first only
    assert len(progress) == 3 * n + 4
    assert sum(" graded " in p or " blank " in p for p in progress) == 3 * n
    # ada and cleo graded, ben blank (once per assignment); dev, eve, finn failed; gus's empty
    # submission and hana are missing the first, and all but ada, ben and cleo the others
    assert table(printed) == {"graded": 2 * n, "blank (unchanged release)": n,
                              "flagged: needs manual grading": 0, "failed": 3,
                              "missing": 2 + 5 * (n - 1)}, printed
    assert "slowest: " in printed and "To connect another client" not in printed


def test_the_grading_status_records_every_submission(course, term):
    records = C.grading_status(course)
    assert {s for (a, s), r in records.items() if r.status == FAILED} == {"dev", "eve", "finn"}
    assert not [k for k, r in records.items() if r.status == GRADING]


# ---- feedback -----------------------------------------------------------------------------
def feedback_files(course, student, assignment):
    """The feedback HTML the student fetched (nbgrader fetch_feedback)."""
    return glob.glob(os.path.join(course.home(student), assignment, "feedback", "*", "*.html"))


def hidden_lines(course, assignment):
    """Lines of the source's hidden-test regions that appear nowhere outside them."""
    source = nbformat.read(os.path.join(course.exercises, assignment, assignment + ".ipynb"),
                           as_version=4)
    hidden, visible = set(), set()
    for cell in source.cells:
        inside = False
        for line in cell.source.splitlines():
            if "BEGIN HIDDEN TESTS" in line or "END HIDDEN TESTS" in line:
                inside = "BEGIN" in line
            elif line.strip():
                (hidden if inside else visible).add(line.strip())
    return hidden - visible


def page_text(path):
    """What a reader of the HTML sees: tags (syntax highlighting splits lines) removed."""
    with open(path, encoding="utf-8") as fh:
        return html.unescape(re.sub(r"<[^>]+>", "", fh.read()))


def test_students_receive_feedback_for_every_submission(course, term):
    for row in term["rows"]:
        files = feedback_files(course, row["student_id"], row["assignment"])
        assert bool(files) == (row["status"] in (GRADED, BLANK, FAILED)), row
        if row["status"] == FAILED:     # a kernel that died, a timeout, an unreadable notebook
            (path,) = files
            text = page_text(path)
            assert "could not be graded" in text and row["reason"] in text, text
            assert "submit again" in text and "Traceback" not in text, text


def test_feedback_teaches_without_leaking_hidden_tests(course, term):
    for a in C.assignments(course.exercises):
        secret = hidden_lines(course, a)
        assert secret
        for student in ("ada", "ben", "cleo"):
            (path,) = feedback_files(course, student, a)
            text = page_text(path)
            assert "HIDDEN TESTS" not in text
            assert [s for s in secret if s in text] == [], (student, a)
        partial = page_text(feedback_files(course, "cleo", a)[0])
        # every failed check carries the judge's message: what was expected, what came back, a hint
        assert "FAILED check_" in partial
        assert "expected:" in partial and "got:" in partial and "hint:" in partial
        assert "show(L" in partial          # visible tests stay visible


# ---- gradebook safety ---------------------------------------------------------------------
def test_the_judge_is_warmed_once_on_solutions_that_pass_their_hidden_cases(term):
    warmed = [line for line in term["printed"].splitlines() if "instructor's solutions" in line]
    assert len(warmed) == 1 and "judged" in warmed[0], term["printed"]
    assert "WARNING" not in term["printed"]


def test_rerunning_autograde_is_idempotent(course, term):
    before = scores(os.path.join(course.course, "gradebook.db"))
    status_before = C.grading_status(course)
    printed = C.autograde(course, TIMEOUT)
    progress = [line for line in printed.splitlines() if line.lstrip().startswith("[")]
    assert progress and all("unchanged" in p or "missing:" in p for p in progress), printed
    assert "instructor's solutions" not in printed          # nothing to grade, nothing to warm
    assert scores(os.path.join(course.course, "gradebook.db")) == before
    after = C.grading_status(course)
    assert {k: (r.status, r.reason) for k, r in after.items()} == \
        {k: (r.status, r.reason) for k, r in status_before.items()}


@pytest.fixture
def killable(course, collected, tmp_path):
    """A fresh copy of the collected course with three students' first assignment only."""
    work = C.Paths(str(tmp_path))
    shutil.copytree(collected, work.course)
    os.symlink(course.exercises, work.exercises)
    for path in glob.glob(os.path.join(work.course, "submitted", "*", "*")):
        student, assignment = path.split(os.sep)[-2:]
        if assignment != FIRST or student not in ("ada", "ben", "cleo"):
            shutil.rmtree(path)
    return work


def test_a_killed_autograde_loses_nothing(course, term, killable):
    env = dict(os.environ, JAX_PLATFORMS="cpu",
               PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    proc = subprocess.Popen([sys.executable, "-m", "grader.instructor", "autograde",
                             f"--Execute.timeout={TIMEOUT}"], cwd=killable.course, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        # Killed once one student is graded and the next is under way, whatever the machine's
        # load: the grading status says so (a fixed pause once lost the race on a busy machine).
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            records = C.grading_status(killable).values()
            if any(r.status == GRADED for r in records) and any(r.status == GRADING
                                                                for r in records):
                break
            time.sleep(0.05)
        assert proc.poll() is None, "autograde finished before it could be killed"
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()

    # Killed: nobody is half-recorded. The student being graded is "failed" with the reason to
    # run again, never a partial score.
    rows = C.export(killable)
    clean = {(r["assignment"], r["student_id"]): r for r in term["rows"]}
    for row in rows:
        key = (row["assignment"], row["student_id"])
        if row["status"] in (GRADED, BLANK):
            assert row["score"] == clean[key]["score"], row
        elif key[0] == FIRST and key[1] in ("ada", "ben", "cleo"):
            assert row["status"] == FAILED and row["reason"] in (INTERRUPTED, NOT_AUTOGRADED), row
    assert any(r["status"] in (GRADED, BLANK) for r in rows)
    assert any(r["status"] == FAILED and r["reason"] == INTERRUPTED for r in rows)

    # Re-run: the same gradebook as the clean run, for every student.
    C.autograde(killable, TIMEOUT)
    want = {k: v for k, v in scores(os.path.join(course.course, "gradebook.db")).items()
            if k[0] == FIRST and k[1] in ("ada", "ben", "cleo")}
    got = scores(os.path.join(killable.course, "gradebook.db"))
    assert {k: got[k] for k in want} == want
    # And once more: nothing changes.
    printed = C.autograde(killable, TIMEOUT)
    progress = [line for line in printed.splitlines() if line.lstrip().startswith("[")]
    assert len(progress) == 3 and all("earlier, unchanged" in p for p in progress), printed
    assert scores(os.path.join(killable.course, "gradebook.db")) == got


def test_a_second_autograde_waits_for_the_first(course, term, tmp_path):
    """While one run holds the gradebook, another says who holds it and waits; then it runs,
    and finds nothing left to grade."""
    env = dict(os.environ, JAX_PLATFORMS="cpu",
               PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    out = tmp_path / "second.out"
    with GradingStatus().exclusive(course.course):
        with open(out, "w") as fh:
            proc = subprocess.Popen([sys.executable, "-m", "grader.instructor", "autograde",
                                     f"--Execute.timeout={TIMEOUT}"], cwd=course.course, env=env,
                                    stdout=fh, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 120
        while "waiting for another autograde" not in out.read_text():
            assert proc.poll() is None and time.monotonic() < deadline, out.read_text()
            time.sleep(0.2)
        time.sleep(1.0)
        assert proc.poll() is None, "it did not wait"
    assert proc.wait(timeout=300) == 0, out.read_text()
    progress = [line for line in out.read_text().splitlines() if line.lstrip().startswith("[")]
    assert progress and all("unchanged" in p or "missing:" in p for p in progress), progress
