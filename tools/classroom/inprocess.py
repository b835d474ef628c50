"""nbgrader's commands run in this process, as a shell would run them from a folder (config files
included), with what they log kept instead of printed: the simulated term's steps
(`tools.classroom`) and the tests use them."""
from __future__ import annotations

import io
import logging
import os
import sys


class CommandFailed(RuntimeError):
    pass


def nbgrader(argv: list[str], cwd: str, app_class=None, echo=None) -> str:
    """Run ``nbgrader ARGV`` from ``cwd`` in this process (as ``nbgrader`` would from a shell,
    config files included) and return its log; raise `CommandFailed` if it exits non-zero."""
    from jupyter_core.application import NoStart
    if app_class is None:
        from nbgrader.apps import NbGraderApp as app_class
    if echo:
        echo("$ " + ("nbgrader" if app_class.__name__ == "NbGraderApp" else
                     "python -m grader.instructor") + " " + " ".join(argv))
    old = os.getcwd()
    buff = io.StringIO()
    os.chdir(cwd)
    app = app_class.instance()
    code = 0
    try:
        app.initialize(argv)
        sub = app
        while sub is not None:              # the command's terminal output goes to the log
            for handler in sub.log.handlers:
                if isinstance(handler, logging.StreamHandler) and handler.stream in (
                        sys.stderr, sys.stdout):
                    handler.setLevel(logging.CRITICAL + 1)
            sub = getattr(sub, "subapp", None)
        app.init_logging(logging.StreamHandler, [buff], color=False, subapps=True)
        app.start()
    except NoStart:
        pass
    except SystemExit as exit_:
        code = exit_.code or 0
    finally:
        app.reset()
        os.chdir(old)
    if code:
        raise CommandFailed(f"nbgrader {' '.join(argv)} exited {code}:\n{buff.getvalue()}")
    return buff.getvalue()


class Tee(io.StringIO):
    """Keeps what is written, and passes it on to ``also`` (the terminal) as it comes."""

    def __init__(self, also=None):
        super().__init__()
        self.also = also

    def write(self, text):
        if self.also is not None:
            self.also.write(text)
            self.also.flush()
        return super().write(text)
