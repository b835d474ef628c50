"""A cell's nbgrader metadata read one way on the trusted side (grader/judge/cellmeta.py), and never
from the box."""
import os
import shutil

import nbformat
import pytest
from nbformat.v4 import new_code_cell
from nbgrader.utils import is_grade

from grader.judge import cellmeta, kit_tree, runner
from grader.judge.kit_imports import KitImportError
from grader.repo import PACKAGE, ROOT

FIRST = os.path.join(ROOT, "exercises", "01-the-rule-per-primitive", "01-the-rule-per-primitive.ipynb")


def test_a_cell_nbgrader_does_not_know_has_no_id_and_no_points():
    cell = new_code_cell("x = 1")
    assert cellmeta.grade_id(cell) is None and cellmeta.points(cell) == 0.0
    cell.metadata["nbgrader"] = {"grade": True, "grade_id": "g", "points": "2"}
    assert cellmeta.grade_id(cell) == "g" and cellmeta.points(cell) == 2.0


def test_the_template_of_a_released_notebook_agrees_with_nbgrader_on_every_grade_cell():
    nb = nbformat.read(FIRST, as_version=4)
    template = runner.Template.of_notebook(nb)
    graded = [cellmeta.grade_id(c) for c in nb.cells if is_grade(c)]
    assert graded and list(template.graded) == graded
    assert template.points == {cellmeta.grade_id(c): cellmeta.points(c) for c in nb.cells if is_grade(c)}
    assert all(p > 0 for p in template.points.values())


@pytest.fixture
def copy(tmp_path, monkeypatch):
    shutil.copytree(PACKAGE, tmp_path / "grader", ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(kit_tree, "PACKAGE", str(tmp_path / "grader"))
    return tmp_path / "grader"


def test_the_box_cannot_import_the_metadata_reader(copy):
    """It imports nbgrader, which the judge's child never sees: box code reaching for it stops the
    kit tree's build, naming both files."""
    child = copy / "judge" / "box" / "child.py"
    child.write_text(child.read_text() + "\nfrom .. import cellmeta as _cellmeta\n")
    with pytest.raises(KitImportError, match=r"grader/judge/box/child\.py.*grader/judge/cellmeta\.py"):
        kit_tree.members()
