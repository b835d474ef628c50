"""Why nbgrader's autograde of one submission failed, read from the exception that failed it.

nbgrader's ``Autograde`` catches whatever fails a submission, logs it and goes on to the next.
`RecordingAutograde` is that converter keeping the exception object as well, and
`failure_reason` names it: by its type (a kernel that died, a timeout, a limit the kernel hit,
a notebook that is not JSON), else as ``autograde error: Type: message`` made safe to show. The
log's text, which quotes what the student chose (a grade id holding a newline and a formula,
say), is never read for a reason.
"""
from __future__ import annotations

import functools

from nbgrader.converters import Autograde

from ..judge.failure import chain, failure_reason  # noqa: F401  (re-exported for the batch)


class RecordingAutograde(Autograde):
    """nbgrader's Autograde; ``failure`` is the first exception that failed the submission."""

    failure: BaseException | None = None

    def start(self):
        self.failure = None
        return _kept(Autograde.start)(self)


def _kept(method):
    @functools.wraps(method)
    def keeping(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except BaseException as err:
            if self.failure is None:
                self.failure = err
            raise
    return keeping


# Every step nbgrader runs inside its per-submission ``try`` (BaseConverter.convert_notebooks).
for _name in ("run_pre_convert_hook", "init_assignment", "convert_single_notebook",
              "set_permissions", "run_post_convert_hook"):
    setattr(RecordingAutograde, _name, _kept(getattr(Autograde, _name)))


def outcome(converter: RecordingAutograde, result: dict) -> dict:
    """nbgrader's ``capture_log`` result with what the caller needs, as plain data (it crosses
    process boundaries): ``reason`` when it failed, ``interrupted`` for Ctrl-C, ``locked`` when
    a SQLite gradebook was busy (worth another try)."""
    err = converter.failure
    return dict(result, reason="" if result["success"] else failure_reason(err),
                interrupted=isinstance(err, KeyboardInterrupt), locked=_locked(err))


def _locked(err: BaseException | None) -> bool:
    import sqlalchemy.exc
    return err is not None and any(isinstance(e, sqlalchemy.exc.OperationalError)
                                   and "database is locked" in str(e) for e in chain(err))
