"""The result object (grader/feedback.py): three views, frozen with ``passed`` derived, and a
graded check raises when it fails while a self-check never does. The text view is snapshot-tested."""
import dataclasses

import pytest

from grader import feedback
from grader.feedback import CheckFailed, Finding

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


def test_only_three_findings_are_shown():
    res = feedback.result("c", 5, [Finding(f"case {i}", "e", "g") for i in range(5)])
    text = res.summary()
    assert "case 2" in text and "case 3" not in text and "... and 2 more" in text
    assert "case 3" not in res._repr_html_() and "and 2 more" in res._repr_html_()


def test_a_self_check_explains_every_wrong_prediction():
    res = feedback.selfcheck("s", 4, [Finding(f"row {i}", "e", "g", f"hint {i}") for i in range(4)])
    for view in (res.summary(), res._repr_html_()):
        assert "hint 3" in view and "more" not in view


def test_a_graded_check_not_answered_yet_says_so_on_stderr_and_does_not_raise(capsys):
    res = feedback.result("check_spy", 0, [], note="not answered yet", complete=False)
    feedback.show(res)                                   # no CheckFailed: Run All goes on
    out = capsys.readouterr()
    assert "FAILED check_spy" in out.err and "not answered yet" in out.err
    with pytest.raises(feedback.CheckFailed):
        feedback.show(feedback.result("check_spy", 1, [Finding("c", "e", "g")]))


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
    assert set(d) == {"check", "cases", "findings", "note", "graded", "complete", "manual", "passed"}


def test_failed_result_raises_an_assertion_with_the_text():
    with pytest.raises(AssertionError) as err:
        failed().raise_if_failed()
    assert str(err.value) == FAILED_TEXT
    assert feedback.result("c", 1, []).raise_if_failed().passed


# ---- frozen, with passed derived ------------------------------------------------------------------

def test_a_result_is_frozen_and_passed_is_never_stored():
    res = feedback.result("c", 1, [])
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.passed = False
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.findings = (failed().findings[0],)
    assert "passed" not in {f.name for f in dataclasses.fields(feedback.Result)}


@pytest.mark.parametrize("kwargs, passed", [
    ({}, True),
    ({"findings": (Finding("c", "e", "g"),)}, False),
    ({"complete": False}, False),
    ({"manual": "answer mentions matchaxis"}, False),
])
def test_passed_is_no_finding_nothing_unanswered_nothing_for_a_human(kwargs, passed):
    assert feedback.Result("c", 1, **kwargs).passed is passed


def test_a_result_for_manual_grading_says_so_and_why():
    res = feedback.Result("check_matchaxis", 8, manual="the answer calls JAX's matchaxis")
    assert res.summary() == "NEEDS MANUAL GRADING check_matchaxis: the answer calls JAX's matchaxis"
    assert "Needs manual grading" in res._repr_html_()
    with pytest.raises(CheckFailed):
        res.raise_if_failed()


def test_an_incomplete_selfcheck_is_not_yet_and_names_what_is_missing():
    res = feedback.selfcheck("selfcheck_mv_table", 1, [], "not predicted yet: rows [2]",
                             complete=False)
    assert not res.passed and res.summary().startswith("NOT YET selfcheck_mv_table")
    assert "rows [2]" in res.summary() and "Not yet" in res._repr_html_()


# ---- show: once, then raise for a failed graded check only -----------------------------------------

def test_show_prints_once_and_raises_for_a_failed_graded_check(capsys):
    with pytest.raises(CheckFailed) as err:
        feedback.show(failed())
    assert capsys.readouterr().out == FAILED_TEXT + "\n"
    assert err.value._render_traceback_() == ["FAILED check_spy: 1 of 4 case(s) wrong (details above)"]
    assert feedback.show(feedback.result("c", 1, [])) is None


def test_a_selfcheck_never_raises(capsys):
    res = feedback.selfcheck("selfcheck_route", 1, [Finding("p", "'rule'", "'refused'", "h")])
    assert not res.passed and not res.graded
    assert res.raise_if_failed() is res
    feedback.show(res)
    assert capsys.readouterr().out.startswith("FAILED selfcheck_route")


def test_check_failed_unshown_renders_the_whole_text():
    assert CheckFailed(FAILED_TEXT)._render_traceback_() == [FAILED_TEXT]
