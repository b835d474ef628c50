"""End to end: the course's own cells, autograded, show no error to a student.

While grading, the kernel holds only the lessons' kits (grader.judge.kit_tree): a course cell
that prints a listing from the trusted side (``print(L2.format_mv_calls())``, ``for case in
L4.visible_cases(...)``) once raised "... is not available while grading" in every student's
feedback, and the NameErrors after it. An honest and a blank student hand in every assignment;
in nbgrader's autograded notebooks and in the feedback HTML they fetch, no cell they did not
write holds an error, and the judge's verdicts quote no traceback.
"""
import glob
import os

import nbformat
import pytest

from grader.lessons import NOT_SHOWN
from tools import classroom as C

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")]

STUDENTS = (C.Student("ada", C.FULL), C.Student("ben", C.BLANK))
# What a course cell's failure printed into the feedback.
SIGNS = ("Traceback (most recent call last)", "is not available while grading", "NameError:",
         "AttributeError:")


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    course = C.build_course(str(tmp_path_factory.mktemp("cells")))
    C.enrol(course, STUDENTS)
    C.assign(course)
    C.submit_all(course, STUDENTS)
    C.collect(course)
    C.autograde(course, 60)
    C.feedback(course, STUDENTS)
    return course


def _course_cells(nb):
    """The code cells the student did not write: every one but the solution cells."""
    return [c for c in nb.cells if c.cell_type == "code"
            and not c.metadata.get("nbgrader", {}).get("solution")]


def _text(output) -> str:
    if output.output_type == "stream":
        return output.text
    if output.output_type == "error":
        return "\n".join([output.ename, output.evalue, *output.traceback])
    return "\n".join(str(v) for v in output.get("data", {}).values())


@pytest.mark.parametrize("student", [s.id for s in STUDENTS])
def test_no_course_cell_shows_an_error(graded, student):
    notebooks = sorted(glob.glob(os.path.join(graded.course, "autograded", student, "*",
                                              "*.ipynb")))
    assert len(notebooks) == len(C.assignments(graded.exercises))
    notes = 0
    for path in notebooks:
        nb = nbformat.read(path, as_version=4)
        for cell in _course_cells(nb):
            grade = cell.metadata.get("nbgrader", {}).get("grade")
            for out in cell.outputs:
                text = _text(out)
                where = (os.path.basename(path), cell.source[:60])
                assert not any(s in text for s in SIGNS), (where, text[:500])
                if not grade:      # a grade cell's error is the judge's verdict, scored 0
                    assert out.output_type != "error", (where, text[:500])
                    assert not (out.output_type == "stream" and out.name == "stderr"), \
                        (where, text[:500])
                notes += NOT_SHOWN.partition("}: ")[2][:30] in text
    assert notes >= 4, "the course's listings say, in one line, why they are not shown"


@pytest.mark.parametrize("student", [s.id for s in STUDENTS])
def test_the_feedback_html_shows_no_error_from_a_course_cell(graded, student):
    files = sorted(glob.glob(os.path.join(graded.home(student), "*", "feedback", "*", "*.html")))
    assert len(files) == len(C.assignments(graded.exercises))
    for path in files:
        with open(path, encoding="utf-8") as fh:
            page = fh.read()
        assert not any(s in page for s in SIGNS), path
