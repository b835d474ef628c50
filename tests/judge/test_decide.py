"""A run that failed becomes a verdict by its kind: only a run stopped for time is one."""
from grader.judge import decide
from grader.judge.watch import End, Outcome


def test_only_a_run_stopped_for_time_ran_out_of_time_whatever_its_words():
    timed = decide.failed("spy", Outcome("", End.TIMED_OUT, "the submission's 60 s ran out"))
    assert decide.ran_out_of_time(timed) and timed.findings[0].expected == decide.IN_TIME
    assert timed.findings[0].got == "the submission's 60 s ran out"
    # Words that read like a time-out are not one: the conversation stopped this child.
    worded = decide.failed("spy", Outcome("", End.STOPPED, "timed out? no, it wrote a bad line"))
    assert not decide.ran_out_of_time(worded) and worded.findings[0].expected == decide.NORMALLY


def test_a_child_that_ended_before_answering_says_so():
    res = decide.failed("spy", Outcome(""))
    assert res.findings[0].got == "the judge's child ended before answering"
    assert not res.passed and not decide.ran_out_of_time(res)
