"""Lesson 2's self-checks (grader/lessons/l2_where_the_axis_goes/selfchecks.py): the live truth
passes, a partial answer is "not yet" without findings, a wrong one fails with a hint, none raises."""
from grader.feedback import show
from grader.lessons.l2_where_the_axis_goes import live
from grader.lessons.l2_where_the_axis_goes import selfchecks as S


def test_mv_selfcheck_right_partial_and_wrong():
    truth = {r["row"]: (r["shape"], r["prims"]) for r in live.mv_table()}
    assert S.selfcheck_mv_table(truth).passed
    partial = S.selfcheck_mv_table({1: truth[1]})
    assert not partial.passed and not partial.findings and "2" in partial.note
    wrong = S.selfcheck_mv_table({**truth, 5: (truth[5][0], ["dot_general"])})
    assert not wrong.passed and len(wrong.findings) == 1 and "transpose" in wrong.findings[0].hint


def test_every_wrong_row_of_the_mv_table_is_explained():
    # issue 28: the feedback stopped at "... and 1 more", so the last wrong row had no hint
    wrong = S.selfcheck_mv_table({row: ((9, 9), ["dot_general"]) for row in range(1, 9)})
    assert wrong.failed == 8 and "row 8" in wrong.summary() and "more" not in wrong.summary()


def test_malformed_mv_predictions_are_findings():
    res = S.selfcheck_mv_table({1: "dot_general", 9: ((5, 2), [])})
    assert [f.case for f in res.findings] == ["row 1", "row 9"]
    assert "((5, 2), ['dot_general'])" in res.findings[0].hint


def test_dimension_numbers_and_reduce_selfchecks():
    dots = {n: live.dot_numbers(n) for n in range(1, len(live.DOT_CALLS) + 1)}
    assert S.selfcheck_dimension_numbers(dots).passed
    assert not S.selfcheck_dimension_numbers({**dots, 2: (((1,), (1,)), ((), ()))}).passed
    axes = {n: live.reduce_axes(n) for n in range(1, len(live.REDUCE_CALLS) + 1)}
    assert S.selfcheck_reduce_axes(axes).passed
    assert S.selfcheck_reduce_axes({**axes, 1: list(axes[1])}).passed  # lists are fine
    assert not S.selfcheck_reduce_axes({**axes, 1: (0,)}).passed


def test_unanswered_entries_are_not_yet_and_none_raises(capsys):
    for res in (S.selfcheck_mv_table({}), S.selfcheck_dimension_numbers(None),
                S.selfcheck_reduce_axes({1: None}), S.selfcheck_reduce_axes({"x": (1,)})):
        assert not res.passed and not res.graded
        assert res.raise_if_failed() is res
        show(res)
    out = capsys.readouterr().out
    assert "NOT YET selfcheck_mv_table" in out and "FAILED selfcheck_reduce_axes" in out
