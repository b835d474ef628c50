"""Autograde every collected submission, ``--jobs`` at a time, and record what became of each.

This is nbgrader's own ``Autograde`` converter (what ``nbgrader autograde ASSIGNMENT --student S
--force`` runs), called once per submission with the course's configuration, so:

* one bad submission never stops the batch: its failure (kernel died, timed out, unreadable
  notebook) is recorded with its reason and the next student is graded;
* the status file (`grader.nbgrader_plugins.GradingStatus`) says ``grading`` while a student is
  being graded and ``graded``/``failed``/``missing`` once done, so a run killed half-way leaves at
  most one student per worker unfinished, marked as such, and the next run grades them again;
* ``--jobs N`` grades N submissions at once, each in a long-lived worker process
  (`grader.instructor.pool`, `grading.grade_submission`: nbgrader's start-up paid once per
  worker); only this process writes the status file, and only N students are ever marked
  ``grading`` at once; ``--jobs 1`` grades one after another in this process. The default sizes
  the pool to the run: one worker per ``per_worker`` submissions to grade, up to one per core,
  and a run of fewer (a regrade, one student) is graded here, where no worker's start-up is paid;
* every submission of a run is judged on the same hidden cases (a secret seed drawn per run),
  and before the first student the instructor's solutions are judged on them once, filling a
  compilation cache the students' judge children read, when some assignment has ``warm_min``
  submissions to grade (``--no-warm`` skips it always; `grader.instructor.warmup`); each
  judge's child starts beside its kernel (`grader.judge.ahead`);
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
import os
import re
import sys
import time


def _without_iri_grammar() -> None:
    """Skip jsonschema's optional IRI format checker in this process: importing it builds a Lark
    grammar (``rfc3987_syntax``, ~1.1 s of every worker's start-up), and nothing autograde runs
    validates an IRI (nbformat's validator checks no ``format``). Must run before nbgrader,
    nbformat or jsonschema is imported; has no effect once they are."""
    sys.modules.setdefault("rfc3987_syntax", None)


_without_iri_grammar()

from nbgrader.api import Gradebook  # noqa: E402  (after _without_iri_grammar)
from nbgrader.apps.baseapp import NbGrader, nbgrader_aliases, nbgrader_flags
from nbgrader.converters import Autograde, BaseConverter
from nbgrader.utils import capture_log, temp_attrs
from traitlets import Bool, Int, Unicode, default

from ..judge import ahead, sandbox
from ..judge.preprocessor import JudgeExercises
from ..judge.execute import MARK as LIMIT_MARK, BoundedExecute
from ..nbgrader_plugins import (FAILED, GRADED, GRADING, KERNEL_DIED, MISSING, TIMED_OUT,
                                UNREADABLE, GradingStatus, autograded_complete,
                                inspect_submission)
from . import console, pool, warmup

flags = dict(nbgrader_flags)
flags["force"] = ({"AutogradeEach": {"force": True}},
                  "Grade every submission again, even those graded or failed and unchanged since.")
flags["no-warm"] = ({"AutogradeEach": {"warm_judge": False}},
                    "Do not judge the instructor's solutions first (no shared compilation cache).")
aliases = dict(nbgrader_aliases)
aliases["jobs"] = "AutogradeEach.jobs"
aliases["scheduler"] = "AutogradeEach.scheduler"     # grading on a Dask cluster


class AutogradeEach(NbGrader):
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
        judge, execute = JudgeExercises(parent=self), BoundedExecute(parent=self)
        boxed = sandbox.available()
        if judge.fork_children and judge.sandbox != "none" and boxed:
            self._say("autograde: judge children forked from one zygote per grading process, "
                      "each in namespaces of its own (JudgeExercises.fork_children)")
        if execute.fork_kernels and execute.sandbox != "none" and boxed:
            self._say("autograde: grading kernels forked from one zygote per grading process, "
                      "each in its own cgroup and namespaces (BoundedExecute.fork_kernels)"
                      if sandbox.cgroups() else "autograde: grading kernels start in boxes of "
                      "their own: no cgroup can be made here to hold a forked one")
        records = status.load(root)
        # nbgrader's SaveAutoGrades and AssignLatePenalties open the gradebook without a course
        # id, which adds a "default_course" row on first use: made here, once, so parallel
        # workers never race to insert it.
        Gradebook(self.coursedir.db_url).close()
        outcomes = []
        wa = max((len(a) for a, _ in queue), default=0)
        ws = max((len(s) for _, s in queue), default=0)
        wk = len(str(len(queue)))
        started = time.monotonic()

        def report(assignment, student, outcome, seconds):
            kind, text = outcome[0], outcome[1]
            if kind == GRADED:                  # graded: which kind of graded, from the gradebook
                kind, text = console.graded_line(self.coursedir, assignment, student, text)
            outcomes.append((assignment, student, kind, text, outcome[2], seconds))
            self._say(f"  [{len(outcomes):>{wk}}/{len(queue)}] {assignment:<{wa}}  "
                      f"{student:<{ws}}  {text}  ({seconds:.1f} s)")

        todo = []
        for assignment, student in queue:
            outcome, here = self._check(status, records, assignment, student)
            if outcome is None:
                todo.append((assignment, student, here))
            else:
                report(assignment, student, outcome, 0.0)
        if todo and self.scheduler:   # one Dask task per submission, results recorded here
            from . import distributed
            distributed.grade_on_cluster(self, status, todo, report)
        elif todo:
            jobs = self._jobs(len(todo))
            self._say(f"autograde: grading {len(todo)} submission(s) " + (
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

    def grade_one(self, status, assignment, student, here) -> tuple[str, str, str]:
        """Grade one submission in this process; returns (status, what to print, reason)."""
        status.record(self.coursedir.root, assignment, student, GRADING, "", here.timestamp)
        result = self.autograde(assignment, student)
        return self._outcome(status, assignment, student, here, result)

    def _check(self, status, records, assignment, student):
        """``(outcome, None)`` when the submission needs no grading (missing: recorded so; or
        graded or failed, and unchanged since), else ``(None, submission)``."""
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
            try:
                return capture_log(converter)
            finally:
                ahead.cancel_pending()     # a judge started ahead of a kernel that failed

    # ---- parallel grading ------------------------------------------------------------------
    def _jobs(self, pending: int) -> int:
        """Processes grading at once: ``--jobs``, or one per ``per_worker`` submissions up to one
        per core; 1 grades in this process."""
        if self.jobs > 0:
            return self.jobs
        return max(1, min(os.cpu_count() or 1, pending // max(1, self.per_worker)))

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
        console.quiet_console(self.log)

    def _logfile(self, root: str):
        return console.log_to_file(self.log, os.path.join(root, self.log_name), self.log_level)


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
