"""Hidden tests out of the grading kernel's reach (grader.nbgrader_plugins.hidden), and a
student's own cell that mentions the delimiters never stopping anyone's feedback (.feedback)."""
import os

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from grader.nbgrader_plugins import ClearHiddenTestsInFeedback
from grader.nbgrader_plugins.hidden import HideHiddenTests, RestoreHiddenTests

GRADE = {"nbgrader": {"grade": True, "grade_id": "g1", "locked": True, "points": 1,
                      "solution": False, "schema_version": 3}}
SECRET = "assert answer(7) == 49  # the hidden case"
GRADED = f"check(answer)\n### BEGIN HIDDEN TESTS\n{SECRET}\n### END HIDDEN TESTS"
# A student's own cells: a delimiter with no end, and a whole region outside any grade cell.
STUDENT = ["# BEGIN HIDDEN TESTS\nanswer = lambda x: x * x",
           "### BEGIN HIDDEN TESTS\nprint('mine')\n### END HIDDEN TESTS"]


def notebook():
    return new_notebook(cells=[new_code_cell(GRADED, metadata=GRADE)] +
                        [new_code_cell(s) for s in STUDENT])


@pytest.fixture
def folder(tmp_path):
    """A submission's autograded folder while its second notebook is graded: the first already
    graded (hidden tests and all), the second as nbgrader's sanitizing pass wrote it."""
    nbformat.write(notebook(), str(tmp_path / "first.ipynb"))
    nbformat.write(notebook(), str(tmp_path / "second.ipynb"))
    return tmp_path


def resources(folder, name="second"):
    return {"metadata": {"path": str(folder)}, "nbgrader": {"notebook": name}}


def on_disk(folder):
    """Each notebook's cell sources, as a kernel reading the folder would find them."""
    return {p.name: [c.source for c in nbformat.read(str(p), as_version=4).cells]
            for p in folder.glob("*.ipynb")}


def test_while_the_kernel_runs_no_notebook_it_can_read_holds_a_hidden_test(folder):
    first = (folder / "first.ipynb").read_bytes()
    nb, res = HideHiddenTests().preprocess(notebook(), resources(folder))
    for sources in on_disk(folder).values():
        assert SECRET not in "".join(sources) and sources[1:] == STUDENT   # theirs as written
    assert SECRET in nb.cells[0].source                     # the graded one keeps them in memory
    RestoreHiddenTests().preprocess(nb, res)
    assert (folder / "first.ipynb").read_bytes() == first   # the other one back as it was


def test_a_link_in_the_folder_is_neither_followed_nor_written(folder, tmp_path_factory):
    outside = tmp_path_factory.mktemp("outside") / "gradebook.ipynb"
    nbformat.write(notebook(), str(outside))
    before = outside.read_bytes()
    os.symlink(outside, folder / "link.ipynb")
    nb, res = HideHiddenTests().preprocess(notebook(), resources(folder))
    RestoreHiddenTests().preprocess(nb, res)
    assert outside.read_bytes() == before and os.path.islink(folder / "link.ipynb")


def test_feedback_clears_the_grade_cells_and_leaves_the_students_cells_as_written():
    nb, _ = ClearHiddenTestsInFeedback().preprocess(notebook(), {})
    assert nb.cells[0].source == "check(answer)"
    assert [c.source for c in nb.cells[1:]] == STUDENT
