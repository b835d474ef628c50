"""Why a submission's autograde failed, named from the exception that failed it (never from the
log, which quotes what the student wrote): the first known kind along its chain (a limit the
grading kernel hit, a timeout, a kernel that died, a notebook that is not JSON), else its type and
message made safe to show. Used where the failure is recorded (`grader.judge.execute`, for every
front end) and by the batch (`grader.instructor.failures`)."""
from __future__ import annotations

import json

from nbclient.exceptions import DeadKernelError
from nbformat.reader import NotJSONError
from nbgrader.preprocessors.execute import UnresponsiveKernelError

from ..nbgrader_plugins import safe
from ..nbgrader_plugins.states import KERNEL_DIED, TIMED_OUT, UNREADABLE

MARK = "inside-vmap limit: "       # how the message starts in nbgrader's log; .reason is the reason


class KernelLimitExceeded(RuntimeError):
    def __init__(self, reason: str):
        super().__init__(MARK + reason)
        self.reason = reason



def failure_reason(err: BaseException | None) -> str:
    """One line for the grading status, the terminal and the export: the first known kind of
    failure along the exception's chain, else its type and message."""
    if err is None:
        return "autograde error: unknown (see autograde.log)"
    for link in chain(err):
        known = _known(link)
        if known:
            return known
    return safe.text(f"autograde error: {type(err).__name__}: {err}", 200)


def chain(err: BaseException):
    """``err``, then what caused it (``raise ... from``) or was being handled, once each."""
    seen = set()
    while err is not None and id(err) not in seen:
        seen.add(id(err))
        yield err
        err = err.__cause__ or err.__context__


def _known(err: BaseException) -> str:
    if isinstance(err, KernelLimitExceeded):
        return safe.text(err.reason, 200)
    if isinstance(err, (TimeoutError, UnresponsiveKernelError)):   # nbclient's CellTimeoutError too
        return TIMED_OUT
    if isinstance(err, DeadKernelError):
        return KERNEL_DIED
    if isinstance(err, (NotJSONError, json.JSONDecodeError)):
        return UNREADABLE
    return ""
