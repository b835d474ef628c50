"""A simulated class, run through nbgrader from release to export in a throw-away course.

Every submission is built from the real release (``nbgrader generate_assignment``) of the real
exercises: answer cells filled from the source's solution cells (``full``), left as released
(``blank``), filled for the first exercises only (``partial``), or broken in the ways real
submissions break: a kernel that dies (``os._exit(1)``), a loop that ignores SIGINT, notebook JSON
cut in half, a submission without its notebook, a student who never submits. Each step is the
nbgrader command an instructor or student would type, run in-process with the course's
configuration, so the demo and the end-to-end test exercise exactly what a term uses.

Development tooling (``make demo``, the simulated term of ``make class-roster``, ``class-submit``
and ``try-submit``, ``make bench``, the pipeline tests), not part of the installed ``grader``
package: it runs from a checkout and uses grader through its public modules.
"""
from __future__ import annotations

import grader.instructor  # noqa: F401  # isort: skip  (first: it takes jsonschema's IRI grammar out)
import contextlib
import csv
import os
import shutil
import sys
from dataclasses import dataclass, field

import nbformat

from grader.nbgrader_plugins import (
    FAILED,
    GRADED,
    KERNEL_DIED,
    MISSING,
    NO_NOTEBOOK,
    NOTHING_SUBMITTED,
    TIMED_OUT,
    UNCHANGED,
    UNREADABLE,
)
from grader.repo import ROOT  # also C.ROOT to the bench and the tests

from .inprocess import CommandFailed, Tee, nbgrader  # noqa: F401  (re-exported)

COURSE_ID = "inside-vmap"

# What each kind of student does to the released notebook; see `answer`.
FULL, BLANK, PARTIAL = "full", "blank", "partial"
DIES, LOOPS, CORRUPT, NO_NB, NEVER = ("kernel-dies", "infinite-loop", "corrupt-json",
                                      "no-notebook", "never-submitted")
PARTIAL_EXERCISES = 2           # a partial solution solves this many graded exercises

KILL = "import os\nos._exit(1)  # the kernel dies here\n"
LOOP = ("import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n"
        "while True:  # never ends, and ignores the interrupt nbgrader sends\n    pass\n")


@dataclass(frozen=True)
class Student:
    id: str
    kind: str
    all_assignments: bool = True    # False: submits only the first assignment


# The class of `make demo` and of the end-to-end test. The broken submissions are made for the
# first assignment only (they cost the most time); their second assignment is "missing".
CLASS = (
    Student("ada", FULL),
    Student("ben", BLANK),
    Student("cleo", PARTIAL),
    Student("dev", DIES, False),
    Student("eve", LOOPS, False),
    Student("finn", CORRUPT, False),
    Student("gus", NO_NB, False),
    Student("hana", NEVER, False),
)


@dataclass
class Expected:
    score: float | None
    max_score: float
    status: str
    reason: str = ""


@dataclass
class Paths:
    work: str
    course: str = field(init=False)
    exercises: str = field(init=False)
    exchange: str = field(init=False)
    students: str = field(init=False)

    def __post_init__(self):
        self.course = os.path.join(self.work, "course")
        self.exercises = os.path.join(self.work, "exercises")
        self.exchange = os.path.join(self.work, "exchange")
        self.students = os.path.join(self.work, "students")

    def home(self, student: str) -> str:
        return os.path.join(self.students, student)


# ---- the source: assignments, grade cells, solutions -------------------------------------
def assignments(exercises: str) -> list[str]:
    return sorted(d for d in os.listdir(exercises)
                  if not d.startswith(".") and os.path.isdir(os.path.join(exercises, d))
                  and any(f.endswith(".ipynb") for f in os.listdir(os.path.join(exercises, d))))


def source_notebooks(exercises: str, assignment: str) -> list[str]:
    folder = os.path.join(exercises, assignment)
    return sorted(f for f in os.listdir(folder) if f.endswith(".ipynb"))


def _meta(cell) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {})


def solutions(source) -> dict[str, str]:
    """``{grade_id: the answer a student would write}`` for every solution cell of ``source``."""
    return {_meta(c)["grade_id"]: "\n".join(
                line for line in c.source.split("\n")
                if "BEGIN SOLUTION" not in line and "END SOLUTION" not in line)
            for c in source.cells if _meta(c).get("solution")}


def exercises_in(source) -> list[tuple[str, float, list[str]]]:
    """``(grade_id, points, answer cell ids)`` per grade cell, in order; the answer cells are the
    solution cells since the previous grade cell (the layout of every exercise here)."""
    found, pending = [], []
    for cell in source.cells:
        m = _meta(cell)
        if m.get("solution"):
            pending.append(m["grade_id"])
        if m.get("grade"):
            found.append((m["grade_id"], float(m.get("points", 0)), pending))
            pending = []
    return found


def max_score(source) -> float:
    return sum(points for _, points, _ in exercises_in(source))


def partial_score(source) -> float:
    return sum(points for _, points, _ in exercises_in(source)[:PARTIAL_EXERCISES])


# ---- the submissions ---------------------------------------------------------------------
def answer(kind: str, released, source):
    """The released notebook as a student of this kind hands it in (a new notebook)."""
    nb = nbformat.from_dict(released)
    if kind in (BLANK, NO_NB, NEVER):
        return nb
    answers = solutions(source)
    if kind == PARTIAL:
        solved = {cid for _, _, cells in exercises_in(source)[:PARTIAL_EXERCISES] for cid in cells}
        answers = {k: v for k, v in answers.items() if k in solved}
    first = True
    for cell in nb.cells:
        gid = _meta(cell).get("grade_id")
        if gid in answers and _meta(cell).get("solution"):
            cell.source = answers[gid]
            if cell.cell_type == "code" and first and kind in (DIES, LOOPS):
                cell.source = (KILL if kind == DIES else LOOP) + cell.source
                first = False
    return nb


def expected(paths: Paths, students=CLASS) -> dict[tuple[str, str], Expected]:
    """What the export must say for every student and assignment, from the source notebooks."""
    out = {}
    names = assignments(paths.exercises)
    for i, assignment in enumerate(names):
        sources = [nbformat.read(os.path.join(paths.exercises, assignment, f), as_version=4)
                   for f in source_notebooks(paths.exercises, assignment)]
        top = sum(max_score(s) for s in sources)
        for st in students:
            submits = st.kind != NEVER and (st.all_assignments or i == 0)
            if not submits:
                out[assignment, st.id] = Expected(None, top, MISSING, NOTHING_SUBMITTED)
            elif st.kind == FULL:
                out[assignment, st.id] = Expected(top, top, GRADED)
            elif st.kind == BLANK:
                out[assignment, st.id] = Expected(0.0, top, BLANK, UNCHANGED)
            elif st.kind == PARTIAL:
                out[assignment, st.id] = Expected(sum(partial_score(s) for s in sources), top,
                                                  GRADED)
            elif st.kind == DIES:
                out[assignment, st.id] = Expected(None, top, FAILED, KERNEL_DIED)
            elif st.kind == LOOPS:
                out[assignment, st.id] = Expected(None, top, FAILED, TIMED_OUT)
            elif st.kind == CORRUPT:
                first = source_notebooks(paths.exercises, assignment)[0]
                out[assignment, st.id] = Expected(None, top, FAILED, f"{UNREADABLE} ({first})")
            elif st.kind == NO_NB:
                out[assignment, st.id] = Expected(None, top, MISSING, NO_NOTEBOOK)
    return out


# ---- the term, step by step ----------------------------------------------------------------
def build_course(work: str, exercises: str | None = None, settings: dict | None = None) -> Paths:
    """A throw-away course: a copy of course/nbgrader_config.py beside a copy of exercises/, its
    exchange in WORK/exchange. The copy's term settings are set where an instructor sets them,
    at the end of its nbgrader_config.py: ``settings`` maps ``"Class.trait"`` to a value."""
    paths = Paths(work)
    os.makedirs(paths.course, exist_ok=True)
    shutil.copy(os.path.join(ROOT, "course", "nbgrader_config.py"), paths.course)
    set_term(paths, {"Exchange.root": paths.exchange, **(settings or {})})
    shutil.copytree(exercises or os.path.join(ROOT, "exercises"), paths.exercises,
                    ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
    os.makedirs(paths.exchange, exist_ok=True)
    os.chmod(paths.exchange, 0o777)
    os.makedirs(paths.students, exist_ok=True)
    return paths


def some_exercises(work: str, names) -> str:
    """A copy of only ``names`` of exercises/ in WORK/exercises-some, for `build_course`'s ``exercises``: a test
    of the grading machinery needs one assignment (every assignment's grading is tests/pipeline/test_class.py's)."""
    out = os.path.join(work, "exercises-some")
    for name in names:
        shutil.copytree(os.path.join(ROOT, "exercises", name), os.path.join(out, name),
                        ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
    return out


def set_term(paths: Paths, settings: dict) -> None:
    """Append ``c.Class.trait = value`` lines to the course copy's nbgrader_config.py."""
    with open(os.path.join(paths.course, "nbgrader_config.py"), "a", encoding="utf-8") as fh:
        fh.write("\n# ---- this copy's term (tools.classroom.set_term) ----\n")
        for key, value in settings.items():
            fh.write(f"c.{key} = {value!r}\n")


def student_args(student: str) -> list[str]:
    return [f"--student={student}"]


def student_home(paths: Paths, student: str) -> str:
    return write_student_home(paths.home(student), COURSE_ID, paths.exchange)


def write_student_home(home: str, course_id: str, exchange: str) -> str:
    """A student's folder, with the nbgrader_config.py a student of this course would have."""
    os.makedirs(home, exist_ok=True)
    with open(os.path.join(home, "nbgrader_config.py"), "w", encoding="utf-8") as fh:
        fh.write("c = get_config()  # noqa: F821\n"
                 f"c.CourseDirectory.course_id = {course_id!r}\n"
                 f"c.Exchange.root = {exchange!r}\n"
                 f"c.Exchange.cache = {os.path.join(home, '.nbgrader-cache')!r}\n")
    return home


def enrol(paths: Paths, students=CLASS, echo=None) -> None:
    for st in students:
        nbgrader(["db", "student", "add", st.id], paths.course, echo=echo)


def assign(paths: Paths, echo=None) -> None:
    for a in assignments(paths.exercises):
        nbgrader(["generate_assignment", a, "--force"], paths.course, echo=echo)
        nbgrader(["release_assignment", a, "--force"], paths.course, echo=echo)


def submit_all(paths: Paths, students=CLASS, echo=None) -> None:
    """Every student fetches, answers (see `answer`) and submits through the exchange."""
    names = assignments(paths.exercises)
    for st in students:
        home = student_home(paths, st.id)
        for i, a in enumerate(names):
            if st.kind == NEVER or not (st.all_assignments or i == 0):
                continue
            nbgrader(["fetch_assignment", a] + student_args(st.id), home)
            for name in source_notebooks(paths.exercises, a):
                path = os.path.join(home, a, name)
                released = nbformat.read(path, as_version=4)
                source = nbformat.read(os.path.join(paths.exercises, a, name), as_version=4)
                if st.kind == NO_NB:
                    os.remove(path)
                    continue
                nbformat.write(answer(st.kind, released, source), path)
                if st.kind == CORRUPT:
                    with open(path, "rb") as fh:
                        data = fh.read()
                    with open(path, "wb") as fh:
                        fh.write(data[: len(data) // 2])
            nbgrader(["submit", a] + student_args(st.id), home)
        if echo:
            handed_in = [] if st.kind == NEVER else names if st.all_assignments else names[:1]
            echo(f"  {st.id} ({st.kind}): submitted {', '.join(handed_in) or 'nothing'}")


def collect(paths: Paths, echo=None) -> None:
    for a in assignments(paths.exercises):
        nbgrader(["collect", a, "--update", "--ExchangeCollect.check_owner=False"], paths.course,
                 echo=echo)


def autograde(paths: Paths, timeout: int, echo=None, extra=()) -> str:
    """``python -m grader.instructor autograde`` in this process; returns what it printed."""
    from grader.instructor.autograde import AutogradeEach  # nbgrader's converters: when used
    argv = [f"--Execute.timeout={timeout}"] + list(extra)
    if echo:
        echo("$ python -m grader.instructor autograde " + " ".join(argv))
    out = Tee(sys.stdout if echo else None)
    with contextlib.redirect_stdout(out):
        nbgrader(argv, paths.course, app_class=AutogradeEach)
    return out.getvalue()


def feedback(paths: Paths, students=CLASS, echo=None) -> None:
    """`make feedback`: nbgrader's feedback, a page for each failed submission, released."""
    from grader.instructor.failed_feedback import FailedFeedback
    for a in assignments(paths.exercises):
        nbgrader(["generate_feedback", a, "--force"], paths.course, echo=echo)
        if echo:
            echo(f"$ python -m grader.instructor failed-feedback {a}")
        nbgrader([a], paths.course, app_class=FailedFeedback)
        nbgrader(["release_feedback", a], paths.course, echo=echo)
        for st in students:
            if os.path.isdir(os.path.join(paths.home(st.id), a)):
                nbgrader(["fetch_feedback", a] + student_args(st.id), paths.home(st.id))


def grading_status(paths: Paths) -> dict:
    """The grading status of every submission, as autograde recorded it in the copy's gradebook
    (`grader.nbgrader_plugins.GradingStatus`): {(assignment, student): Record}."""
    from nbgrader.coursedir import CourseDirectory

    from grader.nbgrader_plugins import GradingStatus
    where = CourseDirectory(root=paths.course, course_id=COURSE_ID,
                            db_url="sqlite:///" + os.path.join(paths.course, "gradebook.db"))
    return GradingStatus().load(where)


def export(paths: Paths, echo=None) -> list[dict]:
    nbgrader(["export", "--to=grades.csv"], paths.course, echo=echo)
    with open(os.path.join(paths.course, "grades.csv"), newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def run_term(paths: Paths, students=CLASS, timeout: int = 10, echo=None) -> list[dict]:
    """release -> fetch/submit -> collect -> autograde -> feedback -> export; the export's rows."""
    step = (lambda title: echo(f"\n== {title}")) if echo else (lambda title: None)
    step("enrol the class (nbgrader's gradebook is the roster)")
    enrol(paths, students, echo)
    step("generate and release every assignment (make assign)")
    assign(paths, echo)
    step("students fetch, answer and submit")
    if echo:
        echo("$ nbgrader fetch_assignment A --student ID   # then answer, then:\n"
             "$ nbgrader submit A --student ID             # (each from the student's folder)")
    submit_all(paths, students, echo)
    step("collect (make collect)")
    collect(paths, echo)
    step("autograde, one student at a time (make autograde)")
    autograde(paths, timeout, echo)
    step("generate and release feedback (make feedback)")
    feedback(paths, students, echo)
    step("export (make export)")
    return export(paths, echo)


