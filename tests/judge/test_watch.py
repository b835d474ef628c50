"""How a child ended, as one `watch.Outcome`: a kind callers test, and the words feedback shows."""
import signal

import pytest

from grader.judge import sandbox, watch
from grader.judge.watch import End, Outcome

LIMITS = sandbox.Limits(cpu_s=3, memory_mb=256)


@pytest.mark.parametrize(("code", "stderr", "kind", "words"), [
    (0, "", End.OK, None),
    (-signal.SIGKILL, "", End.KILLED, f"killed by signal {signal.SIGKILL}"),
    (128 + signal.SIGSEGV, "", End.KILLED, f"killed by signal {signal.SIGSEGV}"),
    (-signal.SIGXCPU, "", End.CPU, "used more than 3 s of CPU time"),
    (1, "Traceback ...\nMemoryError\n", End.MEMORY, "used more than 256 MiB of memory"),
    (1, "Traceback ...\nValueError: no\n", End.EXITED, "exited with status 1 (ValueError: no)"),
    (3, "", End.EXITED, "exited with status 3"),
])
def test_a_child_that_ended_by_itself_has_its_kind_its_words_and_its_status(code, stderr, kind,
                                                                            words):
    out = watch.died("the answer", code, stderr, LIMITS)
    assert (out.answer, out.kind, out.failure, out.status) == ("the answer", kind, words, code)


def test_the_kind_decides_not_the_words():
    # A message that reads like a timeout is not one: callers test the kind.
    worded = Outcome("", End.EXITED, "timed out? no: exited with status 2", 2)
    assert worded.kind is not End.TIMED_OUT and worded.failure.startswith("timed out")
    assert Outcome("x").failure is None and Outcome("x").kind is End.OK


def test_the_sandbox_and_the_watch_share_one_outcome_type():
    assert sandbox.Outcome is watch.Outcome and sandbox.End is watch.End
    with pytest.raises(AttributeError):
        Outcome("").kind = End.OK                      # frozen: an outcome is a fact
