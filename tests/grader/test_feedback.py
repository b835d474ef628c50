"""The result object's three views; the text view is snapshot-tested."""
import pytest

from grader import feedback
from grader.feedback import Finding

FAILED_TEXT = """\
FAILED check_spy: 1 of 4 case(s) wrong
  case: in_axes=(1, None), shapes=[(3, 7, 5), (5,)]
    expected: (1, (3, 5), (3, 7, 5))
    got:      (1, (3, 7, 5), (3, 7, 5))
    hint: x.shape hides the batch axis; x.val.shape does not."""


def failed():
    return feedback.result("check_spy", 4, [Finding(
        "in_axes=(1, None), shapes=[(3, 7, 5), (5,)]", "(1, (3, 5), (3, 7, 5))",
        "(1, (3, 7, 5), (3, 7, 5))", "x.shape hides the batch axis; x.val.shape does not.")])


def test_text_view_snapshot():
    assert failed().summary() == FAILED_TEXT
    assert str(feedback.result("check_spy", 4, [])) == "PASSED check_spy: 4 case(s) checked"


def test_single_case_failures_do_not_count_cases():
    res = feedback.result("selfcheck_route", 1, [failed().findings[0]])
    assert res.summary().splitlines()[0] == "FAILED selfcheck_route"


def test_ipython_text_view_is_the_summary():
    from IPython.lib.pretty import pretty
    assert pretty(failed()) == FAILED_TEXT


def test_html_escapes_tracer_reprs():
    res = feedback.result("c", 1, [Finding("case", "<VmapTracer>", "Traced<ShapedArray(f32[3])>", "a < b")])
    html = res._repr_html_()
    assert "<VmapTracer>" not in html and "&lt;VmapTracer&gt;" in html
    assert "Traced&lt;ShapedArray" in html


def test_dict_view_round_trips_plain_data():
    d = failed().to_dict()
    assert d["passed"] is False and d["findings"][0]["hint"].startswith("x.shape")


def test_failed_result_raises_an_assertion_with_the_text():
    with pytest.raises(AssertionError) as err:
        failed().raise_if_failed()
    assert str(err.value) == FAILED_TEXT
    assert feedback.result("c", 1, []).raise_if_failed().passed


def test_crash_becomes_a_finding():
    res = feedback.crashed("check_rule", ZeroDivisionError("division by zero"))
    assert not res.passed and "ZeroDivisionError" in res.findings[0].got
