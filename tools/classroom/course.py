"""The throw-away course of a simulated class (see `tools.classroom`): its folders (``Paths``), the
assignments its copy of exercises/ holds, the copy itself with its term's settings, and each
student's home with the nbgrader_config.py a student of the course would have."""
from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field

from grader.repo import ROOT

COURSE_ID = "inside-vmap"


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


# ---- the source: assignments and their notebooks -------------------------------------------
def assignments(exercises: str) -> list[str]:
    return sorted(d for d in os.listdir(exercises)
                  if not d.startswith(".") and os.path.isdir(os.path.join(exercises, d))
                  and any(f.endswith(".ipynb") for f in os.listdir(os.path.join(exercises, d))))


def source_notebooks(exercises: str, assignment: str) -> list[str]:
    folder = os.path.join(exercises, assignment)
    return sorted(f for f in os.listdir(folder) if f.endswith(".ipynb"))


# ---- the copy and the students' homes ---------------------------------------------------------
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
