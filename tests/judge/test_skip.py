"""grader.judge.skip: the student's kernel skips only the grade cells the judge re-runs."""
from nbformat.v4 import new_code_cell, new_notebook
from traitlets.config import Config

from grader.judge.skip import TAG, SkipJudgedCells, UnskipJudgedCells
from grader.lessons import exercises


def _nb():
    judged = sorted(exercises())[0]
    cells = [new_code_cell("x = 1", metadata={"nbgrader": {"solution": True, "grade_id": "a"}}),
             new_code_cell("check()", metadata={"nbgrader": {"grade": True, "grade_id": judged,
                                                             "points": 1}}),
             new_code_cell("assert x == 1", metadata={"nbgrader": {"grade": True,
                                                                   "grade_id": "not_judged",
                                                                   "points": 1}})]
    return new_notebook(cells=cells)


def test_only_judged_grade_cells_are_skipped_and_the_tag_comes_off_again():
    nb, res = SkipJudgedCells().preprocess(_nb(), {})
    assert [TAG in c.metadata.get("tags", []) for c in nb.cells] == [False, True, False]
    nb, res = UnskipJudgedCells().preprocess(nb, res)
    assert all("tags" not in c.metadata for c in nb.cells)


def test_nothing_is_skipped_when_the_judge_is_off():
    cfg = Config()
    cfg.JudgeExercises.enabled = False
    nb, _ = SkipJudgedCells(config=cfg).preprocess(_nb(), {})
    assert all("tags" not in c.metadata for c in nb.cells)
