"""What the bench measures with: the classes it builds (every student hands in the instructor's
solutions), the environment and the timed runs of stock nbgrader and of ``make autograde``, and
the results a run left (scores, grade-cell outputs) to compare two runs. `tools.bench` (the whole
benchmark), `cluster` (its Dask column) and `steps` (its breakdown) use these."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time

from tools import classroom as C

WORKERS = re.compile(r"^autograde: grading (.+)$", re.M)

STOCK_CONFIG = """\
c = get_config()  # noqa: F821
c.CourseDirectory.course_id = {course_id!r}
c.CourseDirectory.root = {root!r}
c.CourseDirectory.source_directory = {source!r}
c.CourseDirectory.db_url = {db!r}
c.ExecutePreprocessor.kernel_name = "inside-vmap"
c.Execute.kernel_name = "inside-vmap"
"""


def env() -> dict:
    bindir = os.path.dirname(sys.executable)
    return dict(os.environ, JAX_PLATFORMS="cpu", MPLBACKEND="Agg", PYTHONHASHSEED="0",
                JUPYTER_PREFER_ENV_PATH="1", PYDEVD_DISABLE_FILE_VALIDATION="1",
                PATH=bindir + os.pathsep + os.environ.get("PATH", ""))


def load() -> str:
    return f"{os.getloadavg()[0]:.2f}"


# ---- the classes ----------------------------------------------------------------------------
def build(work: str, n: int, exercises: str | None = None) -> C.Paths:
    """A throw-away course with the assignments generated and N full solutions collected (written
    straight into submitted/, as `nbgrader collect` leaves them, to keep building quick); the
    assignments of ``exercises`` (`C.some_exercises`), by default all of exercises/."""
    import nbformat
    from nbgrader.api import Gradebook

    paths = C.build_course(work, exercises)
    C.assign(paths)
    students = [f"s{i:03d}" for i in range(n)]
    with Gradebook("sqlite:///" + os.path.join(paths.course, "gradebook.db"), C.COURSE_ID) as gb:
        for s in students:
            gb.update_or_create_student(s)
    stamp = "2026-01-01 00:00:00.000000 UTC"
    for a in C.assignments(paths.exercises):
        for name in C.source_notebooks(paths.exercises, a):
            released = nbformat.read(os.path.join(paths.course, "release", a, name), as_version=4)
            source = nbformat.read(os.path.join(paths.exercises, a, name), as_version=4)
            nb = C.answer(C.FULL, released, source)
            for s in students:
                folder = os.path.join(paths.course, "submitted", s, a)
                os.makedirs(folder, exist_ok=True)
                nbformat.write(nb, os.path.join(folder, name))
                with open(os.path.join(folder, "timestamp.txt"), "w") as fh:
                    fh.write(stamp)
    return paths


def first_students(paths: C.Paths, n: int, work: str) -> C.Paths:
    """A copy of the course in ``work`` holding only the first ``n`` students' submissions (the
    roster stays whole; the others simply handed nothing in)."""
    out = C.Paths(work)
    keep = set(sorted(os.listdir(os.path.join(paths.course, "submitted")))[:n])
    shutil.copytree(paths.course, out.course, ignore=lambda folder, names: [
        x for x in names if os.path.basename(folder) == "submitted" and x not in keep])
    os.symlink(paths.exercises, out.exercises)
    return out


def stock_course(paths: C.Paths) -> str:
    """A copy of the course folder configured as stock nbgrader (defaults, no course plugins)."""
    root = os.path.join(paths.work, "stock")
    shutil.copytree(paths.course, root, ignore=shutil.ignore_patterns("autograded", "feedback"))
    with open(os.path.join(root, "nbgrader_config.py"), "w") as fh:
        fh.write(STOCK_CONFIG.format(course_id=C.COURSE_ID, root=root,
                                     source=os.path.join("..", "exercises"),
                                     db="sqlite:///" + os.path.join(root, "gradebook.db")))
    return root


def submitted_notebooks(paths: C.Paths) -> list[str]:
    out = []
    for dirpath, _, files in os.walk(os.path.join(paths.course, "submitted")):
        out += [os.path.join(dirpath, f) for f in files if f.endswith(".ipynb")]
    return sorted(out)


# ---- the runs -------------------------------------------------------------------------------
def timed(cmd: list[str], cwd: str) -> tuple[float, str]:
    start = time.monotonic()
    proc = subprocess.run(cmd, cwd=cwd, env=env(), capture_output=True, text=True)
    took = time.monotonic() - start
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stdout[-2000:]}"
                           f"\n{proc.stderr[-2000:]}")
    return took, proc.stdout


def run_stock(paths: C.Paths, root: str) -> float:
    total = 0.0
    for a in C.assignments(paths.exercises):
        total += timed([os.path.join(os.path.dirname(sys.executable), "nbgrader"), "autograde",
                         a, "--force"], root)[0]
    full_marks(paths, "stock nbgrader autograde", os.path.join(root, "gradebook.db"))
    return total


def run_course(paths: C.Paths, jobs: int, seed: int, extra=()) -> tuple[float, str]:
    """``make autograde``'s seconds, and how it graded (its workers, its warm-up)."""
    took, out = timed([sys.executable, "-m", "grader.instructor", "autograde", "--force",
                        f"--jobs={jobs}", f"--JudgeExercises.seed={seed}", *extra], paths.course)
    full_marks(paths, "make autograde")
    how = WORKERS.findall(out)
    warmed = "warm-up" if "judged the instructor's solutions" in out else "no warm-up"
    return took, f"{how[-1] if how else '?'}, {warmed}"


def full_marks(paths: C.Paths, what: str, db: str | None = None) -> None:
    """Every submission is a full solution: anything less means the run measured a failure."""
    from nbgrader.api import Gradebook
    db = db or os.path.join(paths.course, "gradebook.db")
    with Gradebook("sqlite:///" + db, C.COURSE_ID) as gb:
        short = [(a.name, s.student.id, s.score, s.max_score, _lost(s)) for a in gb.assignments
                 for s in a.submissions if not s.max_score or s.score != s.max_score]
    if short:
        shown = grade_outputs(os.path.dirname(db))
        short = [(a, s, score, top, [(*lost, _text(shown.get((a, s, lost[0]), [])))
                                     for lost in where]) for a, s, score, top, where in short]
        raise RuntimeError(f"{what} did not give every solved submission full marks (so its time "
                           f"is not a grading time): {short[:5]}; see its autograde.log")


def _lost(submission) -> list[tuple]:
    """Where a solved submission lost points: each grade cell's id, score, and whether it waits
    for a human (`full_marks` adds the feedback its grade cell shows: what the judge said)."""
    return [(g.name, g.score, g.max_score, "manual" if g.needs_manual_grade else "")
            for nb in submission.notebooks for g in nb.grades if g.score != g.max_score]


def _text(outputs, most: int = 600) -> str:
    return " ".join(o.get("text", "") or str(o.get("data", {}).get("text/plain", ""))
                    for o in outputs)[:most]


# ---- same results as a serial run ------------------------------------------------------------
def results(paths: C.Paths) -> dict:
    """``{(kind, assignment, student, grade id): value}``: every grade's auto score and every
    grade cell's outputs (what the feedback shows)."""
    from nbgrader.api import Gradebook
    out = {}
    with Gradebook("sqlite:///" + os.path.join(paths.course, "gradebook.db"), C.COURSE_ID) as gb:
        for a in gb.assignments:
            for sub in a.submissions:
                for nb in sub.notebooks:
                    for g in nb.grades:
                        out["score", a.name, sub.student.id, g.name] = g.auto_score
    for (a, student, grade_id), outputs in grade_outputs(paths.course).items():
        out["outputs", a, student, grade_id] = json.dumps(outputs, sort_keys=True)
    return out


def grade_outputs(course: str) -> dict:
    """``{(assignment, student, grade id): outputs}`` of every grade cell under the course's
    autograded/ (what the feedback shows)."""
    import nbformat
    out = {}
    top = os.path.join(course, "autograded")
    for student in os.listdir(top) if os.path.isdir(top) else ():
        for a in os.listdir(os.path.join(top, student)):
            for f in os.listdir(os.path.join(top, student, a)):
                if not f.endswith(".ipynb"):
                    continue
                nb = nbformat.read(os.path.join(top, student, a, f), as_version=4)
                for cell in nb.cells:
                    m = cell.metadata.get("nbgrader", {})
                    if m.get("grade") and cell.cell_type == "code":
                        out[a, student, m["grade_id"]] = cell.outputs
    return out


def differences(run: dict, serial: dict) -> list[tuple]:
    """Where ``run`` differs from the serial run: a student the serial run also graded against
    itself, any other against the serial run's first student (every simulated student hands in
    the same notebook, and one seed gives every one the same cases). Empty when identical."""
    first = min(k[2] for k in serial)
    students = {k[2] for k in run}
    wanted = {(k, a, s, g) for s in students for k, a, s0, g in serial if s0 == first}
    out = [(key, None, "not graded") for key in sorted(wanted - set(run), key=str)]
    for key in sorted(run, key=str):
        ref = serial.get(key, serial.get((key[0], key[1], first, key[3])))
        if run[key] != ref:
            out.append((key, ref, run[key]))
    return out
