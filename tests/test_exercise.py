"""An Exercise (grader/exercise.py) decides from plain data only, turns the student's errors into
findings, survives observations no honest answer makes, and draws hidden cases afresh."""
import numpy as np
import pytest

from grader import wire
from grader.exercise import Exercise, canonical, describe, fresh_cases
from grader.feedback import Finding
from grader.wire import Failure


def compare(case, expected, got):
    return None if got == expected else Finding(str(case), str(expected), str(got), "square it")


def square_exercise(**kw):
    return Exercise("square", 2, ("square",), lambda square, case: square(case),
                    lambda rng, hidden: [2, 3] if not hidden else [int(rng.integers(4, 100))],
                    lambda c: c * c, compare, **kw)


def test_a_declaration_names_its_check_after_its_grade_id():
    ex = square_exercise()
    assert (ex.name, ex.points, ex.needs) == ("check_square", 2, ("square",))
    assert square_exercise(name="check_it").name == "check_it"


def test_right_and_wrong_answers():
    ex = square_exercise()
    assert ex.check(lambda x: x * x).passed
    res = ex.check(lambda x: x + x)
    assert not res.passed and [f.case for f in res.findings] == ["3"]


def stub(x):
    """As the release leaves an answer: the solution replaced by nbgrader's stub."""
    # YOUR CODE HERE
    ...


def old_stub(x):
    raise NotImplementedError()


@pytest.mark.parametrize("answer", [None, stub, old_stub], ids=["None", "stub", "old stub"])
def test_an_answer_as_released_is_not_answered_yet(answer):
    res = square_exercise().check(answer, hidden=True)
    assert not res.passed and not res.findings and not res.complete
    assert "not answered yet" in res.note and res.summary().startswith("FAILED check_square")


def test_a_half_written_answer_is_judged_not_called_unanswered():
    def partial(x):
        """Started."""
        y = x
        return y
    res = square_exercise().check(partial)
    assert res.findings and res.complete


def test_hidden_cases_are_drawn_now_unless_seeded():
    ex = square_exercise()
    seen = {ex.check(lambda x: x + x, hidden=True).findings[0].case for _ in range(20)}
    assert len(seen) > 1
    seeded = [ex.check(lambda x: x + x, hidden=True, seed=5).findings[0].case for _ in range(3)]
    assert len(set(seeded)) == 1


def test_a_crash_is_a_finding_with_the_error_and_the_hint():
    res = square_exercise().check(lambda x: 1 / 0)
    assert not res.passed and res.failed == 2
    assert res.findings[0].got == "ZeroDivisionError: division by zero"
    assert res.findings[0].expected == "your code runs without raising"
    res = square_exercise(failure_hint=lambda case, f: f"{f.kind} on {case}").check(lambda x: 1 / 0)
    assert res.findings[0].hint == "ZeroDivisionError on 2"
    assert square_exercise(failure_hint="read it").check(lambda x: 1 / 0).findings[0].hint == "read it"


def test_an_exercise_that_accepts_failures_judges_them_itself():
    def raising_is_right(case, expected, got):
        return None if isinstance(got, Failure) else Finding(str(case), "raises", str(got))
    ex = Exercise("raise", 1, ("f",), lambda f, case: f(case), lambda rng, hidden: [1],
                  lambda c: None, raising_is_right, accepts_failures=True)
    assert ex.check(lambda x: 1 / 0).passed
    assert not ex.check(lambda x: x).passed


def test_forged_or_malformed_observations_fail_without_raising():
    ex = Exercise("square", 1, ("square",), lambda square, case: square(case),
                  lambda rng, hidden: [2, 3], lambda c: c * c,
                  lambda case, expected, got: None if got + 0 == expected else Finding("", "", ""))
    res = ex.verdict([2, 3], [{"not": "a number"}, 4])                  # compare raised
    assert not res.passed and "a result shaped like int" in res.findings[0].expected
    assert "dict (TypeError)" in res.findings[0].got
    assert not ex.verdict([2, 3], []).passed                            # results went missing
    assert not ex.verdict([2, 3], [4, 9, 16]).passed                    # too many results
    assert ex.verdict([2, 3], [4, 9]).passed
    assert not ex.verdict([2], [Failure("call", "RuntimeError: boom")]).passed


def test_a_verdict_on_wired_observations_is_the_kernels():
    ex = square_exercise()
    for answer in (lambda x: x * x, lambda x: x + x, lambda x: 1 / 0):
        cases = ex.cases(np.random.default_rng(0), False)
        observed = [wire.loads(wire.dumps(ex.observe_safely((answer,), c))) for c in cases]
        assert ex.verdict(cases, observed) == ex.check(answer)


def test_the_checker_is_the_notebooks_check_function():
    check = square_exercise().checker()
    assert check.__name__ == "check_square" and "square" in check.__doc__
    assert check(lambda x: x * x).passed and check(lambda x: x * x, hidden=True, seed=1).passed
    assert not check(lambda x: x + x).passed


# ---- fresh cases ---------------------------------------------------------------------------------

def test_fresh_cases_redraws_visible_cases_and_repeats():
    drawn = iter([{"n": 1, "_seed": 5}, None, {"n": 2, "_seed": 6}, {"n": 2, "_seed": 7},
                  {"n": 3, "_seed": 8}])
    got = fresh_cases(lambda i: next(drawn), [{"n": 1, "_seed": 0}], 2)
    assert got == [{"n": 2, "_seed": 6}, {"n": 3, "_seed": 8}]


def test_a_visible_case_in_a_new_seed_is_not_fresh():
    visible = [{"prim": "softsign", "shapes": ((6, 3),), "_seed": 0}]
    drawn = iter([{"prim": "softsign", "shapes": ((6, 3),), "_seed": 99},
                  {"prim": "softsign", "shapes": ((7, 3),), "_seed": 99}])
    assert fresh_cases(lambda i: next(drawn), visible, 1) == [
        {"prim": "softsign", "shapes": ((7, 3),), "_seed": 99}]


def test_a_seed_under_another_key_is_part_of_the_question():
    # Why there is one key: under any other the new seed makes the repeat look fresh (the
    # contract test refuses any other key with "seed" in its name).
    visible = [{"n": 1, "seed": 0}]
    assert fresh_cases(lambda i: {"n": 1, "seed": 99}, visible, 1) == [{"n": 1, "seed": 99}]


def test_fresh_cases_knows_a_visible_case_built_in_another_key_order():
    visible = [{"layout": "x", "tables": {"a": [1], "b": [2]}, "query": ("a", 0)}]
    same = {"query": ("a", 0), "tables": {"b": [2], "a": [1]}, "layout": "x"}
    other = {"query": ("a", 1), "tables": {"b": [2], "a": [1]}, "layout": "x"}
    drawn = iter([same, other])
    assert fresh_cases(lambda i: next(drawn), visible, 1) == [other]


def test_fresh_cases_takes_a_key():
    drawn = iter([{"q": 1, "B": 8}, {"q": 2, "B": 7}])
    got = fresh_cases(lambda i: next(drawn), [{"q": 1, "B": 7}], 1, key=lambda c: c["q"])
    assert got == [{"q": 2, "B": 7}]


def test_canonical_tells_tuples_from_lists_and_ignores_dict_order():
    assert canonical({"a": 1, "b": (2,)}) == canonical({"b": (2,), "a": 1})
    assert canonical((1, 2)) != canonical([1, 2])
    assert canonical(1) != canonical("1") and canonical(True) != canonical(1)
    hash(canonical({"a": [{"b": (1, None)}]}))


def test_describe_shows_a_case_without_its_private_keys():
    assert describe({"shape": (2, 3), "src": None, "_seed": 4}) == "shape=(2, 3), src=None"
    assert describe(5) == "5"


def test_a_hint_that_fails_on_forged_failure_data_falls_back_to_the_generic_one():
    from grader.exercise import CRASH_HINT, Exercise
    from grader.wire import Failure
    ex = Exercise("x", 1, ("f",), lambda f, case: f(case), lambda rng, hidden: [1],
                  lambda case: case, lambda case, e, g: None,
                  failure_hint=lambda case, failure: failure.detail["in_axes"])
    res = ex.verdict([1], [Failure("vmap", "ValueError: forged", {})])
    assert not res.passed and res.findings[0].hint == CRASH_HINT
