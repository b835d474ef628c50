"""An Exercise decides from plain data only, and survives observations no honest answer makes."""
from grader.exercise import Crash, Exercise, fresh_cases
from grader.feedback import Finding


def square_exercise():
    def compare(case, expected, got):
        return None if got == expected else Finding(str(case), str(expected), str(got), "square it")
    return Exercise("check_square", ("square",), lambda rng, hidden: [2, 3], lambda c: c * c,
                    lambda square, case: square(case), compare)


def test_right_and_wrong_answers():
    ex = square_exercise()
    assert ex.check(lambda x: x * x).passed
    res = ex.check(lambda x: x + x)
    assert not res.passed and [f.case for f in res.findings] == ["3"]


def test_a_crash_is_a_finding_with_the_error():
    res = square_exercise().check(lambda x: 1 / 0)
    assert not res.passed and "ZeroDivisionError" in res.findings[0].got


def test_forged_or_malformed_observations_fail_without_raising():
    ex = square_exercise()
    ex = Exercise(ex.name, ex.needs, ex.cases, ex.expect, ex.observe,
                  lambda case, expected, got: None if got + 0 == expected else Finding("", "", "", ""))
    assert not ex.verdict([2, 3], [{"not": "a number"}, 4]).passed      # compare raised
    assert not ex.verdict([2, 3], []).passed                            # results went missing
    assert not ex.verdict([2, 3], [4, 9, 16]).passed                    # too many results
    assert ex.verdict([2, 3], [4, 9]).passed
    assert not ex.verdict([2], [Crash("boom").to_plain()]).passed


def test_fresh_cases_redraws_visible_cases_and_repeats():
    drawn = iter([{"n": 1, "_seed": 5}, None, {"n": 2, "_seed": 6}, {"n": 2, "_seed": 7},
                  {"n": 3, "_seed": 8}])
    got = fresh_cases(lambda i: next(drawn), [{"n": 1, "_seed": 0}], 2)
    assert got == [{"n": 2, "_seed": 6}, {"n": 3, "_seed": 8}]


def test_fresh_cases_knows_a_visible_case_built_in_another_key_order():
    visible = [{"layout": "x", "tables": {"a": [1], "b": [2]}, "query": ("a", 0)}]
    same = {"query": ("a", 0), "tables": {"b": [2], "a": [1]}, "layout": "x"}
    other = {"query": ("a", 1), "tables": {"b": [2], "a": [1]}, "layout": "x"}
    drawn = iter([same, other])
    assert fresh_cases(lambda i: next(drawn), visible, 1) == [other]
