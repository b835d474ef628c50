"""Autograde on a Dask cluster: ``make autograde SCHEDULER=tcp://HOST:8786``
(``python -m grader.instructor autograde --scheduler=tcp://HOST:8786``).

`AutogradeEach` hands its queue here when ``--scheduler`` is given. Every submission becomes one
Dask task (`cluster_task.grade_task`), which a worker grades with `grading.grade_submission`,
exactly as a local worker does; the results come back to this process, which alone writes the
grading status and prints the lines, the progress and the closing table. Before anything is graded:

* the workers are checked (`cluster_task.unfit`): each sees the course folder at this path (a
  token file written here is read there), boxes student code as the others do, runs the same
  grading code; a SQLite gradebook is allowed only when every worker is on this host (SQLite's
  locking cannot be shared across machines), else the run stops with one line saying so;
* the instructor's solutions are judged here on the run's secret seed (the warm-up), and the
  compilation cache they fill goes to every worker once (`cluster_task.JudgeCache`).

Faults are Dask's to handle: a worker that dies mid-task has its task re-run on another; a
submission whose task has stopped ``distributed.scheduler.allowed-failures + 1`` workers comes
back as ``KilledWorker`` and is recorded failed, "it stopped N grading workers". A submission
graded twice (a worker that died after writing half its rows) overwrites the same gradebook
rows; one lock per submission (`cluster_task.submission_lock`) keeps two graders off it at once.
Ctrl-C cancels what was handed out (a task already running finishes on its worker, unrecorded);
the grading status and autograde's skipping of what is done make the next run resume.
"""
from __future__ import annotations

import contextlib
import dataclasses
import os
import secrets
import socket
import time

from traitlets import Float, Int
from traitlets.config import LoggingConfigurable

from ..nbgrader_plugins import FAILED, GRADING
from ..nbgrader_plugins.lock import is_postgres
from . import grading, submissions, warmup
from .cluster_task import (
    TOKEN_FILE,
    JudgeCache,
    Run,
    WorkerUnfit,
    code_digest,
    describe,
    grade_task,
    pack,
    probe,
    unfit,
)
from .failures import failure_reason
from .progress import Progress


class ClusterError(RuntimeError):
    """Why the cluster cannot grade this run, in one line (printed, then autograde exits 1)."""


class DaskGrading(LoggingConfigurable):
    """How autograde uses the cluster its ``--scheduler`` names."""

    wait_workers = Float(60.0, help="Seconds to wait for a first worker to join the scheduler "
                                    "before giving up.").tag(config=True)
    per_worker = Int(2, help="Submissions handed to the cluster at once per worker: one being "
                             "graded and one waiting, so no worker idles between two; only "
                             "these are marked 'grading' in the grading status.").tag(config=True)
    progress_every = Float(30.0, help="Seconds between two progress lines when the output is "
                                      "not a terminal (on one it is redrawn in place)."
                           ).tag(config=True)


def grade_on_cluster(app, status, todo, report) -> None:
    """Grade ``todo`` ((assignment, student, submission) each) on ``app.scheduler``'s workers."""
    try:
        _grade_on_cluster(app, status, todo, report, DaskGrading(parent=app))
    except ClusterError as err:
        app.say(f"autograde: {err}")
        raise
    except KeyboardInterrupt:   # said in one line (_grade); 130: what a shell reports for Ctrl-C
        raise SystemExit(130) from None


def _grade_on_cluster(app, status, todo, report, conf) -> None:
    start = time.monotonic()
    course, address = os.getcwd(), app.scheduler
    with _token_file(course) as token, _client(address) as client:
        app.say(f"autograde: Dask scheduler {address}, dashboard {_dashboard(client)}")
        workers = _wait_for_workers(client, address, conf.wait_workers)
        run = _checked(app, client, Run(course, token, app.coursedir.db_url,
                                        app.coursedir.course_id, grading.RunSettings(), (),
                                        code_digest()))
        settings = warmup.run_settings(app, todo, app.jobs_for(len(todo)))     # the warm-up: here
        run = dataclasses.replace(run, settings=settings,
                                  cache=_ship_cache(client, settings.compile_cache, token))
        app.say(f"autograde: grading {len(todo)} submission(s) on the Dask cluster at "
                 f"{address} ({len(workers)} worker(s), {describe(run.boxes)})")
        try:
            graded_s = _grade(client, app, status, todo, run, report, conf)
        finally:
            if run.cache:
                with contextlib.suppress(Exception):
                    client.unregister_worker_plugin(run.cache)
        setup_s = time.monotonic() - start - graded_s
        app.say(f"autograde: on the cluster: {len(todo)} submission(s) in {graded_s:.1f} s "
                 f"of grading after {setup_s:.1f} s of set-up "
                 f"({len(todo) / max(graded_s, 1e-9) * 60:.1f} per minute)")


# ---- the cluster and its workers ----------------------------------------------------------------
@contextlib.contextmanager
def _client(address: str):
    from distributed import Client
    try:
        client = Client(address, timeout="15s", set_as_default=False)
    except (OSError, TimeoutError, ValueError) as err:
        raise ClusterError(f"no Dask scheduler answers at {address} ({err}); start one with "
                           "`make scheduler` (docs/performance.md, \"Grading on a cluster\")") from None
    try:
        yield client
    finally:
        client.close()


def _dashboard(client) -> str:
    try:
        return client.dashboard_link
    except Exception:   # no bokeh where the scheduler runs: it serves no dashboard
        return "none (the scheduler has no bokeh)"


def _wait_for_workers(client, address: str, wait_s: float) -> dict:
    try:
        client.wait_for_workers(1, timeout=wait_s)
    except TimeoutError:
        raise ClusterError(f"no worker joined the scheduler at {address} within {wait_s:.0f} s;"
                           f" start some with `make workers SCHEDULER={address}`") from None
    return client.nthreads()


def _checked(app, client, run: Run) -> Run:
    """``run`` with what every worker must be, once every current worker is fit for it."""
    found = client.run(probe, run.course, run.token, on_error="return")
    broken = {w: f for w, f in found.items() if isinstance(f, BaseException)}
    if broken:
        w, err = next(iter(broken.items()))
        raise ClusterError(f"worker {w} could not be probed ({type(err).__name__}: {err}); is"
                           " the course's checkout and .venv there? (`make setup`)")
    here = socket.gethostname()
    hosts = sorted({f["host"] for f in found.values()})
    if not is_postgres(run.db_url):
        if hosts != [here]:
            raise ClusterError(f"a SQLite gradebook cannot be shared across hosts (workers on "
                               f"{', '.join(hosts)}; this is {here}): set "
                               "CourseDirectory.db_url to a PostgreSQL database")
        run = dataclasses.replace(run, sqlite_host=here)
    kinds = {tuple(f["boxes"]) for f in found.values()}
    if len(kinds) > 1:
        raise ClusterError("the workers limit student code differently (" + "; ".join(
            f"{w}: {describe(f['boxes'])}" for w, f in sorted(found.items())) +
            "): grades could differ between them")
    run = dataclasses.replace(run, boxes=kinds.pop())
    for w, f in sorted(found.items()):
        why = unfit(run, f, w)
        if why:
            raise ClusterError(why)
    if not run.boxes[0]:
        app.say("autograde: WARNING: no worker has bubblewrap: student code runs unboxed")
    return run


@contextlib.contextmanager
def _token_file(course: str):
    """A file only this run's workers can read where the instructor reads it: the same
    folder, not merely the same path on another disk."""
    token, path = secrets.token_hex(8), os.path.join(course, TOKEN_FILE)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(token + "\n")
    try:
        yield token
    finally:
        with contextlib.suppress(OSError):
            os.unlink(path)


def _ship_cache(client, folder: str, token: str) -> str:
    """The warm cache onto every worker's local disk, once; its plugin's name ("": none)."""
    if not folder:
        return ""
    name = f"inside-vmap-judge-cache-{token}"
    client.register_plugin(JudgeCache(pack(folder), name), name=name)
    return name


# ---- the run ------------------------------------------------------------------------------------
def _grade(client, app, status, todo, run: Run, report, conf) -> float:
    """Hand the submissions out, ``per_worker`` per worker at a time; record each result as
    it comes. Returns the seconds from the first hand-out to the last result."""
    pending, running = list(todo), {}
    progress = Progress(len(todo), app.out, conf.progress_every)
    started = time.monotonic()

    def hand_out(workers: int) -> None:
        while pending and len(running) < conf.per_worker * max(1, workers):
            assignment, student, here = pending.pop(0)
            status.record(app.coursedir, assignment, student, GRADING, "", here.timestamp, here.digest)
            future = client.submit(grade_task, run, assignment, student, pure=False,
                                   key=("autograde", f"{assignment}/{student}", run.token))
            running[future] = (assignment, student, here, time.monotonic())

    try:
        hand_out(len(client.nthreads()))
        while running:
            finished = [f for f in running if f.done()]
            if not finished:
                time.sleep(0.25)
            for future in finished:
                assignment, student, here, at = running.pop(future)
                outcome = _outcome(app, status, future, assignment, student, here)
                progress.clear()
                report(assignment, student, outcome, time.monotonic() - at)
                progress.done(outcome[0] == FAILED)
            workers = len(client.nthreads())
            hand_out(workers)
            progress.show(workers, force=bool(finished) and not running)
    except BaseException as err:
        progress.clear()
        client.cancel(list(running), force=True)
        if isinstance(err, KeyboardInterrupt):
            app.say(f"autograde: stopped: {len(running)} submission(s) handed out were "
                     f"cancelled (any already being graded finishes on its worker, unrecorded) "
                     f"and {len(pending)} not handed out; the next run grades them")
        raise
    progress.clear()
    return time.monotonic() - started


def _outcome(app, status, future, assignment, student, here) -> tuple[str, str, str]:
    """What became of one task, as autograde records and prints it."""
    from concurrent.futures import CancelledError

    from distributed import KilledWorker
    try:
        result = future.result()
    except KilledWorker as err:
        reason = f"it stopped {err.allowed_failures + 1} grading workers"
        status.record(app.coursedir, assignment, student, FAILED, reason, here.timestamp,
                      here.digest)
        return FAILED, f"FAILED: {reason}", reason
    except WorkerUnfit as err:
        raise ClusterError(str(err)) from None
    except CancelledError:
        raise ClusterError(f"the scheduler dropped {assignment}/{student} (restarted, or lost "
                           "this client); run autograde again to grade what is left") from None
    except Exception as err:  # an error of the grading itself fails this submission only
        result = {"success": False, "reason": failure_reason(err)}
    return submissions.settle(app, status, assignment, student, here, result)
