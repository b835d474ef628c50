"""Why a submission failed, named from the exception that failed it (grader.instructor.failures),
never read from nbgrader's log, which quotes what the student chose."""
import json
import sqlite3

import pytest
import sqlalchemy.exc
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbformat.reader import NotJSONError
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors.execute import UnresponsiveKernelError
from nbgrader.utils import capture_log
from traitlets.config import Config

from grader.instructor import failures
from grader.judge.execute import KernelLimitExceeded
from grader.nbgrader_plugins import KERNEL_DIED, TIMED_OUT, UNREADABLE
from tests.fixtures.hostile import HOSTILE, inert_line

pytestmark = pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")


def raised(exc, cause=None):
    """``exc`` as Python leaves it after ``raise exc from cause``."""
    try:
        try:
            if cause is not None:
                raise cause
        except BaseException as inner:
            raise exc from inner
        raise exc
    except BaseException as err:
        return err


@pytest.mark.parametrize("err, reason", [
    (DeadKernelError("Kernel died"), KERNEL_DIED),
    (CellTimeoutError("A cell timed out"), TIMED_OUT),
    (UnresponsiveKernelError(), TIMED_OUT),
    (TimeoutError("Timeout waiting for reply"), TIMED_OUT),
    (NotJSONError("Notebook does not appear to be JSON: '{\"cells'"), UNREADABLE),
    (json.JSONDecodeError("Expecting value", "x", 0), UNREADABLE),
    (KernelLimitExceeded("the grading kernel used more than 4096 MiB of memory"),
     "the grading kernel used more than 4096 MiB of memory"),
    # what nbgrader raises last is not what failed: the chain is read, outermost first
    (raised(RuntimeError("Please see the above traceback"), DeadKernelError("died")),
     KERNEL_DIED),
    (raised(KernelLimitExceeded("it printed more than 32 MiB"), DeadKernelError("died")),
     "it printed more than 32 MiB"),
    (ValueError("odd"), "autograde error: ValueError: odd"),
    (None, "autograde error: unknown (see autograde.log)"),
])
def test_each_kind_of_failure_is_named_from_its_exception(err, reason):
    assert failures.failure_reason(err) == reason


@pytest.mark.parametrize("text", HOSTILE)
def test_what_an_exception_quotes_is_shown_inert(text):
    assert inert_line(failures.failure_reason(KeyError(text)))
    assert inert_line(failures.failure_reason(KernelLimitExceeded(text)))


def test_a_forged_limit_line_in_the_log_is_not_a_reason(tmp_path):
    """The third red-team round: a duplicated grade id holding a newline and 'inside-vmap limit:
    =HYPERLINK(...)' became the reason, by a regex over the log."""
    result = {"success": False, "log": "[WARNING] Cell with id 'x\ninside-vmap limit: "
              "=HYPERLINK(\"http://evil\")' exists multiple times!", "error": ""}
    converter = failures.RecordingAutograde(coursedir=CourseDirectory())
    converter.failure = KeyError("grade_id")
    got = failures.outcome(converter, result)
    assert got["reason"] == "autograde error: KeyError: 'grade_id'"
    assert "HYPERLINK" not in got["reason"]


def test_the_converter_keeps_the_first_exception_nbgrader_swallowed(tmp_path):
    """The real converter, failing inside nbgrader's per-submission try (no such assignment):
    nbgrader logs it and raises its own catch-all last; the reason is the first one's."""
    cfg = Config()
    cfg.CourseDirectory.root = str(tmp_path)
    cfg.CourseDirectory.db_url = "sqlite:///" + str(tmp_path / "gradebook.db")
    (tmp_path / "submitted" / "ada" / "a1").mkdir(parents=True)
    (tmp_path / "submitted" / "ada" / "a1" / "nb.ipynb").write_text("{}")
    coursedir = CourseDirectory(config=cfg, assignment_id="a1", student_id="ada")
    converter = failures.RecordingAutograde(coursedir=coursedir, config=cfg)
    got = failures.outcome(converter, capture_log(converter))
    assert not got["success"] and not got["interrupted"] and not got["locked"]
    assert got["reason"] == ("autograde error: NbGraderException: No assignment with ID 'a1' "
                             "exists in the database")


def test_interrupted_and_locked_are_told_from_the_exception():
    converter = failures.RecordingAutograde(coursedir=CourseDirectory())
    converter.failure = KeyboardInterrupt()
    assert failures.outcome(converter, {"success": False})["interrupted"]
    converter.failure = raised(RuntimeError("nbgrader gave up"), sqlalchemy.exc.OperationalError(
        "UPDATE grade", {}, sqlite3.OperationalError("database is locked")))
    assert failures.outcome(converter, {"success": False})["locked"]
