""""Run All" on a released exercise notebook never stops at a self-check, and shows each verdict once.

The release is made by nbgrader itself. Every graded answer is filled with the source's solution and every
self-check prediction with a plausible wrong one; the notebook then runs under its own kernel (`python3`) to the
last cell. Each self-check cell shows one output: its verdict, once (no second copy as a traceback or as text).
"""
from __future__ import annotations

import pathlib
import re

import nbformat
import pytest
from nbclient import NotebookClient
from nbgrader.tests import run_nbgrader

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXERCISES = ROOT / "exercises"


def assignments():
    return sorted({p.parent.name for p in EXERCISES.glob("*/*.ipynb") if ".ipynb_checkpoints" not in p.parts})


def notebooks(assignment):
    return sorted((EXERCISES / assignment).glob("*.ipynb"))

pytestmark = pytest.mark.slow

# A wrong prediction for every self-check, by the grade id of its answer cell: the mistakes students make.
WRONG = {
    "predict_tracer": "tracer_prediction = (-1, (2, 3), (2, 3, 4))        # in_axes copied as the batch dim",
    "predict_route": 'route_prediction = "not at all"                      # c is no tracer, so...',
    "predict_axes": "reduce_prediction = ((1,), (5, 3))                   # vmap's output shape, not the equation's",
    "l2_mv_predictions": 'mv_predictions = {row: ((5, 2), ["dot_general", "broadcast_in_dim"]) for row in range(1, 9)}',
    "l2_dot_answer": "dot_answer = {call: (((0,), (0,)), ((0,), (0,))) for call in range(1, 5)}",
    "l2_reduce_answer": "reduce_answer = {1: (1,), 2: (1,), 3: (1,), 4: (2,), 5: (1, 2)}",
    "l3_keep_answer": 'keep_answer = {1: "cond", 2: "cond", 3: "select_n", 4: "select_n"}   # read off the operands',
    "l4_route_predictions": 'route_predictions = {call: "process_primitive" for call in range(1, 7)}',
}
SELFCHECK_CALL = re.compile(r"\b(selfcheck_\w+)\(")
MARKER = re.compile(r"^\s*### (BEGIN|END) SOLUTION\s*$")


def solution(cell) -> str:
    """A source answer cell as a student who solved it would leave it: the solution, without markers."""
    return "\n".join(line for line in cell.source.splitlines() if not MARKER.match(line))


def grade_id(cell):
    return cell.metadata.get("nbgrader", {}).get("grade_id")


def answered(released, source):
    """``released`` with every graded answer solved and every self-check prediction wrong; the self-check cells."""
    sources = {grade_id(c): c for c in source.cells if grade_id(c)}
    code = [c for c in released.cells if c.cell_type == "code"]
    predictions, checks = [], []
    for i, cell in enumerate(code):
        meta = cell.metadata.get("nbgrader", {})
        if not meta.get("solution"):
            continue
        later = code[i + 1].source if i + 1 < len(code) else ""
        if SELFCHECK_CALL.search(later):
            assert meta["grade_id"] in WRONG, f"no wrong prediction for the self-check after {meta['grade_id']}"
            cell.source = WRONG[meta["grade_id"]]
            predictions.append(meta["grade_id"])
            checks.append(code[i + 1])
        else:
            cell.source = solution(sources[meta["grade_id"]])
    return predictions, checks


def test_there_are_assignments_to_run():
    assert assignments(), f"no source assignments under {EXERCISES}"


@pytest.mark.parametrize("assignment", assignments())
def test_run_all_with_every_self_check_wrong_reaches_the_last_cell(assignment, course_dir):
    run_nbgrader(["generate_assignment", assignment, "--force"])
    for nb_path in notebooks(assignment):
        released = nbformat.read(course_dir / "release" / assignment / nb_path.name, as_version=4)
        predictions, checks = answered(released, nbformat.read(EXERCISES / assignment / nb_path.name, as_version=4))
        assert predictions and set(predictions) <= set(WRONG)
        # Raises CellExecutionError at the first cell that fails: a self-check that raised would stop it here.
        NotebookClient(released, kernel_name=released.metadata.kernelspec.name, timeout=600, allow_errors=False,
                       resources={"metadata": {"path": str(course_dir)}}).execute()
        code = [c for c in released.cells if c.cell_type == "code"]
        assert all(c.execution_count for c in code), "Run All stopped before the last cell"
        for cell in checks:
            name = SELFCHECK_CALL.search(cell.source)[1]
            kinds = [o.output_type for o in cell.outputs]
            assert kinds in (["execute_result"], ["display_data"]), (name, kinds, cell.outputs)
            text = cell.outputs[0].data["text/plain"]
            assert text.count(name) == 1 and re.match(rf"(FAILED|NOT YET) {name}\b", text), (name, text)
            html = cell.outputs[0].data["text/html"]
            assert html.count("Not yet") == 1 and html.count(name) == 1, (name, html)
            assert "Traceback" not in text and "CheckFailed" not in text


GRADE_CELL = re.compile(r"\bshow\(L\d\.(check_\w+)\(")


@pytest.mark.parametrize("assignment", assignments())
def test_run_all_on_an_unanswered_notebook_reaches_the_last_cell(assignment, course_dir):
    """The release as a student first opens it (issue 28): no cell raises, each graded check says "not
    answered yet" on stderr (so nbgrader and Validate count it failed) and each self-check says so too."""
    run_nbgrader(["generate_assignment", assignment, "--force"])
    for nb_path in notebooks(assignment):
        released = nbformat.read(course_dir / "release" / assignment / nb_path.name, as_version=4)
        NotebookClient(released, kernel_name=released.metadata.kernelspec.name, timeout=600, allow_errors=False,
                       resources={"metadata": {"path": str(course_dir)}}).execute()
        code = [c for c in released.cells if c.cell_type == "code"]
        assert all(c.execution_count for c in code), "Run All stopped before the last cell"
        graded = [c for c in code if c.metadata.get("nbgrader", {}).get("grade")]
        assert graded
        for cell in graded:
            name = GRADE_CELL.search(cell.source)[1]
            stderr = [o.text for o in cell.outputs if o.output_type == "stream" and o.name == "stderr"]
            assert stderr and f"FAILED {name}" in stderr[0] and "not answered yet" in stderr[0], cell.outputs
        for cell in code:
            if SELFCHECK_CALL.search(cell.source) and not cell.metadata.get("nbgrader"):
                text = cell.outputs[0].data["text/plain"]
                assert re.match(r"NOT YET selfcheck_\w+", text), text
