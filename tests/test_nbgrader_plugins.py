"""The course's nbgrader plugins, on gradebooks and folders built here with nbgrader's own API."""
import csv
import importlib.util
import json
import os
import pathlib
import shutil

import nbformat
import pytest
from nbconvert.preprocessors import ClearMetadataPreprocessor
from nbformat.v4 import new_code_cell, new_notebook, new_output
from nbgrader.api import Gradebook
from nbgrader.preprocessors import ClearHiddenTests, LimitOutput, SaveAutoGrades
from traitlets.config import Config
from traitlets.config.loader import PyFileConfigLoader

from grader.instructor.autograde import failure_reason
from grader.nbgrader_plugins import (FAILED, GRADED, GRADING, INTERRUPTED, KERNEL_DIED, MISSING,
                                     NEEDS_MANUAL, NO_NOTEBOOK, NOT_AUTOGRADED, NOTHING_SUBMITTED,
                                     STALE, TIMED_OUT, UNREADABLE, ClearHiddenTestsInFeedback,
                                     GradingStatus, StatusExportPlugin)

ROOT = pathlib.Path(__file__).resolve().parents[1]
# nbgrader's own gradebook code trips this SQLAlchemy warning when it creates submissions.
pytestmark = pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")
STAMP = "2026-01-05 10:00:00.000000 UTC"
LATER = "2026-01-06 10:00:00.000000 UTC"


# ---- a small course: one assignment "a1" (notebook "nb", cells g1: 3 points, g2: 2 points) ----
@pytest.fixture(scope="module")
def root(tmp_path_factory):
    return tmp_path_factory.mktemp("course")


@pytest.fixture(scope="module")
def gradebook(root):
    url = "sqlite:///" + str(root / "gradebook.db")
    with Gradebook(url, "inside-vmap") as gb:
        gb.add_assignment("a1")
        gb.add_notebook("nb", "a1")
        gb.add_grade_cell("g1", "nb", "a1", max_score=3, cell_type="code")
        gb.add_grade_cell("g2", "nb", "a1", max_score=2, cell_type="code")
        for s in ("graded", "manual", "late", "died", "nothing", "empty", "corrupt", "killed",
                  "plain", "stale", "resubmitted"):
            gb.add_student(s)
    yield url


def grade(url, student, g1, g2, needs_manual=False, penalty=0.0):
    with Gradebook(url, "inside-vmap") as gb:
        sub = gb.update_or_create_submission("a1", student)
        for g in sub.notebooks[0].grades:
            g.auto_score = {"g1": g1, "g2": g2}[g.name]
            g.needs_manual_grade = needs_manual and g.name == "g2"
        sub.notebooks[0].late_submission_penalty = penalty
        gb.db.commit()


def executed_nb():
    nb = new_notebook(cells=[new_code_cell("x = 1")])
    nb.cells[0].execution_count = 1
    return nb


def put(root, step, student, notebook=None, stamp=STAMP, raw=None):
    folder = root / step / student / "a1"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "timestamp.txt").write_text(stamp)
    if raw is not None:
        (folder / "nb.ipynb").write_text(raw)
    elif notebook is not None:
        nbformat.write(notebook, str(folder / "nb.ipynb"))


def export(root, **options):
    cfg = Config()
    cfg.CourseDirectory.root = str(root)
    plugin = StatusExportPlugin(config=cfg, to=str(root / "grades.csv"), **options)
    with Gradebook("sqlite:///" + str(root / "gradebook.db"), "inside-vmap") as gb:
        plugin.export(gb)
    with open(root / "grades.csv", newline="") as fh:
        return {r["student_id"]: r for r in csv.DictReader(fh)}


@pytest.fixture(scope="module")
def term(root, gradebook):
    """Every situation a submission can be in, with the status file autograde would write."""
    status = GradingStatus()
    for s in ("graded", "manual", "late", "plain", "stale", "resubmitted"):
        put(root, "submitted", s, new_notebook())
        put(root, "autograded", s, executed_nb())
        status.record(str(root), "a1", s, GRADED, "", STAMP)
    grade(gradebook, "graded", 3, 1)
    grade(gradebook, "manual", 3, 0, needs_manual=True)
    grade(gradebook, "late", 3, 2, penalty=1.0)
    grade(gradebook, "plain", 2, 2)
    grade(gradebook, "stale", 3, 2)
    grade(gradebook, "resubmitted", 3, 2)
    # failed: the kernel died; nbgrader removed the autograded folder and left None scores
    put(root, "submitted", "died", new_notebook())
    grade(gradebook, "died", None, None)
    status.record(str(root), "a1", "died", FAILED, KERNEL_DIED, STAMP)
    # a submitted folder without the notebook, and corrupt JSON
    put(root, "submitted", "empty")
    put(root, "submitted", "corrupt", raw='{"cells": [')
    # killed mid-grading: the sanitized (unexecuted) notebook is already in autograded/
    put(root, "submitted", "killed", new_notebook())
    put(root, "autograded", "killed", new_notebook())
    grade(gradebook, "killed", 3, None)
    status.record(str(root), "a1", "killed", GRADING, "", STAMP)
    # graded by a plain `nbgrader autograde`: no record at all
    status_file = root / "grading-status.json"
    raw = json.loads(status_file.read_text())
    del raw["assignments"]["a1"]["plain"]
    status_file.write_text(json.dumps(raw))
    # a newer submission collected after grading (the record is about the old one)
    put(root, "submitted", "stale", new_notebook(), stamp=LATER)
    # resubmitted and graded again by plain nbgrader: autograded/ carries the new timestamp
    put(root, "submitted", "resubmitted", new_notebook(), stamp=LATER)
    put(root, "autograded", "resubmitted", executed_nb(), stamp=LATER)
    return root


def test_every_enrolled_student_has_one_row(term):
    rows = export(term)
    with Gradebook("sqlite:///" + str(term / "gradebook.db"), "inside-vmap") as gb:
        assert set(rows) == {s.id for s in gb.students}
    assert all(r["assignment"] == "a1" and r["max_score"] == "5" for r in rows.values())


@pytest.mark.parametrize("student, score, status, reason", [
    ("graded", "4", GRADED, ""),
    ("manual", "3", NEEDS_MANUAL, ""),
    ("late", "4", GRADED, ""),                          # 5 points less the 1-point penalty
    ("plain", "4", GRADED, ""),                         # plain nbgrader autograde: no record
    ("died", "", FAILED, KERNEL_DIED),
    ("nothing", "", MISSING, NOTHING_SUBMITTED),
    ("empty", "", MISSING, NO_NOTEBOOK),
    ("corrupt", "", FAILED, UNREADABLE + " (nb.ipynb)"),
    ("killed", "", FAILED, INTERRUPTED),
    ("stale", "", FAILED, STALE),
    ("resubmitted", "5", GRADED, ""),
])
def test_each_row_tells_the_truth(term, student, score, status, reason):
    row = export(term)[student]
    assert (row["score"], row["status"], row["reason"]) == (score, status, reason)


def test_without_a_status_file_failures_are_still_not_zeros(term, tmp_path):
    shutil.copytree(term, tmp_path / "copy")
    os.remove(tmp_path / "copy" / "grading-status.json")
    rows = export(tmp_path / "copy")
    assert (rows["died"]["status"], rows["died"]["reason"]) == (FAILED, NOT_AUTOGRADED)
    assert rows["died"]["score"] == ""
    assert (rows["corrupt"]["status"], rows["nothing"]["status"]) == (FAILED, MISSING)
    assert rows["graded"]["score"] == "4"


def test_assignment_and_student_filters(term):
    rows = export(term, student=["graded", "died"])
    assert set(rows) == {"graded", "died"}
    assert export(term, assignment=["other"]) == {}


def test_the_columns(term):
    export(term)
    with open(term / "grades.csv") as fh:
        assert fh.readline().strip() == "assignment,student_id,score,max_score,status,reason"


def test_upstream_csv_export_shows_failures_as_zero(term):
    """Why the plugin exists: nbgrader's own CsvExportPlugin writes 0.0 for a dead kernel."""
    from nbgrader.plugins import CsvExportPlugin
    with Gradebook("sqlite:///" + str(term / "gradebook.db"), "inside-vmap") as gb:
        CsvExportPlugin(to=str(term / "upstream.csv")).export(gb)
    with open(term / "upstream.csv", newline="") as fh:
        upstream = {r["student_id"]: r for r in csv.DictReader(fh)}
    assert float(upstream["died"]["score"]) == 0.0 == float(upstream["nothing"]["score"])


# ---- the status file ----------------------------------------------------------------------
def test_status_records_replace_and_survive(tmp_path):
    status = GradingStatus()
    status.record(str(tmp_path), "a1", "s", GRADING, "", STAMP)
    status.record(str(tmp_path), "a1", "s", FAILED, TIMED_OUT, STAMP)
    (rec,) = status.load(str(tmp_path)).values()
    assert (rec.status, rec.reason, rec.timestamp) == (FAILED, TIMED_OUT, STAMP)
    assert [p.name for p in tmp_path.iterdir()] == ["grading-status.json"]   # no temp files


@pytest.mark.parametrize("text", ["{not json", "[]", '{"assignments": {"a1": {"s": {"x": 1}}}}'])
def test_an_unreadable_status_file_is_ignored(tmp_path, text):
    (tmp_path / "grading-status.json").write_text(text)
    assert GradingStatus().load(str(tmp_path)) == {}


def test_only_one_autograde_at_a_time(tmp_path):
    status = GradingStatus()
    with status.exclusive(str(tmp_path)):
        with pytest.raises(RuntimeError, match="another autograde"):
            with status.exclusive(str(tmp_path)):
                pass
    with status.exclusive(str(tmp_path)):
        pass


def test_the_status_file_is_configurable(tmp_path):
    cfg = Config()
    cfg.GradingStatus.path = "status/here.json"
    (tmp_path / "status").mkdir()
    GradingStatus(config=cfg).record(str(tmp_path), "a1", "s", GRADED)
    assert (tmp_path / "status" / "here.json").exists()


@pytest.mark.parametrize("log, reason", [
    ("[ERROR] Kernel died while waiting for execute reply.\nnbclient.exceptions.DeadKernelError: "
     "Kernel died", KERNEL_DIED),
    ("[ERROR] Timeout waiting for execute reply (10s).\n[ERROR] Interrupting kernel\n"
     "nbclient.exceptions.CellTimeoutError: A cell timed out", TIMED_OUT),
    ("nbformat.reader.NotJSONError: Notebook does not appear to be JSON", UNREADABLE),
    ("[ERROR] something else\nValueError: odd", "autograde error: ValueError: odd"),
])
def test_failure_reasons_from_nbgrader_logs(log, reason):
    assert failure_reason({"success": False, "log": log}) == reason


# ---- feedback without hidden tests --------------------------------------------------------
GRADE_META = {"nbgrader": {"grade": True, "grade_id": "spy", "locked": True, "points": 3,
                           "solution": False, "schema_version": 3}}
HIDDEN = "show(L1.check_spy(spy, hidden=True))"


def graded_cell():
    cell = new_code_cell("show(L1.check_spy(spy))\n### BEGIN HIDDEN TESTS\n" + HIDDEN +
                         "\n### END HIDDEN TESTS", metadata=GRADE_META)
    cell.outputs = [
        new_output("stream", name="stdout", text="Judge: FAILED check_spy: 1 of 4 case(s) wrong\n"
                   "  case: in_axes=0\n    expected: (0, (3,), (2, 3))\n    got:      None\n"
                   "    hint: Report the tracer as f sees it.\n"),
        new_output("error", ename="NameError", evalue="name 'spy' is not defined",
                   traceback=["\x1b[0;32m----> 3\x1b[0m show(L1\x1b[38;5;241m.\x1b[39m"
                              "check_spy(spy, hidden\x1b[38;5;241m=\x1b[39m\x1b[38;5;28m"
                              "True\x1b[39m))", "NameError: name 'spy' is not defined"]),
    ]
    return cell


def test_feedback_keeps_the_message_and_drops_the_hidden_test():
    nb = new_notebook(cells=[graded_cell()])
    nb, _ = ClearHiddenTestsInFeedback().preprocess(nb, {})
    cell = nb.cells[0]
    assert cell.source == "show(L1.check_spy(spy))"
    text = json.dumps(cell.outputs)
    assert "expected: (0, (3,), (2, 3))" in text and "hint: Report" in text
    assert "hidden" not in text.replace("[hidden test]", "")
    assert "[hidden test]" in cell.outputs[1]["traceback"][0]
    assert cell.outputs[1]["traceback"][1] == "NameError: name 'spy' is not defined"


def test_cells_without_hidden_tests_are_untouched():
    cell = graded_cell()
    cell.source = "show(L1.check_spy(spy))"
    before = json.dumps(cell.outputs)
    nb, _ = ClearHiddenTestsInFeedback().preprocess(new_notebook(cells=[cell]), {})
    assert json.dumps(nb.cells[0].outputs) == before


def test_feedback_preprocessor_is_a_clear_hidden_tests():
    assert issubclass(ClearHiddenTestsInFeedback, ClearHiddenTests)


# ---- the course's configuration ---------------------------------------------------------
@pytest.fixture(scope="module")
def course_config():
    return PyFileConfigLoader("nbgrader_config.py", path=str(ROOT / "course")).load_config()


def test_the_judge_runs_between_limit_output_and_save_autogrades(course_config):
    steps = [s if isinstance(s, str) else f"{s.__module__}.{s.__name__}"
             for s in course_config.Autograde.autograde_preprocessors]
    judge = steps.index("grader.judge.preprocessor.JudgeExercises")
    names = [s.rsplit(".", 1)[-1] for s in steps]
    assert names.index(LimitOutput.__name__) < judge < names.index(SaveAutoGrades.__name__)
    assert ClearMetadataPreprocessor.__name__ in names and "Execute" in names


def test_the_course_config_points_at_the_plugins(course_config):
    assert course_config.OverwriteCells.add_missing_cells is True
    assert course_config.Execute.timeout > 0
    assert course_config.ExportApp.plugin_class == "grader.nbgrader_plugins.StatusExportPlugin"
    feedback = [s if isinstance(s, str) else s.__name__
                for s in course_config.GenerateFeedback.preprocessors]
    assert feedback.index("grader.nbgrader_plugins.ClearHiddenTestsInFeedback") == 1
    for dotted in (course_config.ExportApp.plugin_class, feedback[1],
                   "grader.judge.preprocessor.JudgeExercises"):
        module, name = dotted.rsplit(".", 1)
        assert importlib.util.find_spec(module) is not None and name
