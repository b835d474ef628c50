"""Grade a run's submissions in ``jobs`` worker processes on this machine (autograde's
``--jobs N``; `distributed` is the same across machines)."""
from __future__ import annotations

import concurrent.futures as cf
import contextlib
import multiprocessing
import os
import time

from ..nbgrader_plugins import GRADING
from . import grading, submissions
from .failures import failure_reason


def grade_in_pool(app, status, todo, jobs, settings, report) -> None:
    """Grade whole submissions in ``jobs`` worker processes, each a long-lived copy of this
    app (`grading.grade_submission`; nbgrader's start-up paid once per worker, not per
    student). The workers write the gradebook and their steps' grading status (SQLite serialises
    them, and a submission that met a locked database is graded again); this process
    marks each submission ``grading`` when it is handed out and records its outcome."""
    todo = list(todo)
    course = os.getcwd()
    pool = cf.ProcessPoolExecutor(max_workers=jobs, initializer=grading.worker_init,
                                  mp_context=multiprocessing.get_context("spawn"))
    running = {}

    def submit_next():
        """Queue submissions until ``jobs`` are being graded; only those are marked
        ``grading``, so a run killed half-way leaves at most ``jobs`` unfinished."""
        while todo and len(running) < jobs:
            assignment, student, here = todo.pop(0)
            status.record(app.coursedir, assignment, student, GRADING, "",
                          here.timestamp, here.digest)
            fut = pool.submit(grading.grade_submission, course, assignment, student,
                              settings)
            running[fut] = (assignment, student, here, time.monotonic())

    try:
        submit_next()
        while running:
            finished, _ = cf.wait(list(running), return_when=cf.FIRST_COMPLETED)
            for fut in finished:
                assignment, student, here, start = running.pop(fut)
                try:
                    result = fut.result()
                except Exception as err:  # a worker that died fails its student only
                    result = {"success": False, "reason": failure_reason(err)}
                outcome = submissions.settle(app, status, assignment, student, here, result)
                report(assignment, student, outcome, time.monotonic() - start)
            submit_next()
    except BaseException:
        # Ctrl-C (or a KeyboardInterrupt a worker reported): students being graded stay
        # "grading" and are graded again by the next run.
        for proc in list((getattr(pool, "_processes", None) or {}).values()):
            with contextlib.suppress(Exception):
                proc.terminate()
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown(wait=True)

