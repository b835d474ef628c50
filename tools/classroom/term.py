"""A simulated class's term (see `tools.classroom`), step by step: each step the nbgrader command an
instructor or student would type (enrol, assign, fetch and submit, collect, autograde, feedback,
export), run in-process with the course's configuration; ``run_term`` runs them all in order."""
from __future__ import annotations

import contextlib
import csv
import os
import sys

import nbformat

from .course import COURSE_ID, Paths, assignments, source_notebooks, student_home
from .inprocess import Tee, nbgrader
from .students import CLASS, CORRUPT, NEVER, NO_NB, answer


def student_args(student: str) -> list[str]:
    return [f"--student={student}"]


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
