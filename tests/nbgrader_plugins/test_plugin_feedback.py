"""Feedback without hidden tests (grader.nbgrader_plugins.feedback)."""
import json

from nbformat.v4 import new_code_cell, new_notebook, new_output
from nbgrader.preprocessors import ClearHiddenTests

from grader.nbgrader_plugins import ClearHiddenTestsInFeedback

# ---- feedback without hidden tests --------------------------------------------------------
GRADE_META = {"nbgrader": {"grade": True, "grade_id": "spy", "locked": True, "points": 3,
                           "solution": False, "schema_version": 3}}
HIDDEN = "show(L1.check_spy(spy, hidden=True))"


def graded_cell():
    cell = new_code_cell("show(L1.check_spy(spy))\n### BEGIN HIDDEN TESTS\n" + HIDDEN +
                         "\n### END HIDDEN TESTS", metadata=GRADE_META)
    cell.outputs = [
        new_output("stream", name="stdout", text="Judge: FAILED check_spy: 1 of 4 case(s) wrong\n"
                   "  case: in_axes=0\n    expected: (0, (3,), (2, 3))\n    got:      None\n"
                   "    hint: Report the tracer as f sees it.\n"),
        new_output("error", ename="NameError", evalue="name 'spy' is not defined",
                   traceback=["\x1b[0;32m----> 3\x1b[0m show(L1\x1b[38;5;241m.\x1b[39m"
                              "check_spy(spy, hidden\x1b[38;5;241m=\x1b[39m\x1b[38;5;28m"
                              "True\x1b[39m))", "NameError: name 'spy' is not defined"]),
    ]
    return cell


def test_feedback_keeps_the_message_and_drops_the_hidden_test():
    nb = new_notebook(cells=[graded_cell()])
    nb, _ = ClearHiddenTestsInFeedback().preprocess(nb, {})
    cell = nb.cells[0]
    assert cell.source == "show(L1.check_spy(spy))"
    text = json.dumps(cell.outputs)
    assert "expected: (0, (3,), (2, 3))" in text and "hint: Report" in text
    assert "hidden" not in text.replace("[hidden test]", "")
    assert "[hidden test]" in cell.outputs[1]["traceback"][0]
    assert cell.outputs[1]["traceback"][1] == "NameError: name 'spy' is not defined"


def test_cells_without_hidden_tests_are_untouched():
    cell = graded_cell()
    cell.source = "show(L1.check_spy(spy))"
    before = json.dumps(cell.outputs)
    nb, _ = ClearHiddenTestsInFeedback().preprocess(new_notebook(cells=[cell]), {})
    assert json.dumps(nb.cells[0].outputs) == before


def test_feedback_preprocessor_is_a_clear_hidden_tests():
    assert issubclass(ClearHiddenTestsInFeedback, ClearHiddenTests)
