"""Autograde every collected submission, ``--jobs`` at a time, and record what became of each.

This is nbgrader's own ``Autograde`` converter (what ``nbgrader autograde ASSIGNMENT --student S
--force`` runs), called once per submission with the course's configuration, so:

* one bad submission never stops the batch: its failure (kernel died, timed out, unreadable
  or too large notebook) is recorded with its reason, named from nbgrader's exception (never read
  from its log, which quotes what the student wrote; `grader.instructor.failures`), and the next
  student is graded;
* the grading status in the gradebook (`grader.nbgrader_plugins.GradingStatus`, which nbgrader's
  own autograde writes too, from the course's autograde steps) says ``grading`` while a student is
  being graded and ``graded``/``failed``/``missing`` once done, so a run killed half-way leaves at
  most one student per worker unfinished, marked as such, and the next run grades them again;
* ``--jobs N`` grades N submissions at once, each in a long-lived worker process
  (`grader.instructor.pool`, `grading.grade_submission`: nbgrader's start-up paid once per
  worker; `grading.Grader` grades each submission wherever it is graded, and this app only
  batches); this process marks a student ``grading`` when it hands it out, and only N are ever marked
  ``grading`` at once; ``--jobs 1`` grades one after another in this process. The default sizes
  the pool to the run: one worker per ``per_worker`` submissions to grade, up to one per core,
  and a run of fewer (a regrade, one student) is graded here, where no worker's start-up is paid;
* every submission of a run is judged on the same hidden cases (a secret seed drawn per run),
  and before the first student the instructor's solutions are judged on them once, filling a
  compilation cache the students' judge children read, when some assignment has ``warm_min``
  submissions to grade (``--no-warm`` skips it always; `grader.instructor.warmup`); each
  judge's child starts beside its kernel (`grader.judge.ahead`);
* re-running is idempotent: a submission already graded or failed, and unchanged since, is skipped
  (``--force`` grades everything again). Unchanged means the same content (a digest of the
  notebooks, in the grading status), never the same timestamp, and nothing unchanged is parsed
  again (`grader.instructor.submissions`).

* one autograde per gradebook at a time: a second run waits for the first (a file lock beside a
  SQLite gradebook, an advisory lock inside a PostgreSQL one; `grader.nbgrader_plugins.lock`),
  then skips what the first graded.

The terminal gets one line per submission (ids and reasons made safe to show: `safe.line`) and a
closing table (graded, late, overridden, blank,
flagged for manual grading, failed, missing; the slowest submissions; `grader.instructor.console`).
Everything else, nbgrader's log and whatever kernels, judge children and workers print
(ipykernel's "To connect another client ..." banner), goes to ``autograde.log`` in the course
folder.

Options are nbgrader's (``--Execute.timeout=20``, ``--student=ID``, ``--course-dir=...``).
"""
from __future__ import annotations

import contextlib
import os
import sys
import time

# (grader/instructor/__init__.py, imported first, has taken jsonschema's IRI grammar out)
from nbgrader.api import Gradebook
from nbgrader.apps.baseapp import nbgrader_aliases, nbgrader_flags
from traitlets import Bool, Int, Unicode, default

from ..judge import sandbox
from ..judge.execute import BoundedExecute
from ..judge.preprocessor import JudgeExercises
from ..nbgrader_plugins import FAILED, GRADED, GRADING, GradingStatus, safe
from ..nbgrader_plugins.received import ReceivedTimes
from . import console, pool, submissions, warmup
from .grading import Grader

flags = dict(nbgrader_flags)
flags["force"] = ({"AutogradeEach": {"force": True}},
                  "Grade every submission again, even those graded or failed and unchanged since.")
flags["no-warm"] = ({"AutogradeEach": {"warm_judge": False}},
                    "Do not judge the instructor's solutions first (no shared compilation cache).")
aliases = dict(nbgrader_aliases)
aliases["jobs"] = "AutogradeEach.jobs"
aliases["scheduler"] = "AutogradeEach.scheduler"     # grading on a Dask cluster


class AutogradeEach(Grader):
    name = "inside-vmap-autograde"
    description = ("Autograde every collected submission of the given assignments (default: all "
                   "in the gradebook), --jobs at a time, recording each outcome.")
    aliases = aliases
    flags = flags

    force = Bool(False, help="Grade every submission again, even those already graded or "
                             "failed and unchanged since.").tag(config=True)
    jobs = Int(0, help="Processes grading at once: N worker processes, each grading one "
                       "submission at a time; 1: one after another in this process; 0: one "
                       "worker per per_worker submissions to grade, up to one per CPU core "
                       "(1, this process, when there are fewer).").tag(config=True)
    per_worker = Int(3, help="With jobs=0, how many submissions to grade a worker process must "
                             "have to be started: its start-up (Python, nbgrader, then JAX on "
                             "its first judge, ~2-3 s of CPU) pays only over several."
                     ).tag(config=True)
    warm_judge = Bool(True, help="Judge the instructor's source notebooks on the run's hidden "
                                 "cases first, so every judge child reads a warm JAX "
                                 "compilation cache (see warm_min).").tag(config=True)
    warm_min = Int(3, help="The warm-up runs only when some assignment has at least this many "
                           "submissions to grade: it costs about one uncached judge child per "
                           "notebook and saves part of every later one's compiling, so it "
                           "cannot pay for one or two.").tag(config=True)
    scheduler = Unicode("", help="A Dask scheduler's address (tcp://HOST:8786): grade every "
                        "submission as one task on its workers (grader.instructor.distributed; "
                        "needs a PostgreSQL gradebook unless every worker is on this host). "
                        "Empty: grade on this machine.").tag(config=True)
    out = None          # where this run's own lines go (`say`; the log while grading)
    scratch = None      # an ExitStack: what this run leaves behind is removed when it ends
    notebooks: dict = {}        # each assignment's notebook names, from the gradebook
    log_name = Unicode("autograde.log", help="Where the full nbgrader log of every run is "
                       "appended, relative to CourseDirectory.root.").tag(config=True)

    @default("classes")
    def _classes_default(self):
        classes = super()._classes_default()
        classes.extend([GradingStatus, ReceivedTimes, AutogradeEach])
        return classes

    def start(self) -> None:
        super().start()
        root = self.coursedir.root
        status = GradingStatus(parent=self)
        self.quiet_console()
        self.out = sys.stdout
        try:
            with status.exclusive(root, self.coursedir.db_url, self.coursedir.course_id,
                                  wait=True, say=lambda text: self.say(f"autograde: {text}")), \
                    self._logfile(root), self._terminal_to_log(root), \
                    contextlib.ExitStack() as scratch:
                self.scratch = scratch
                failed = self.grade_all(status)
        except RuntimeError as err:
            self.fail(str(err))
        # A failed submission is an outcome, not an error of this command: it exits 0 once every
        # submission was tried, and 1 only when it could not start.
        if failed is None:
            self.fail("nothing was graded")

    # ---- the batch -------------------------------------------------------------------------
    def grade_all(self, status: GradingStatus):
        root = self.coursedir.root
        found = submissions.assignments(self)
        if found is None:
            return None
        assignments, self.notebooks = found
        queue = [(a, s) for a in assignments
                 for s in submissions.submitted_students(self.coursedir, a)]
        self.say(f"autograde: {len(queue)} submission(s) of {', '.join(assignments) or 'nothing'}"
                  f" in {root}")
        # How the sandbox works here is for the log (docs/integrity.md), not for the terminal.
        self.log.info("kernels and judge children limited by %s", sandbox.mechanism())
        judge, execute = JudgeExercises(parent=self), BoundedExecute(parent=self)
        boxed = sandbox.available()
        if judge.fork_children and judge.sandbox != "none" and boxed:
            self.log.info("judge children forked from one zygote per grading process, each in "
                          "namespaces of its own (JudgeExercises.fork_children)")
        if execute.fork_kernels and execute.sandbox != "none" and boxed:
            self.log.info("grading kernels forked from one zygote per grading process, each in "
                          "its own cgroup and namespaces (BoundedExecute.fork_kernels)"
                          if sandbox.cgroups() else "grading kernels start in boxes of their "
                          "own: no cgroup can be made here to hold a forked one")
        records = status.load(self.coursedir)
        # nbgrader's SaveAutoGrades and AssignLatePenalties open the gradebook without a course
        # id, which adds a "default_course" row on first use: made here, once, so parallel
        # workers never race to insert it.
        Gradebook(self.coursedir.db_url).close()
        outcomes = []
        wa = max((len(a) for a, _ in queue), default=0)
        ws = max((len(s) for _, s in queue), default=0)
        wk = len(str(len(queue)))
        started = time.monotonic()

        times = ReceivedTimes(parent=self)
        received = times.load(root)

        def report(assignment, student, outcome, seconds):
            kind, text = outcome[0], outcome[1]
            if kind == GRADED:                  # graded: which kind of graded, from the gradebook
                kind, text = console.graded_line(self.coursedir, assignment, student, text,
                                                 times.note(received.get((assignment, student))))
            outcomes.append((assignment, student, kind, text, outcome[2], seconds))
            self.say(f"  [{len(outcomes):>{wk}}/{len(queue)}] {assignment:<{wa}}  "
                      f"{student:<{ws}}  {text}  ({seconds:.1f} s)")

        todo = []
        for assignment, student in queue:
            outcome, here = submissions.check(self, status, records, assignment, student)
            if outcome is None:
                todo.append((assignment, student, here))
            else:
                report(assignment, student, outcome, 0.0)
        if todo and self.scheduler:   # one Dask task per submission, results recorded here
            from . import distributed
            distributed.grade_on_cluster(self, status, todo, report)
        elif todo:
            jobs = self.jobs_for(len(todo))
            self.say(f"autograde: grading {len(todo)} submission(s) " + (
                "in this process" if jobs <= 1 else f"in {jobs} worker processes"))
            settings = warmup.run_settings(self, todo, jobs)
            if jobs <= 1:
                for assignment, student, here in todo:
                    start = time.monotonic()
                    outcome = self.grade_one(status, assignment, student, here)
                    report(assignment, student, outcome, time.monotonic() - start)
            else:
                pool.grade_in_pool(self, status, todo, jobs, settings, report)
        failed = [(a, s, why) for a, s, st, _, why, _ in outcomes if st == FAILED]
        absent = submissions.report_absent(self, assignments, {(a, s) for a, s in queue})
        for line in console.table(outcomes, absent, time.monotonic() - started):
            self.say(line)
        for a, s, why in failed:
            self.say(f"  FAILED {a} {s}: {why}")
        self.say(f"autograde: nbgrader's full log is {os.path.join(root, self.log_name)}")
        return failed

    def say(self, text: str) -> None:
        """One line of this run's own output: whatever a student chose in it (an id, a reason)
        is shown as written, never acting on the terminal (`safe.line`)."""
        print(safe.line(text), file=self.out, flush=True)

    @contextlib.contextmanager
    def _terminal_to_log(self, root: str):
        with console.terminal_to_log(os.path.join(root, self.log_name)) as out:
            self.out = out
            try:
                yield
            finally:
                self.out = sys.stdout

    def grade_one(self, status, assignment, student, here) -> tuple[str, str, str]:
        """Grade one submission in this process; returns (status, what to print, reason)."""
        status.record(self.coursedir, assignment, student, GRADING, "", here.timestamp,
                      here.digest)
        result = self.grade(assignment, student)
        return submissions.settle(self, status, assignment, student, here, result)

    # ---- parallel grading ------------------------------------------------------------------
    def jobs_for(self, pending: int) -> int:
        """Processes grading at once: ``--jobs``, or one per ``per_worker`` submissions up to one
        per core; 1 grades in this process."""
        if self.jobs > 0:
            return self.jobs
        return max(1, min(os.cpu_count() or 1, pending // max(1, self.per_worker)))

    # ---- helpers ---------------------------------------------------------------------------
    def _logfile(self, root: str):
        return console.log_to_file(self.log, os.path.join(root, self.log_name), self.log_level)

