"""Every grade cell of exercises/*/*.ipynb agrees with the Exercise it scores (grader.lessons):
its grade id is declared, its points are the declaration's, the names the exercise needs are
defined by the notebook's answer cells before it, and it calls that exercise's check, visibly and
hidden, on those names. Every declared exercise has its grade cell; a missing notebook fails."""
from __future__ import annotations

import ast
import pathlib
import re

import nbformat
import pytest
from nbgrader.utils import is_grade, is_solution

from grader import lessons

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXERCISES = ROOT / "exercises"


def notebooks() -> list[pathlib.Path]:
    return sorted(p for p in EXERCISES.glob("*/*.ipynb") if ".ipynb_checkpoints" not in p.parts)


def grade_cells(nb) -> list:
    """Code grade cells: the ones a check scores (a markdown grade cell is marked by hand)."""
    return [c for c in nb.cells if c.cell_type == "code" and is_grade(c)]


def defines(source: str) -> set[str]:
    """Top-level names a cell defines (def, class, assignment)."""
    names = set()
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                names |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
    return names


def lesson_aliases(nb) -> dict[str, str]:
    """``{alias: lesson package}`` for each ``from grader.lessons import lN_x as ALIAS``."""
    found = {}
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        for node in ast.walk(ast.parse(cell.source)):
            if isinstance(node, ast.ImportFrom) and node.module == "grader.lessons":
                found.update({a.asname or a.name: a.name for a in node.names})
    return found


def check_calls(source: str) -> list[tuple[str, str, tuple, bool]]:
    """``(alias, check name, positional argument names, hidden)`` of each ``ALIAS.check_x(...)``."""
    calls = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                isinstance(node.func.value, ast.Name) and node.func.attr.startswith("check_"):
            hidden = any(k.arg == "hidden" and isinstance(k.value, ast.Constant) and
                         k.value.value is True for k in node.keywords)
            args = tuple(a.id if isinstance(a, ast.Name) else ast.dump(a) for a in node.args)
            calls.append((node.func.value.id, node.func.attr, args, hidden))
    return calls


def lesson_of(exercise) -> str:
    """The lesson package an Exercise is declared in (its observer lives in that lesson's kit)."""
    return exercise.observe.__module__.split(".")[2]


GRADED = [(nb_path, cell.metadata.nbgrader["grade_id"])
          for nb_path in notebooks() for cell in grade_cells(nbformat.read(nb_path, as_version=4))]


def package_numbered(number: int) -> str:
    """The lesson package ``l<number>_...`` (lessons need not be numbered without gaps)."""
    return next(pkg for pkg in lessons.packages() if int(pkg[1:].split("_")[0]) == number)


def test_there_are_exercise_notebooks_one_per_lesson():
    numbers = sorted(int(re.match(r"(\d+)-", p.parent.name)[1]) for p in notebooks())
    assert numbers, f"no exercise notebooks under {EXERCISES}"
    assert numbers == [int(pkg[1:].split("_")[0]) for pkg in lessons.packages()]
    assert all(p.stem == p.parent.name for p in notebooks())


def test_every_declared_exercise_has_its_grade_cell():
    ids = [gid for _, gid in GRADED]
    assert len(ids) == len(set(ids)), "a grade id is used twice across the exercises"
    assert set(lessons.exercises()) == set(ids)


@pytest.mark.parametrize("nb_path, grade_id", GRADED, ids=[gid for _, gid in GRADED])
def test_grade_cell_matches_its_declaration(nb_path, grade_id):
    nb = nbformat.read(nb_path, as_version=4)
    exercise = lessons.exercises().get(grade_id)
    assert exercise is not None, f"{nb_path.name}: grade cell {grade_id!r} is declared nowhere"
    index = next(i for i, c in enumerate(nb.cells) if c.metadata.get("nbgrader", {}).get(
        "grade_id") == grade_id)
    cell = nb.cells[index]
    assert cell.metadata.nbgrader["points"] == exercise.points, grade_id

    number = int(re.match(r"(\d+)-", nb_path.parent.name)[1])
    assert lesson_of(exercise) == package_numbered(number), \
        f"{grade_id} is declared in another lesson than {nb_path.parent.name}'s"

    answers = set()
    for c in nb.cells[:index]:
        if c.cell_type == "code" and is_solution(c) and not is_grade(c):
            answers |= defines(c.source)
    missing = set(exercise.needs) - answers
    assert not missing, f"{grade_id} needs {sorted(missing)}, which no answer cell before it defines"

    aliases = lesson_aliases(nb)
    calls = check_calls(cell.source)
    assert calls, f"grade cell {grade_id} calls no check"
    for alias, name, args, _ in calls:
        assert aliases.get(alias) == lesson_of(exercise), (grade_id, alias)
        assert name == exercise.name, f"grade cell {grade_id} calls {name}, not {exercise.name}"
        assert args == exercise.needs, (grade_id, args)
    assert sorted(hidden for *_, hidden in calls) == [False, True], \
        f"grade cell {grade_id} should check the visible cases and, hidden, cases drawn now"
