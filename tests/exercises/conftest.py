"""Throw-away nbgrader courses built from the real exercises, one fixture per resource."""
import pathlib
import shutil

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXERCISES = ROOT / "exercises"


@pytest.fixture
def course_dir(tmp_path, monkeypatch):
    """A copy of course/ beside a copy of exercises/, with nbgrader run from inside it."""
    course = tmp_path / "course"
    course.mkdir()
    shutil.copy(ROOT / "course" / "nbgrader_config.py", course)
    shutil.copytree(EXERCISES, tmp_path / "exercises",
                    ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
    monkeypatch.chdir(course)
    return course
