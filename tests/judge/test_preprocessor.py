"""JudgeExercises writes its verdicts after LimitOutput, so it cuts them itself: a verdict quoting
whatever an answer returned stays small in the autograded notebook."""
from grader.feedback import Finding, result
from grader.judge import preprocessor, sandbox


def test_a_verdict_quoting_a_huge_answer_is_cut():
    huge = result("check_spy", 1, [Finding("case 1", "(2, 3)", "x" * (8 << 20), "hint")])
    outputs = preprocessor._outputs(huge, 16 * 2 ** 10)
    assert len(str(outputs)) < 40 * 2 ** 10
    assert "more characters]" in outputs[0]["traceback"][0]


def test_a_short_verdict_is_whole():
    short = result("check_spy", 3, [])
    assert short.summary() in outputs_text(preprocessor._outputs(short, 16 * 2 ** 10))


def outputs_text(outputs) -> str:
    return "".join(o.get("text", "") + "".join(o.get("traceback", [])) for o in outputs)


def test_every_judge_limit_defaults_to_sandbox_limits():
    judge, limits = preprocessor.JudgeExercises(), sandbox.Limits()
    assert judge.limits() == limits
    assert judge.budget_seconds == sandbox.Budget().seconds
