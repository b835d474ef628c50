"""The judge's child's copy of grader/ (grader/judge/kit_tree.py) is derived from the kits' own
imports: a kit that starts importing another core module takes it into the box, and one that
imports the answer key stops the tree from being built, naming both files."""
import shutil

import pytest

from grader import lessons
from grader.judge import kit_tree
from grader.judge.kit_imports import KitImportError
from grader.repo import PACKAGE


def test_the_tree_holds_every_kit_and_none_of_the_answer_key():
    members = kit_tree.members()
    for package in lessons.packages():
        assert f"lessons/{package}/__init__.py" in members
        assert f"lessons/{package}/kit/observe.py" in members
    assert "core/jaxprs.py" in members and "judge/box/child.py" in members
    assert all(kit_tree.box_side(m) for m in members)
    assert "exercise.py" not in members and "lessons/l1_rule_per_primitive/spy.py" not in members


@pytest.fixture
def copy(tmp_path, monkeypatch):
    """A copy of grader/ that the kit tree is built from."""
    shutil.copytree(PACKAGE, tmp_path / "grader", ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(kit_tree, "PACKAGE", str(tmp_path / "grader"))
    return tmp_path / "grader"


def test_a_core_module_a_kit_imports_goes_into_the_box(copy):
    assert "core/tracers.py" not in kit_tree.members()
    kit = copy / "lessons" / "l2_where_the_axis_goes" / "kit" / "observe.py"
    kit.write_text(kit.read_text() + "\nfrom ....core import tracers as _tracers\n")
    assert "core/tracers.py" in kit_tree.members()


def test_a_kit_importing_the_answer_key_stops_the_build(copy, tmp_path):
    kit = copy / "lessons" / "l2_where_the_axis_goes" / "kit" / "observe.py"
    kit.write_text(kit.read_text() + "\nfrom .. import widened as _key\n")
    with pytest.raises(KitImportError, match=r"grader/lessons/l2_where_the_axis_goes/kit/observe\.py "
                                             r"imports grader\.lessons\.l2_where_the_axis_goes\.widened"):
        kit_tree.build(str(tmp_path / "tree"))


def test_a_kit_importing_a_module_that_is_not_there_stops_the_build(copy):
    kit = copy / "lessons" / "l2_where_the_axis_goes" / "kit" / "observe.py"
    kit.write_text(kit.read_text() + "\nfrom ....core import no_such_module\n")
    # a name, not a module, of the lazy core: the kit imports it at once and fails there
    assert "core/no_such_module.py" not in kit_tree.members()
    kit.write_text(kit.read_text() + "\nimport grader.core.no_such_module\n")
    with pytest.raises(KitImportError, match="grader.core.no_such_module, which does not exist"):
        kit_tree.members()
