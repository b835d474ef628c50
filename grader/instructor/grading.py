"""Grade one submission in whichever process calls: autograde's workers, or a Dask task.

`grade_submission` is nbgrader's own ``Autograde`` of one submission (what ``nbgrader autograde
ASSIGNMENT --student S --force`` runs) with the course folder's nbgrader_config.py and the run's
`RunSettings`: its nbgrader options, its secret hidden-case seed and its warm compilation cache,
so every submission of a run is judged on the same cases wherever it is graded. The first call
in a process sets nbgrader up there (the course folder becomes the process's current folder, as
nbgrader's apps need: they read its nbgrader_config.py); later calls reuse it. It writes the
gradebook and the autograded folder and returns nbgrader's ``capture_log`` result (``success``,
``log``, ``error``) with the failure's ``reason``, named here from the exception object
(`failures.outcome`: it crosses the process boundary as text); the grading status is
recorded by the autograde steps and by the caller (`AutogradeEach`).
"""
from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass

_APPS: dict = {}           # (course folder, settings) -> this process's configured app


@dataclass(frozen=True)
class RunSettings:
    """What every submission of one run is graded with, whichever process grades it."""
    argv: tuple[str, ...] = ()     # the run's nbgrader options, e.g. ("--Execute.timeout=20",)
    seed: int = -1                 # the run's secret hidden-case seed (-1: fresh per notebook)
    compile_cache: str = ""        # the warm compilation cache students' children read ("": none)
    log_path: str = ""             # where nbgrader's log of this process is appended ("": none)

    def overrides(self) -> dict:
        judge = {"seed": self.seed}
        if self.compile_cache:
            judge["compile_cache"] = self.compile_cache
        return {"JudgeExercises": judge}


def grade_submission(course: str, assignment: str, student: str, settings: RunSettings,
                     tries: int = 3) -> dict:
    """nbgrader's autograde of ``student``'s ``assignment`` in ``course``, in this process. A
    submission that met a locked SQLite gradebook (another process writing) is graded again."""
    app = _app(os.path.abspath(course), settings)
    for attempt in range(tries):
        result = app.autograde(assignment, student)
        if result["success"] or not result.get("locked") or attempt == tries - 1:
            return result
        time.sleep(0.5 * (attempt + 1))
    return result


def _app(course: str, settings: RunSettings):
    key = (course, settings)
    if key not in _APPS:
        _APPS[key] = _configured(course, settings)
    return _APPS[key]


def _configured(course: str, settings: RunSettings):
    from traitlets.config import Config

    from .autograde import AutogradeEach
    os.chdir(course)
    app = AutogradeEach()
    app.initialize(list(settings.argv))
    app.update_config(Config(settings.overrides()))
    # Kernels over ZeroMQ ipc pick their socket files by probing KernelManager.ip-1, -2, ...;
    # processes starting kernels at once would pick the same ones: each gets its own prefix.
    km = app.config.get("KernelManager", {})
    if km.get("transport") == "ipc" and km.get("ip"):
        app.config.KernelManager.ip = f"{km['ip']}-w{os.getpid()}"
    app._quiet_console()
    if settings.log_path:
        _log_to(app, settings.log_path)
    return app


def _log_to(app, path: str) -> None:
    handler = logging.FileHandler(path, mode="a")
    from .console import SafeFormatter
    handler.setFormatter(SafeFormatter(
        f"%(asctime)s [%(levelname)s] [worker {os.getpid()}] %(message)s"))
    handler.setLevel(logging.INFO)
    app.log.addHandler(handler)
    if isinstance(app.log_level, int) and app.log_level > logging.INFO:
        app.log.setLevel(logging.INFO)
    logging.captureWarnings(True)
    logging.getLogger("py.warnings").addHandler(handler)
    logging.getLogger("py.warnings").propagate = False


def worker_init() -> None:
    """A worker of autograde's pool: Ctrl-C is the parent's to handle (it stops the batch)."""
    import signal
    signal.signal(signal.SIGINT, signal.SIG_IGN)
