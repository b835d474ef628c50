"""Autograde every collected submission, ``--jobs`` at a time, and record what became of each.

This is nbgrader's own ``Autograde`` converter (what ``nbgrader autograde ASSIGNMENT --student S
--force`` runs), called once per submission with the course's configuration, so:

* one bad submission never stops the batch: its failure (kernel died, timed out, unreadable
  notebook) is recorded with its reason and the next student is graded;
* the status file (`grader.nbgrader_plugins.GradingStatus`) says ``grading`` while a student is
  being graded and ``graded``/``failed``/``missing`` once done, so a run killed half-way leaves at
  most one student per worker unfinished, marked as such, and the next run grades them again;
* ``--jobs N`` (default: one per CPU core) grades N submissions at once, each in a long-lived
  worker process running this same app (nbgrader's start-up is paid once per worker); only this
  process writes the status file, and only N students are ever marked ``grading`` at once;
  ``--jobs 1`` grades one after another in this process;
* every submission of a run is judged on the same hidden cases (a secret seed drawn per run),
  and before the first student the instructor's solutions are judged on them once, filling a
  compilation cache the students' judge children read (``--no-warm`` skips this);
* re-running is idempotent: a submission already graded or failed, and unchanged since, is skipped
  (``--force`` grades everything again).

* one autograde per gradebook at a time: a second run waits for the first (a file lock beside a
  SQLite gradebook, an advisory lock inside a PostgreSQL one; `grader.nbgrader_plugins.lock`),
  then skips what the first graded.

The terminal gets one line per submission and a closing table (graded, late, overridden, blank,
flagged for manual grading, failed, missing; the slowest submissions; `grader.instructor.console`).
Everything else, nbgrader's log and whatever kernels, judge children and workers print
(ipykernel's "To connect another client ..." banner), goes to ``autograde.log`` in the course
folder.

Options are nbgrader's (``--Execute.timeout=20``, ``--student=ID``, ``--course-dir=...``).
"""
from __future__ import annotations

import contextlib
import glob
import logging
import os
import re
import secrets
import sys
import tempfile
import time

from nbgrader.api import Gradebook
from nbgrader.apps.baseapp import NbGrader, nbgrader_aliases, nbgrader_flags
from nbgrader.converters import Autograde, BaseConverter
from nbgrader.utils import capture_log, temp_attrs
from traitlets import Bool, Int, Unicode, default
from traitlets.config import Config

from ..judge import runner, sandbox, warm
from ..judge.execute import MARK as LIMIT_MARK
from ..judge.preprocessor import JudgeExercises
from ..nbgrader_plugins import (FAILED, GRADED, GRADING, KERNEL_DIED, MISSING, TIMED_OUT,
                                UNREADABLE, GradingStatus, autograded_complete,
                                inspect_submission)
from . import console

flags = dict(nbgrader_flags)
flags["force"] = ({"AutogradeEach": {"force": True}},
                  "Grade every submission again, even those graded or failed and unchanged since.")
flags["no-warm"] = ({"AutogradeEach": {"warm_judge": False}},
                    "Do not judge the instructor's solutions first (no shared compilation cache).")
aliases = dict(nbgrader_aliases)
aliases["jobs"] = "AutogradeEach.jobs"


class AutogradeEach(NbGrader):
    name = "inside-vmap-autograde"
    description = ("Autograde every collected submission of the given assignments (default: all "
                   "in the gradebook), --jobs at a time, recording each outcome.")
    aliases = aliases
    flags = flags

    force = Bool(False, help="Grade every submission again, even those already graded or "
                             "failed and unchanged since.").tag(config=True)
    jobs = Int(0, help="Submissions graded at once, each in its own worker process (0: one "
                       "per CPU core; 1: one after another in this process).").tag(config=True)
    warm_judge = Bool(True, help="Draw one secret hidden-case seed for the run and judge the "
                                 "instructor's source notebooks on it first, so every judge "
                                 "child reads a warm JAX compilation cache.").tag(config=True)
    _out = None                         # where this run's own lines go (see _terminal_to_log)
    log_name = Unicode("autograde.log", help="Where the full nbgrader log of every run is "
                       "appended, relative to CourseDirectory.root.").tag(config=True)

    @default("classes")
    def _classes_default(self):
        classes = super()._classes_default()
        classes.extend([BaseConverter, Autograde, GradingStatus, AutogradeEach])
        return classes

    def start(self) -> None:
        super().start()
        root = self.coursedir.root
        status = GradingStatus(parent=self)
        self._quiet_console()
        self._out = sys.stdout
        try:
            with status.exclusive(root, self.coursedir.db_url, self.coursedir.course_id,
                                  wait=True, say=lambda text: self._say(f"autograde: {text}")), \
                    self._logfile(root), self._terminal_to_log(root), \
                    contextlib.ExitStack() as scratch:
                self._scratch = scratch           # what this run leaves behind is removed here
                failures = self.grade_all(status)
        except RuntimeError as err:
            self.fail(str(err))
        # A failed submission is an outcome, not an error of this command: it exits 0 once every
        # submission was tried, and 1 only when it could not start.
        if failures is None:
            self.fail("nothing was graded")

    # ---- the batch -------------------------------------------------------------------------
    def grade_all(self, status: GradingStatus):
        root = self.coursedir.root
        assignments = self._assignments()
        if assignments is None:
            return None
        queue = [(a, s) for a in assignments for s in self._submitted_students(a)]
        self._say(f"autograde: {len(queue)} submission(s) of {', '.join(assignments) or 'nothing'}"
                  f" in {root}")
        self._say(f"autograde: kernels and judge children limited by {sandbox.mechanism()}")
        records = status.load(root)
        # nbgrader's SaveAutoGrades and AssignLatePenalties open the gradebook without a course
        # id, which adds a "default_course" row on first use: made here, once, so parallel
        # workers never race to insert it.
        Gradebook(self.coursedir.db_url).close()
        outcomes = []
        wa = max((len(a) for a, _ in queue), default=0)
        ws = max((len(s) for _, s in queue), default=0)
        wk = len(str(len(queue)))
        done = 0
        started = time.monotonic()

        def report(assignment, student, outcome, seconds):
            nonlocal done
            done += 1
            kind, text = outcome[0], outcome[1]
            if kind == GRADED:                  # graded: which kind of graded, from the gradebook
                kind, text = console.graded_line(self.coursedir, assignment, student, text)
            outcomes.append((assignment, student, kind, text, outcome[2], seconds))
            self._say(f"  [{done:>{wk}}/{len(queue)}] {assignment:<{wa}}  {student:<{ws}}  "
                      f"{text}  ({seconds:.1f} s)")

        jobs = self._jobs()
        self._judge_pending = sorted({a for a, _ in queue})
        if jobs <= 1:
            for assignment, student in queue:
                start = time.monotonic()
                outcome = self.grade_one(status, records, assignment, student)
                report(assignment, student, outcome, time.monotonic() - start)
        else:
            self._grade_parallel(status, records, queue, jobs, report)
        failed = [(a, s, why) for a, s, st, _, why, _ in outcomes if st == FAILED]
        absent = self._report_absent(assignments, {(a, s) for a, s in queue})
        for line in console.table(outcomes, absent, time.monotonic() - started):
            self._say(line)
        for a, s, why in failed:
            self._say(f"  FAILED {a} {s}: {why}")
        self._say(f"autograde: nbgrader's full log is {os.path.join(root, self.log_name)}")
        return failed

    def _say(self, text: str) -> None:
        print(text, file=self._out, flush=True)

    @contextlib.contextmanager
    def _terminal_to_log(self, root: str):
        with console.terminal_to_log(os.path.join(root, self.log_name)) as out:
            self._out = out
            try:
                yield
            finally:
                self._out = sys.stdout

    def grade_one(self, status, records, assignment, student) -> tuple[str, str, str]:
        """Grade one submission; returns (status, what to print, reason)."""
        outcome, here = self._prepare(status, records, assignment, student)
        if outcome is not None:
            return outcome
        self._fix_judge(1)
        result = self.autograde(assignment, student)
        return self._outcome(status, assignment, student, here, result)

    def _prepare(self, status, records, assignment, student):
        """(outcome, None) when nothing needs grading, else (None, submission) once marked
        ``grading`` in the status file."""
        root = self.coursedir.root
        here = inspect_submission(self.coursedir, assignment, student, self._notebooks[assignment])
        if here.state == MISSING:
            status.record(root, assignment, student, MISSING, here.reason, here.timestamp)
            return (MISSING, f"missing: {here.reason}", here.reason), None
        rec = records.get((assignment, student))
        if (not self.force and rec is not None and rec.timestamp == here.timestamp
                and (rec.status == FAILED or (rec.status == GRADED and autograded_complete(
                    self.coursedir, assignment, student, here.notebooks)))):
            return (rec.status, f"{rec.status} earlier, unchanged: {rec.reason}"
                    if rec.status != GRADED else "graded earlier, unchanged", rec.reason), None
        status.record(root, assignment, student, GRADING, "", here.timestamp)
        return None, here

    def _outcome(self, status, assignment, student, here, result) -> tuple[str, str, str]:
        root = self.coursedir.root
        error = (result.get("error") or "").strip().splitlines()
        if error and error[-1].startswith("KeyboardInterrupt"):
            # Ctrl-C: stop the batch; this student stays "grading" and is graded again next run.
            raise KeyboardInterrupt
        if result["success"]:
            status.record(root, assignment, student, GRADED, "", here.timestamp)
            return GRADED, "graded", ""
        reason = here.reason if here.state == "unreadable" else failure_reason(result)
        status.record(root, assignment, student, FAILED, reason, here.timestamp)
        return FAILED, f"FAILED: {reason}", reason

    def autograde(self, assignment: str, student: str) -> dict:
        """nbgrader's own autograde of one submission (as NbGraderAPI.autograde does it)."""
        with temp_attrs(self.coursedir, assignment_id=assignment, student_id=student):
            converter = Autograde(coursedir=self.coursedir, parent=self)
            converter.force = True
            converter.create_student = True
            return capture_log(converter)

    # ---- parallel grading ------------------------------------------------------------------
    def _jobs(self) -> int:
        return self.jobs if self.jobs > 0 else (os.cpu_count() or 1)

    def _grade_parallel(self, status, records, queue, jobs, report) -> None:
        """Grade whole submissions in ``jobs`` worker processes, each a long-lived copy of this
        app (nbgrader's start-up paid once per worker, not per student). This process alone
        writes the status file; the workers write the gradebook (SQLite serialises them, and a
        submission that met a locked database is graded again)."""
        import concurrent.futures as cf
        import multiprocessing

        todo = list(queue)
        log_path = os.path.join(self.coursedir.root, self.log_name)
        argv = list(getattr(self, "argv", []) or [])
        pool = None
        running = {}

        def submit_next():
            """Queue submissions until ``jobs`` are being graded; only those are marked
            ``grading``, so a run killed half-way leaves at most ``jobs`` unfinished."""
            nonlocal pool
            while todo and len(running) < jobs:
                assignment, student = todo.pop(0)
                outcome, here = self._prepare(status, records, assignment, student)
                if outcome is not None:
                    report(assignment, student, outcome, 0.0)
                    continue
                if pool is None:
                    self._fix_judge(jobs)
                    pool = cf.ProcessPoolExecutor(
                        max_workers=jobs, mp_context=multiprocessing.get_context("spawn"),
                        initializer=_worker_init,
                        initargs=(os.getcwd(), argv, log_path, self._judge_overrides))
                fut = pool.submit(_worker_grade, assignment, student)
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
                        result = {"success": False, "log": "",
                                  "error": f"{type(err).__name__}: {err}"}
                    outcome = self._outcome(status, assignment, student, here, result)
                    report(assignment, student, outcome, time.monotonic() - start)
                submit_next()
        except BaseException:
            # Ctrl-C (or a KeyboardInterrupt a worker reported): students being graded stay
            # "grading" and are graded again by the next run.
            if pool is not None:
                for proc in list((getattr(pool, "_processes", None) or {}).values()):
                    with contextlib.suppress(Exception):
                        proc.terminate()
                pool.shutdown(wait=False, cancel_futures=True)
            raise
        if pool is not None:
            pool.shutdown(wait=True)

    # ---- one seed and a warm compilation cache per run ----------------------------------------
    _judge_overrides: dict = {}
    _judge_pending: list = []

    def _fix_judge(self, jobs) -> None:
        """One secret seed for this run's hidden cases, and a cache warmed on it if possible;
        done before the first submission that needs grading (a run that grades none skips it)."""
        assignments, self._judge_pending = self._judge_pending, []
        judge = JudgeExercises(parent=self)
        if not (assignments and judge.enabled):
            return
        fixed = {"seed": judge.seed if judge.seed >= 0 else secrets.randbelow(2 ** 63)}
        cache = self._warm_cache(judge, assignments, fixed["seed"], jobs) \
            if self.warm_judge else None
        if cache:
            fixed["compile_cache"] = cache
        self._judge_overrides = {"JudgeExercises": fixed}
        self.update_config(Config(self._judge_overrides))

    def _warm_cache(self, judge, assignments, seed, jobs) -> str | None:
        """Judge the instructor's solutions on the run's cases, filling a fresh cache."""
        sources = self._source_notebooks(assignments)
        use_bwrap = judge.use_bwrap()
        if not (sources and use_bwrap):   # unboxed children could overwrite a shared cache
            self._say("autograde: no shared compilation cache (" + (
                "no source notebooks" if not sources else "no sandbox to keep it read-only")
                + ")")
            return None
        cache = self._scratch.enter_context(tempfile.TemporaryDirectory(
            prefix="inside-vmap-judge-cache-", ignore_cleanup_errors=True))
        start = time.monotonic()
        found = warm.warm(sources, seed, cache, judge.limits(), use_bwrap, jobs)
        self._say(f"autograde: judged the instructor's solutions on this run's hidden cases "
                  f"({time.monotonic() - start:.1f} s)")
        for w in found:
            if w.error or w.failed:
                self.log.error("warm-up: %s: %s", w.key, w.error or f"fails {w.failed}")
                self._say(f"  WARNING {w.key}: " + (
                    f"could not be judged: {w.error}" if w.error else
                    f"the instructor's solution fails its hidden cases in {', '.join(w.failed)}"
                    "; grades of these exercises may be wrong"))
        return cache

    def _source_notebooks(self, assignments) -> dict[str, str]:
        """``{case key: path}`` of every source notebook of ``assignments``."""
        found = {}
        for a in assignments:
            folder = self.coursedir.format_path(self.coursedir.source_directory, ".", a)
            for path in sorted(glob.glob(os.path.join(folder, "*.ipynb"))):
                found[runner.case_key(a, os.path.splitext(os.path.basename(path))[0])] = path
        return found

    # ---- helpers ---------------------------------------------------------------------------
    def _assignments(self) -> list[str] | None:
        wanted = list(self.extra_args) or ([self.coursedir.assignment_id]
                                           if self.coursedir.assignment_id else [])
        self._notebooks = {}
        with Gradebook(self.coursedir.db_url, self.coursedir.course_id) as gb:
            known = {a.name: [nb.name for nb in a.notebooks] for a in gb.assignments}
        for name in wanted:
            if name not in known:
                self.log.error("No assignment %r in the gradebook: run `make assign` "
                               "(nbgrader generate_assignment) first", name)
                self._say(f"autograde: no assignment {name!r} in the gradebook; generate it "
                          "first (make assign)")
                return None
        self._notebooks = known
        return wanted or sorted(known)

    def _submitted_students(self, assignment: str) -> list[str]:
        pattern = self.coursedir.format_path(self.coursedir.submitted_directory,
                                             self.coursedir.student_id, assignment)
        regexp = self.coursedir.format_path(self.coursedir.submitted_directory,
                                            "(?P<student_id>[^/]+)", assignment, escape=True)
        found = []
        for path in glob.glob(pattern):
            m = re.fullmatch(regexp, path)
            if m and os.path.isdir(path):
                found.append(m.group("student_id"))
        return sorted(found)

    def _report_absent(self, assignments, seen) -> int:
        """Say who submitted nothing (roster students without a submitted folder); their count."""
        if self.coursedir.student_id != "*":
            return 0
        with Gradebook(self.coursedir.db_url, self.coursedir.course_id) as gb:
            roster = sorted(s.id for s in gb.students)
        count = 0
        for a in assignments:
            absent = [s for s in roster if (a, s) not in seen]
            count += len(absent)
            if absent:
                shown = ", ".join(absent[:20]) + (f" and {len(absent) - 20} more"
                                                  if len(absent) > 20 else "")
                self._say(f"  nothing submitted for {a} ({len(absent)}): {shown}")
        return count

    def _quiet_console(self) -> None:
        """nbgrader's INFO and spurious checksum warnings go to the log file, not the terminal."""
        for handler in self.log.handlers:
            if isinstance(handler, logging.StreamHandler) and \
                    getattr(handler, "stream", None) in (sys.stderr, sys.stdout):
                handler.setLevel(max(handler.level, logging.CRITICAL))

    @contextlib.contextmanager
    def _logfile(self, root: str):
        """Everything nbgrader logs (and Python's warnings) goes to the log file for this run."""
        handler = logging.FileHandler(os.path.join(root, self.log_name), mode="a")
        handler.setFormatter(logging.Formatter("%(asctime)s [%(levelname)s] %(message)s"))
        handler.stream.write(f"\n==== autograde started {time.strftime('%Y-%m-%d %H:%M:%S')}\n")
        level = self.log_level
        handler.setLevel(min(level if isinstance(level, int) else logging.getLevelName(level),
                             logging.INFO))
        warned = logging.getLogger("py.warnings")
        self.log.addHandler(handler)
        warned.addHandler(handler)
        warned.propagate, propagated = False, warned.propagate
        logging.captureWarnings(True)
        try:
            yield
        finally:
            logging.captureWarnings(False)
            warned.propagate = propagated
            warned.removeHandler(handler)
            self.log.removeHandler(handler)
            handler.close()


def failure_reason(result: dict) -> str:
    """Why nbgrader's autograde of one submission failed, read from its log and traceback."""
    text = "\n".join(result.get(k) or "" for k in ("log", "error"))
    limit = re.search(re.escape(LIMIT_MARK) + r"(.+)", text)   # execute.KernelLimitExceeded
    if limit:
        return limit.group(1).strip()[:200]
    if re.search(r"CellTimeoutError|UnresponsiveKernelError|Timeout waiting", text):
        return TIMED_OUT
    if re.search(r"DeadKernelError|Kernel died", text):
        return KERNEL_DIED
    if re.search(r"NotJSONError|JSONDecodeError|Notebook does not appear to be JSON", text):
        return UNREADABLE
    errors = [line for line in text.splitlines() if line.strip() and
              not line.startswith(("[INFO]", "[WARNING]", "[DEBUG]"))]
    return "autograde error: " + (errors[-1].strip()[:200] if errors else "unknown (see the log)")


# ---- the worker processes of a parallel run ------------------------------------------------
_WORKER = None


def _worker_init(cwd: str, argv: list[str], log_path: str, overrides: dict) -> None:
    """One worker: this app, configured as the parent was (same folder, same options, the same
    hidden-case seed and compilation cache)."""
    global _WORKER
    import signal
    signal.signal(signal.SIGINT, signal.SIG_IGN)   # Ctrl-C is the parent's to handle
    os.chdir(cwd)
    app = AutogradeEach.instance()
    app.initialize(argv)
    app.update_config(Config(overrides))
    # Kernels over ZeroMQ ipc pick their socket files by probing KernelManager.ip-1, -2, ...;
    # workers starting kernels at once would pick the same ones. Each worker gets its own prefix.
    km = app.config.get("KernelManager", {})
    if km.get("transport") == "ipc" and km.get("ip"):
        app.config.KernelManager.ip = f"{km['ip']}-w{os.getpid()}"
    app._quiet_console()
    handler = logging.FileHandler(log_path, mode="a")
    handler.setFormatter(logging.Formatter(
        f"%(asctime)s [%(levelname)s] [worker {os.getpid()}] %(message)s"))
    handler.setLevel(logging.INFO)
    app.log.addHandler(handler)
    if isinstance(app.log_level, int) and app.log_level > logging.INFO:
        app.log.setLevel(logging.INFO)
    logging.captureWarnings(True)
    logging.getLogger("py.warnings").addHandler(handler)
    logging.getLogger("py.warnings").propagate = False
    _WORKER = app


def _worker_grade(assignment: str, student: str, tries: int = 3) -> dict:
    for attempt in range(tries):
        result = _WORKER.autograde(assignment, student)
        text = (result.get("log") or "") + (result.get("error") or "")
        if result["success"] or "database is locked" not in text or attempt == tries - 1:
            return result
        time.sleep(0.5 * (attempt + 1))
    return result
