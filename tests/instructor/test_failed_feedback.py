"""The page a failed submission's student gets (grader.instructor.failed_feedback); the real path,
`make feedback` after a kernel that died, is tests/pipeline/test_status.py."""
import html
import re

import pytest

from grader.instructor.failed_feedback import page
from grader.nbgrader_plugins import KERNEL_DIED, TIMED_OUT, TOO_LARGE, UNREADABLE


def text(reason):
    return html.unescape(re.sub(r"<[^>]+>", "", page("01-a", "01-a", reason)))


@pytest.mark.parametrize("reason, says, todo", [
    (KERNEL_DIED, "stopped the grading kernel", "in a fresh kernel"),
    (TIMED_OUT + " in spy: the submission's 300 s were spent", "could not be interrupted",
     "in a fresh kernel"),
    ("the grading kernel printed more than 32 MiB at once", "went past a limit", "in a fresh kernel"),
    (UNREADABLE + " (01-a.ipynb)", "not a notebook Jupyter can read", "Save Notebook"),
    (TOO_LARGE + " (01-a.ipynb: 9.0 MB; the limit is 5 MB)", "too large to grade", "Clear the outputs"),
    ("autograde error: KeyError: 'x'", "could not be graded", "in a fresh kernel"),
])
def test_each_reason_says_what_happened_and_what_to_do(reason, says, todo):
    shown = text(reason)
    assert says in shown and todo in shown and reason in shown and "not a zero" in shown


def test_a_reason_the_student_influenced_is_shown_inert():
    raw = page("01-a", "01-a", "autograde error: KeyError: '<script>alert(1)</script>'")
    assert "<script>" not in raw and "&lt;script&gt;" in raw
