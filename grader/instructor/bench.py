"""``python -m grader.instructor.bench [--n 16] [--sizes 1,8] [--repeat 1] [--jobs 0] [--cluster 1,2] [--keep DIR]``

How much faster the course grades than stock nbgrader, measured in one run on classes of fully
solved submissions built from the real assignments (every student hands in every assignment):
one student (N=1, two submissions: a regrade), N=8, and the class of ``--n`` students. For each
size, on the same submissions and each ``--repeat`` times (median):

* stock: ``nbgrader autograde A --force`` for every assignment with nbgrader's defaults (no course
  plugins, no judge, no sandbox), serial as nbgrader is;
* course: ``python -m grader.instructor autograde --force`` (``make autograde``) with the course's
  configuration and every integrity check on: the sandboxed, limited kernel, the judge, the
  grading status; its own choice of workers and warm-up (``--jobs`` overrides the workers).

Then: whether every run gave the scores and, byte for byte, the grade-cell outputs (the feedback)
of a serial run (``--jobs 1``) on the same seed; the course once more without the warm compilation
cache (every simulated student hands in the instructor's solutions, the cache's best case); the
N=8 class on 1 and 2 Dask workers here (``--cluster``, `bench_cluster`); where one submission's time
goes; and how long each visible check takes a student (`bench_steps`). The load average is
printed beside every timing. The last line is
``speedup vs stock nbgrader: N=1 X.XX, N=8 X.XX, N=16 X.XX`` (stock's time over the course's).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import secrets
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from . import classroom as C

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


def _env() -> dict:
    bindir = os.path.dirname(sys.executable)
    return dict(os.environ, JAX_PLATFORMS="cpu", MPLBACKEND="Agg", PYTHONHASHSEED="0",
                JUPYTER_PREFER_ENV_PATH="1", PYDEVD_DISABLE_FILE_VALIDATION="1",
                PATH=bindir + os.pathsep + os.environ.get("PATH", ""))


def load() -> str:
    return f"{os.getloadavg()[0]:.2f}"


# ---- the classes ----------------------------------------------------------------------------
def build(work: str, n: int) -> C.Paths:
    """A throw-away course with the assignments generated and N full solutions collected (written
    straight into submitted/, as `nbgrader collect` leaves them, to keep building quick)."""
    import nbformat
    from nbgrader.api import Gradebook

    paths = C.build_course(work)
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
def _timed(cmd: list[str], cwd: str) -> tuple[float, str]:
    start = time.monotonic()
    proc = subprocess.run(cmd, cwd=cwd, env=_env(), capture_output=True, text=True)
    took = time.monotonic() - start
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stdout[-2000:]}"
                           f"\n{proc.stderr[-2000:]}")
    return took, proc.stdout


def run_stock(paths: C.Paths, root: str) -> float:
    total = 0.0
    for a in C.assignments(paths.exercises):
        total += _timed([os.path.join(os.path.dirname(sys.executable), "nbgrader"), "autograde",
                         a, "--force"], root)[0]
    full_marks(paths, "stock nbgrader autograde", os.path.join(root, "gradebook.db"))
    return total


def run_course(paths: C.Paths, jobs: int, seed: int, extra=()) -> tuple[float, str]:
    """``make autograde``'s seconds, and how it graded (its workers, its warm-up)."""
    took, out = _timed([sys.executable, "-m", "grader.instructor", "autograde", "--force",
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


# ---- the whole benchmark ----------------------------------------------------------------------
def bench(n: int, repeat: int, jobs: int, work: str, echo=print, verify: bool = True,
          checks: bool = True, sizes=(1, 8), cluster=()) -> dict:
    sizes = sorted({s for s in sizes if 0 < s < n} | {n})
    echo(f"bench: building a class of {n} solved submissions in {work} (load {load()})")
    whole = build(os.path.join(work, "class"), n)
    per = len(C.assignments(whole.exercises))
    classes = {s: first_students(whole, s, os.path.join(work, f"n{s}")) for s in sizes}
    stocks = {s: stock_course(p) for s, p in classes.items()}
    seed = secrets.randbelow(2 ** 63)     # one for every run: the serial one must match
    times = {s: {"stock": [], "course": []} for s in sizes}
    how, seen = {}, {}
    for r in range(repeat):
        for s in sizes:
            before = load()
            times[s]["stock"].append(run_stock(classes[s], stocks[s]))
            took, how[s] = run_course(classes[s], jobs, seed)
            times[s]["course"].append(took)
            seen[s] = results(classes[s])
            echo(f"bench: run {r + 1}/{repeat}, N={s} ({s * per} submissions): stock "
                 f"{times[s]['stock'][-1]:.1f} s, make autograde {took:.1f} s ({how[s]}); load "
                 f"{before} -> {load()}")
    report = {"n": n, "sizes": {}, "repeat": repeat, "speedup": {}}
    echo(f"\nmedian of {repeat}, seconds for the whole run (start-up included), "
         f"{os.cpu_count()} cores, {per} assignments per student:")
    echo(f"  {'':<8}{'submissions':>12}{'stock nbgrader':>16}{'make autograde':>16}"
         f"{'speedup':>9}  how")
    for s in sizes:
        stock, course = (statistics.median(times[s][k]) for k in ("stock", "course"))
        report["sizes"][s] = {"submissions": s * per, "stock": stock, "course": course,
                              "how": how[s]}
        report["speedup"][s] = stock / course
        echo(f"  {'N=' + str(s):<8}{s * per:>12}{stock:>14.1f} s{course:>14.1f} s"
             f"{stock / course:>9.2f}  {how[s]}")
    if verify:
        _verify(classes, seen, seed, sizes, jobs, report, echo)
    if cluster:     # the distributed column: N Dask workers here (grader/instructor/bench_cluster.py)
        from .bench_cluster import column
        mid = sizes[len(sizes) // 2]      # the verified class: a few minutes, not the whole N's
        report["cluster"] = column(classes[mid], seed, seen[mid], cluster, echo)
    from .bench_steps import breakdown, check_latency
    echo(f"\nwhere one submission's time goes (each step measured on its own; load {load()}):")
    for what, sec in breakdown(classes[sizes[0]]):
        echo(f"  {what:<52} {sec:6.2f} s")
    if checks:
        lat = check_latency(classes[sizes[0]])
        report["checks"] = lat
        echo("\nstudents' instant checks (instructor solutions; first call, median of 5 later):")
        for name, (first, later) in lat.items():
            ok = "ok" if first <= 0.5 and later <= 0.05 else "SLOW"
            echo(f"  {name:<36} {first * 1000:7.0f} ms  {later * 1000:6.1f} ms  {ok}")
    echo(f"bench: done (load {load()})")
    echo("speedup vs stock nbgrader: " + ", ".join(
        f"N={s} {report['speedup'][s]:.2f}" for s in sizes))
    return report


def _verify(classes, seen, seed, sizes, jobs, report, echo) -> None:
    """Every run against one serial run (the middle size, or the only one) on the same seed;
    then that class once more without the warm cache."""
    s = sizes[len(sizes) // 2]
    serial_s, _ = run_course(classes[s], 1, seed)
    serial = results(classes[s])
    echo(f"\nserial run (--jobs 1), N={s}: {serial_s:.1f} s (load {load()})")
    found = {size: differences(seen[size], serial) for size in sizes}
    report["identical_to_serial"] = not any(found.values())
    for size in sizes:
        echo(f"  N={size}: same scores and, byte for byte, the same grade-cell outputs (feedback) "
             f"as the serial run: {'yes' if not found[size] else 'NO'}")
        for key, ref, got in found[size][:3]:
            echo(f"    differs: {key}: serial {str(ref)[:300]!r} / this run {str(got)[:300]!r}")
    cold_s, how = run_course(classes[s], jobs, seed, ["--no-warm"])
    stock = report["sizes"][s]["stock"]
    report["sizes"][s]["course_no_warm"] = cold_s
    echo(f"  N={s} without the warm-up (--no-warm): {cold_s:.1f} s ({how}), speedup "
         f"{stock / cold_s:.2f}: the bound for answers unlike the solutions (load {load()})")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m grader.instructor.bench",
                                     description=__doc__.splitlines()[2])
    parser.add_argument("--n", type=int, default=16, help="students in the class (default 16)")
    parser.add_argument("--sizes", default="1,8",
                        help="smaller classes timed too, comma-separated (default 1,8)")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each, median (default 1)")
    parser.add_argument("--jobs", type=int, default=0,
                        help="make autograde's --jobs (default 0: its own choice)")
    parser.add_argument("--keep", metavar="DIR", help="build in DIR and keep it")
    parser.add_argument("--no-verify", action="store_true", help="skip the serial comparison")
    parser.add_argument("--cluster", default="1,2", help="Dask workers of the distributed column, "
                        "comma-separated (default 1,2; empty: no column)")
    args = parser.parse_args(argv)
    sizes = [int(x) for x in args.sizes.split(",") if x.strip()]
    work = args.keep or tempfile.mkdtemp(prefix="inside-vmap-bench-")
    try:
        bench(args.n, args.repeat, args.jobs, work, verify=not args.no_verify, sizes=sizes,
              cluster=[int(x) for x in args.cluster.split(",") if x.strip()])
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
