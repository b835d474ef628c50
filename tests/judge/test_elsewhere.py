"""A helper defined outside the answer cells: the judge says it re-runs only answer cells and where
the helper is, instead of sending the student to run the example again."""
import pathlib

import nbformat

from grader.feedback import Finding, result
from grader.judge import elsewhere, runner, sandbox

ROOT = pathlib.Path(__file__).resolve().parents[2]
FIRST = ROOT / "exercises" / "01-the-rule-per-primitive" / "01-the-rule-per-primitive.ipynb"
FAST = sandbox.Limits(wall_s=30, cpu_s=60, memory_mb=4096)

HELPER = ("def _fold(prim, x, d, axis):\n"
          "    a = axis if axis < d else axis + 1\n"
          "    mean, centred = prim.bind(x, axis=a)\n"
          "    return [mean, centred], [d - 1 if a < d else d, d]\n")
ANSWER = ("def moments_rule(prim, vals, dims, *, axis):\n"
          "    (x,), (d,) = vals, dims\n"
          "    return {call}(prim, x, d, axis)\n")


def _with_helper_outside(call: str):
    nb = nbformat.read(FIRST, as_version=4)
    cell = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id")
                == "moments_answer")
    cell.source = ANSWER.format(call=call)
    nb.cells.insert(nb.cells.index(cell), nbformat.v4.new_code_cell(HELPER))   # the student's own
    return nb


def test_a_helper_in_a_cell_of_ones_own_is_named_with_its_cell():
    res = runner.judge(_with_helper_outside("_fold"), FAST)["moments_rule"]
    assert not res.passed
    finding = res.findings[0]
    assert "NameError: name '_fold' is not defined" in finding.got
    assert "re-runs only the answer cells" in finding.hint and "Move the definition of `_fold`" \
        in finding.hint and "def _fold(prim, x, d, axis):" in finding.hint
    assert "example" not in finding.hint


def test_a_name_defined_nowhere_keeps_the_exercise_hint():
    res = runner.judge(_with_helper_outside("_nowhere"), FAST)["moments_rule"]
    finding = res.findings[0]
    assert "NameError: name '_nowhere' is not defined" in finding.got
    assert "re-runs only the answer cells" not in finding.hint


def test_only_cells_the_judge_does_not_run_count():
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("def h(): pass")])
    nb.cells[0].metadata["nbgrader"] = {"grade_id": "answer_a", "solution": True}
    bad = result("check_x", 1, [Finding("case", "runs", "NameError: name 'h' is not defined",
                                        "run it")])
    same = elsewhere.explain({"x": bad}, nb, {"answer_a"}, runner._defines)["x"]
    assert same.findings[0].hint == "run it"          # h is in a cell the judge runs
    moved = elsewhere.explain({"x": bad}, nb, set(), runner._defines)["x"]
    assert "cell 1: def h(): pass" in moved.findings[0].hint
