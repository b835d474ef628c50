"""``python -m grader.instructor.bench [--n 40] [--repeat 3] [--jobs 0] [--keep DIR]``

How long grading takes, measured on one simulated class of N fully solved submissions built from the
real assignments (every student hands in every assignment):

(a) bare: every submitted notebook executed with nbclient (kernel ``inside-vmap``), one process;
(b) stock: ``nbgrader autograde A`` for every assignment, nbgrader's defaults (no course plugins,
    no judge, no sandbox), serial as nbgrader is;
(c) course: ``python -m grader.instructor autograde --force`` (``make autograde``) with the course's
    configuration: the sandboxed kernel, the judge, the status file; ``--jobs`` workers; the
    warm-up on the instructor's solutions included.

Each is run ``--repeat`` times on the same submissions; the median wall time (start-up included)
is reported per submission (one student's assignment). Then: whether (c) gives the same scores
and the same grade-cell outputs as a serial run (``--jobs 1``, same seed), (c) once more without
the shared compilation cache (every simulated student hands in the instructor's solutions, the
cache's best case; uncached is the bound for answers unlike them), a breakdown of where (c)'s time
goes, and the latency of every exercise's visible check as a student calls it (first call, then the
median of 5 more). The last line is ``speedup vs stock nbgrader: X.XX`` (b over c).
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
import textwrap
import time

from . import classroom as C

LAST_LINE = re.compile(r"^speedup vs stock nbgrader: \d+\.\d\d$")

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


# ---- the class ------------------------------------------------------------------------------
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


# ---- the three runs -------------------------------------------------------------------------
def _timed(cmd: list[str], cwd: str) -> float:
    start = time.monotonic()
    proc = subprocess.run(cmd, cwd=cwd, env=_env(), capture_output=True, text=True)
    took = time.monotonic() - start
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stdout[-2000:]}"
                           f"\n{proc.stderr[-2000:]}")
    return took


BARE = textwrap.dedent("""\
    import os, sys, nbformat
    from nbclient import NotebookClient
    for path in sys.argv[1:]:
        nb = nbformat.read(path, as_version=4)
        NotebookClient(nb, kernel_name="inside-vmap", timeout=60,
                       resources={"metadata": {"path": os.path.dirname(path)}}).execute()
    """)


def run_bare(paths: C.Paths) -> float:
    return _timed([sys.executable, "-c", BARE] + submitted_notebooks(paths), paths.course)


def run_stock(paths: C.Paths, root: str) -> float:
    total = 0.0
    for a in C.assignments(paths.exercises):
        total += _timed([os.path.join(os.path.dirname(sys.executable), "nbgrader"), "autograde",
                         a, "--force"], root)
    full_marks(paths, "stock nbgrader autograde", os.path.join(root, "gradebook.db"))
    return total


def run_course(paths: C.Paths, jobs: int, seed: int, extra=()) -> float:
    took = _timed([sys.executable, "-m", "grader.instructor", "autograde", "--force",
                   f"--jobs={jobs}", f"--JudgeExercises.seed={seed}", *extra], paths.course)
    full_marks(paths, "make autograde")
    return took


def full_marks(paths: C.Paths, what: str, db: str | None = None) -> None:
    """Every submission is a full solution: anything less means the run measured a failure."""
    from nbgrader.api import Gradebook
    db = db or os.path.join(paths.course, "gradebook.db")
    with Gradebook("sqlite:///" + db, C.COURSE_ID) as gb:
        short = [(a.name, s.student.id, s.score, s.max_score) for a in gb.assignments
                 for s in a.submissions if not s.max_score or s.score != s.max_score]
    if short:
        raise RuntimeError(f"{what} did not give every solved submission full marks (so its time "
                           f"is not a grading time): {short[:5]}; see its autograde.log")


# ---- same results as a serial run ------------------------------------------------------------
def results(paths: C.Paths) -> dict:
    """Every grade's auto score and every grade cell's outputs (what the feedback shows)."""
    import nbformat
    from nbgrader.api import Gradebook
    out = {}
    with Gradebook("sqlite:///" + os.path.join(paths.course, "gradebook.db"), C.COURSE_ID) as gb:
        for a in gb.assignments:
            for sub in a.submissions:
                for nb in sub.notebooks:
                    for g in nb.grades:
                        out["score", a.name, sub.student.id, g.name] = g.auto_score
    for dirpath, _, files in os.walk(os.path.join(paths.course, "autograded")):
        for f in files:
            if f.endswith(".ipynb"):
                nb = nbformat.read(os.path.join(dirpath, f), as_version=4)
                for cell in nb.cells:
                    m = cell.metadata.get("nbgrader", {})
                    if m.get("grade") and cell.cell_type == "code":
                        out["outputs", dirpath, f, m["grade_id"]] = json.dumps(
                            cell.outputs, sort_keys=True)
    return out


# ---- where (c)'s time goes --------------------------------------------------------------------
KERNEL = textwrap.dedent("""\
    import os, sys, tempfile, time
    from jupyter_client.manager import KernelManager
    name = sys.argv[1]
    ipc = tempfile.mkdtemp(prefix="inside-vmap-bench-")
    t0 = time.monotonic()
    km = KernelManager(kernel_name=name, transport="ipc", ip=os.path.join(ipc, "kernel"))
    km.start_kernel(cwd=tempfile.mkdtemp())
    kc = km.client(); kc.start_channels(); kc.wait_for_ready(60)
    t1 = time.monotonic()
    kc.execute_interactive("import jax, jax.numpy as jnp; jnp.ones(3).block_until_ready()",
                           timeout=60, output_hook=lambda msg: None)
    t2 = time.monotonic()
    kc.stop_channels(); km.shutdown_kernel()
    t3 = time.monotonic()
    print("@@", f"{t1 - t0:.3f} {t2 - t1:.3f} {t3 - t2:.3f}")
    """)


def breakdown(paths: C.Paths) -> list[tuple[str, float]]:
    """Seconds of the main steps of one submission in (c), each measured on its own."""
    out = []
    t0 = time.monotonic()
    subprocess.run([sys.executable, "-c", "import nbgrader.apps"], env=_env(), check=True)
    out.append(("python + import nbgrader (once per process)", time.monotonic() - t0))
    for name in ("inside-vmap", "inside-vmap-sandboxed"):
        p = subprocess.run([sys.executable, "-c", KERNEL, name], env=_env(), capture_output=True,
                           text=True, cwd=C.ROOT)
        found = [x for x in p.stdout.splitlines() if x.startswith("@@ ")]
        if p.returncode == 0 and found:
            start, imp, stop = map(float, found[-1].split()[1:])
            out += [(f"kernel start ({name})", start), (f"import jax in it", imp),
                    (f"kernel shutdown", stop)]
        else:
            out.append((f"kernel {name}: could not time it ({p.stderr.strip()[-80:]})", 0.0))
    for path in submitted_notebooks(paths)[:len(C.assignments(paths.exercises))]:
        out += _judge_times(paths, path)
    return out


def _judge_times(paths: C.Paths, path: str) -> list[tuple[str, float]]:
    """One submitted notebook's judge child with no cache, then with the run's warm cache."""
    import nbformat
    from ..judge import runner, sandbox, warm
    nb, name = nbformat.read(path, as_version=4), os.path.basename(path)
    assignment = os.path.basename(os.path.dirname(path))
    key = runner.case_key(assignment, os.path.splitext(name)[0])
    seed, boxed = 1, sandbox.available()
    t0 = time.monotonic()
    runner.judge(nb, use_bwrap=boxed, rng=runner.cases_rng(seed, key))
    cold = time.monotonic() - t0
    if not boxed:
        return [(f"judge child ({name})", cold)]
    with tempfile.TemporaryDirectory() as cache:
        warm.warm({key: os.path.join(paths.exercises, assignment, name)}, seed, cache,
                  sandbox.Limits(), boxed)
        t0 = time.monotonic()
        runner.judge(nb, use_bwrap=boxed, rng=runner.cases_rng(seed, key),
                     cache=sandbox.CompileCache(cache))
        hot = time.monotonic() - t0
    return [(f"judge child ({name}), no cache", cold),
            (f"judge child ({name}), warm cache", hot)]


# ---- the students' instant checks -------------------------------------------------------------
CHECKS = textwrap.dedent("""\
    import contextlib, io, json, re, statistics, sys, time
    import jax
    import nbformat
    out = {}
    for path in sys.argv[1:]:
        nb = nbformat.read(path, as_version=4)
        ns = {"__name__": "__main__"}
        for cell in nb.cells:
            if cell.cell_type != "code":
                continue
            meta = cell.metadata.get("nbgrader", {})
            src = cell.source.split("### BEGIN HIDDEN TESTS")[0]
            src = "\\n".join(l for l in src.split("\\n") if "SOLUTION" not in l)
            if meta.get("grade"):
                for call in re.findall(r"show\\(((?:\\w+\\.)?check_\\w+\\(.*\\))\\)", src):
                    code = compile(call, "<check>", "eval")
                    times = []
                    for _ in range(6):
                        t0 = time.perf_counter()
                        with contextlib.redirect_stdout(io.StringIO()):
                            eval(code, ns)
                        times.append(time.perf_counter() - t0)
                    out[call.split("(")[0]] = (times[0], statistics.median(times[1:]))
            else:
                with contextlib.redirect_stdout(io.StringIO()), \\
                        contextlib.redirect_stderr(io.StringIO()):
                    try:
                        exec(compile(src, "<cell>", "exec"), ns)
                    except Exception:
                        pass
    print(json.dumps(out))
    """)


def check_latency(paths: C.Paths) -> dict[str, tuple[float, float]]:
    """``{check: (first call s, median of 5 later calls s)}`` on the instructor's solutions, in a
    fresh process per assignment after ``import jax`` (as in a student's kernel)."""
    found = {}
    for a in C.assignments(paths.exercises):
        nbs = [os.path.join(paths.exercises, a, n) for n in C.source_notebooks(paths.exercises, a)]
        p = subprocess.run([sys.executable, "-c", CHECKS] + nbs, env=_env(), cwd=C.ROOT,
                           capture_output=True, text=True)
        if p.returncode != 0:
            raise RuntimeError(p.stderr[-2000:])
        found.update(json.loads(p.stdout.strip().splitlines()[-1]))
    return found


# ---- the whole benchmark ----------------------------------------------------------------------
def bench(n: int, repeat: int, jobs: int, work: str, echo=print, verify: bool = True,
          checks: bool = True) -> dict:
    jobs = jobs or os.cpu_count() or 1
    echo(f"bench: building a class of {n} solved submissions in {work}")
    paths = build(work, n)
    stock = stock_course(paths)
    subs = n * len(C.assignments(paths.exercises))
    times = {"bare": [], "stock": [], "course": []}
    seed = secrets.randbelow(2 ** 63)     # one for every run of (c): the serial one must match
    for r in range(repeat):
        times["bare"].append(run_bare(paths))
        times["stock"].append(run_stock(paths, stock))
        times["course"].append(run_course(paths, jobs, seed))
        echo(f"bench: run {r + 1}/{repeat}: " + ", ".join(
            f"{k} {v[-1]:.1f} s" for k, v in times.items()))
    med = {k: statistics.median(v) / subs for k, v in times.items()}
    report = {"n": n, "submissions": subs, "jobs": jobs, "repeat": repeat, "per_submission": med}
    echo(f"\nper submission (median of {repeat}; {subs} submissions = {n} students x "
         f"{len(C.assignments(paths.exercises))} assignments; {os.cpu_count()} cores):")
    echo(f"  (a) bare nbclient execution         {med['bare']:6.2f} s")
    echo(f"  (b) stock nbgrader autograde        {med['stock']:6.2f} s  "
         f"(+{med['stock'] - med['bare']:.2f} s over a)")
    echo(f"  (c) make autograde, --jobs {jobs:<2}       {med['course']:6.2f} s  "
         f"({med['course'] - med['bare']:+.2f} s over a)")
    if verify:
        parallel = results(paths)
        serial_s = run_course(paths, 1, seed)
        serial = results(paths)
        echo(f"  (c) serial, --jobs 1 (one run)      {serial_s / subs:6.2f} s")
        # Every simulated student hands in the instructor's solutions: the cache's best case.
        # Without it, every judge child compiles everything: the bound for unlike answers.
        cold_s = run_course(paths, jobs, seed, ["--no-warm"])
        report["per_submission"]["course_no_cache"] = cold_s / subs
        echo(f"  (c) --no-warm, no shared cache (one run) {cold_s / subs:6.2f} s  (speedup "
             f"{med['stock'] / (cold_s / subs):.2f}: the bound for answers unlike the solutions)")
        scores_same = ({k: v for k, v in parallel.items() if k[0] == "score"}
                       == {k: v for k, v in serial.items() if k[0] == "score"})
        p_n, s_n = parallel, serial           # same seed, same hidden cases: byte-identical
        report["identical_to_serial"] = scores_same and p_n == s_n
        echo(f"same scores as the serial run: {'yes' if scores_same else 'NO'}; same feedback "
             f"(grade-cell outputs, byte for byte): {'yes' if p_n == s_n else 'NO'}")
        for k in [k for k in sorted(set(s_n) | set(p_n), key=str) if s_n.get(k) != p_n.get(k)][:3]:
            echo(f"  differs: {k}: serial {str(s_n.get(k))[:300]!r} / "
                 f"parallel {str(p_n.get(k))[:300]!r}")
    echo("\nwhere one submission's time goes in (c) (each step measured on its own):")
    for what, s in breakdown(paths):
        echo(f"  {what:<48} {s:6.2f} s")
    if checks:
        lat = check_latency(paths)
        report["checks"] = lat
        echo("\nstudents' instant checks (instructor solutions; first call, median of 5 later):")
        for name, (first, later) in lat.items():
            ok = "ok" if first <= 0.5 and later <= 0.05 else "SLOW"
            echo(f"  {name:<36} {first * 1000:7.0f} ms  {later * 1000:6.1f} ms  {ok}")
    speedup = med["stock"] / med["course"]
    report["speedup"] = speedup
    echo(f"speedup vs stock nbgrader: {speedup:.2f}")
    return report


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m grader.instructor.bench",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=40, help="students (default 40)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each, median (default 3)")
    parser.add_argument("--jobs", type=int, default=0, help="workers of (c) (default: cores)")
    parser.add_argument("--keep", metavar="DIR", help="build in DIR and keep it")
    parser.add_argument("--no-verify", action="store_true", help="skip the serial comparison")
    args = parser.parse_args(argv)
    work = args.keep or tempfile.mkdtemp(prefix="inside-vmap-bench-")
    try:
        bench(args.n, args.repeat, args.jobs, work, verify=not args.no_verify)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
