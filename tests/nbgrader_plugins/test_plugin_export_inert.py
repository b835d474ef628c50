"""The exports with every string of the hostile corpus (tests/fixtures/hostile.py) as a student's
name, email, LMS id and as the reasons their answers got (a judge's flag, a failure): no cell of
any file a spreadsheet would run or that holds a control character, and every reason still there."""
import pytest
from nbformat.v4 import new_notebook
from nbgrader.api import Gradebook

from grader.nbgrader_plugins import (
    FAILED,
    GRADED,
    JUDGE_FLAG,
    CanvasExportPlugin,
    GradingStatus,
    MoodleExportPlugin,
    StatusExportPlugin,
)
from tests.fixtures.hostile import HOSTILE, inert_cell
from tests.nbgrader_plugins.test_plugin_export import COURSE, STAMP, course, executed_nb, export, put, read

pytestmark = pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")


@pytest.fixture(scope="module")
def hostile_term(tmp_path_factory):
    """Students whose names, emails and LMS ids, and whose answers' reasons (a judge's flag, a
    failure), are each string of the hostile corpus."""
    root = tmp_path_factory.mktemp("hostile")
    url = "sqlite:///" + str(root / "gradebook.db")
    with Gradebook(url, COURSE) as gb:
        gb.add_assignment("a1")
        gb.add_notebook("nb", "a1")
        gb.add_solution_cell("s1", "nb", "a1")
        gb.add_grade_cell("g1", "nb", "a1", max_score=3, cell_type="code")
    status = GradingStatus()
    for i, text in enumerate(HOSTILE):
        sid = f"s{i:02d}"
        with Gradebook(url, COURSE) as gb:
            gb.add_student(sid, first_name=text, last_name=text, email=text, lms_user_id=text)
        put(root, "submitted", sid, new_notebook())
        if i % 2:       # failed, with the reason the student's code made an exception say
            status.record(course(root), "a1", sid, FAILED, "autograde error: KeyError: " + text,
                          STAMP)
            continue
        put(root, "autograded", sid, executed_nb())
        status.record(course(root), "a1", sid, GRADED, "", STAMP)
        with Gradebook(url, COURSE) as gb:
            sub = gb.update_or_create_submission("a1", sid, timestamp=STAMP)
            sub.notebooks[0].grades[0].needs_manual_grade = True
            gb.find_comment("s1", "nb", "a1", sid).auto_comment = JUDGE_FLAG + text
            gb.db.commit()
    return root


@pytest.mark.parametrize("plugin, files", [
    (StatusExportPlugin, ["grades.csv"]),
    (CanvasExportPlugin, ["grades-canvas.csv", "grades-canvas-status.csv"]),
    (MoodleExportPlugin, ["grades-moodle.csv"]),
])
def test_no_cell_of_any_file_runs_in_a_spreadsheet_or_acts(hostile_term, plugin, files):
    export(hostile_term, plugin)
    for name in files:
        cells = [c for row in read(hostile_term / name) for c in row]
        assert cells and all(inert_cell(c) for c in cells), name
    if plugin is StatusExportPlugin:
        reasons = [r[5] for r in read(hostile_term / "grades.csv")[1:]]
        assert len(reasons) == len(HOSTILE) and all(reasons)    # every reason is still there
