"""Lesson 1's self-checks (grader/lessons/l1_rule_per_primitive/selfchecks.py): the truth, computed
now, passes; a guess fails with a hint; nothing raises."""
from grader import core
from grader.feedback import show
from grader.lessons.l1_rule_per_primitive import selfchecks as S


def test_selfchecks_accept_the_truth_and_reject_guesses():
    assert S.selfcheck_tracer((2, (2, 3), (2, 3, 4))).passed
    assert not S.selfcheck_tracer((-1, (2, 3), (2, 3, 4))).passed
    route = "rule" if core.layout() == "collapsed" else "shortcut"
    assert S.sin_route() == route              # a closed-over constant reaches process_primitive
    assert S.selfcheck_route(route).passed and not S.selfcheck_route("not at all").passed
    assert S.selfcheck_reduce_axes(((1,), (3, 5))).passed
    assert not S.selfcheck_reduce_axes(((2,), (3, 5))).passed


def test_wrong_predictions_never_raise(capsys):
    for res in (S.selfcheck_tracer((-1,)), S.selfcheck_route("refused"), S.selfcheck_reduce_axes("?")):
        assert not res.passed and not res.graded
        assert res.raise_if_failed() is res
        show(res)
    assert "FAILED selfcheck_tracer" in capsys.readouterr().out


def test_a_prediction_left_as_released_is_not_yet_answered(capsys):
    for check in (S.selfcheck_tracer, S.selfcheck_route, S.selfcheck_reduce_axes):
        res = check(None)
        assert not res.passed and not res.findings and not res.complete and "not answered" in res.note
        show(res)
    assert capsys.readouterr().out.count("NOT YET selfcheck_") == 3


def test_the_layout_is_the_cores():
    assert S.layout() == core.layout() in ("split", "collapsed")
