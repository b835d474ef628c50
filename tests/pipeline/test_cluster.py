"""Grading on a Dask cluster (grader/instructor/distributed.py) into a real PostgreSQL server
(tests/fixtures/postgres.py), with a `dask scheduler` and two `dask worker` processes on
loopback, started here and stopped by PID (tools.bench.cluster.CliCluster).

The same small class graded serially into SQLite and on the cluster into PostgreSQL exports the
same grades, holds the same grades and comments in its gradebook and gets the same feedback, as the
student reads it (tests/fixtures/seen.py: how ipykernel happened to split a cell's printing, or the
HTML around the text, is no difference to a student); graded again while one worker is
SIGKILLed mid-submission, nothing changes and no gradebook row is duplicated; a submission that
kills every worker grading it is failed, saying so, after the scheduler's allowed failures, and
the next run skips it; a worker that cannot see the course folder stops the run at once, saying
why. The scheduler allows one failure per task (``allowed-failures`` 1) to keep this short.

Feedback is compared as its text but for one name: the kit folder every grading process makes
(``inside-vmap-kit-XXXXXXXX``, random per process, so two serial runs differ there too), which a
traceback through the kit shows.
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import time

import psutil
import pytest
import sqlalchemy as sa

from tests.fixtures import seen
from tools import classroom as C
from tools.bench import cluster as bench_cluster
from tools.bench import runs
from tools.classroom.inprocess import nbgrader

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")]
TIMEOUT, SEED = 30, 20260105
CLASS = (C.Student("ada", C.FULL, False), C.Student("cleo", C.PARTIAL, False),
         C.Student("ben", C.BLANK, False), C.Student("dev", C.DIES, False))
KILLER = "zed"                  # grading zed kills the worker (tests/fixtures/dask_kill_on.py)
PRELOAD = os.path.join(C.ROOT, "tests", "fixtures", "dask_kill_on.py")
STAMP = "2026-01-05 09:00:00.000000 UTC"
KIT_FOLDER = re.compile(r"inside-vmap-kit-[A-Za-z0-9_]+")     # tempfile.mkdtemp's, per process


def collected(work, students=CLASS, db_url=None):
    """A course copy (on db_url's gradebook, else SQLite) with the first assignment of every
    student collected, all handed in at one time, so two copies' feedback can be compared."""
    paths = C.build_course(str(work), settings={"CourseDirectory.db_url": db_url} if db_url else {})
    C.enrol(paths, students)
    C.assign(paths)
    C.submit_all(paths, students)
    C.collect(paths)
    # nbgrader submit writes both files beside the notebook (the time, and a random secret it
    # hashes into the released feedback's name): made alike in both copies.
    for folder, _, files in os.walk(os.path.join(paths.course, "submitted")):
        for name, text in (("timestamp.txt", STAMP), ("submission_secret.txt", "0" * 128)):
            if name in files:
                with open(os.path.join(folder, name), "w") as fh:
                    fh.write(text)
    return paths


def graded(paths, db_url=None):
    """The export, what each feedback file says and the gradebook's grades and comments."""
    first = C.assignments(paths.exercises)[0]
    nbgrader(["generate_feedback", first, "--force"], paths.course)
    C.export(paths)
    with open(os.path.join(paths.course, "grades.csv"), encoding="utf-8") as fh:
        export = fh.read()
    top, feedback = os.path.join(paths.course, "feedback"), {}
    for folder, _, files in os.walk(top):
        for name in files:
            with open(os.path.join(folder, name), "rb") as fh:
                feedback[os.path.relpath(os.path.join(folder, name), top)] = KIT_FOLDER.sub(
                    "inside-vmap-kit-(per process)", seen.feedback_text(fh.read()))
    url = db_url or "sqlite:///" + os.path.join(paths.course, "gradebook.db")
    return export, feedback, seen.gradebook(url, C.COURSE_ID)


def autograde(paths, cluster, *extra):
    """`python -m grader.instructor autograde --scheduler=...` started in the course folder."""
    log = open(os.path.join(paths.work, f"autograde-{time.monotonic_ns()}.out"), "w+")
    proc = subprocess.Popen(
        [sys.executable, "-m", "grader.instructor", "autograde", f"--Execute.timeout={TIMEOUT}",
         f"--JudgeExercises.seed={SEED}", f"--scheduler={cluster.address}", *extra],
        cwd=paths.course, env=runs.env(), stdout=log, stderr=subprocess.STDOUT,
        start_new_session=True)
    return proc, log


def finished(proc, log, rc=0):
    assert proc.wait(timeout=300) == rc, open(log.name).read()
    log.close()
    return open(log.name).read()


def rows(url):
    """Rows per submission, and grade cells with more than one row, in the gradebook."""
    engine = sa.create_engine(url)
    with engine.connect() as conn:
        subs = conn.execute(sa.text(
            "SELECT a.name, s.student_id, count(*) FROM submitted_assignment s JOIN assignment a "
            "ON a.id = s.assignment_id GROUP BY a.name, s.student_id")).all()
        doubled = conn.execute(sa.text(
            "SELECT notebook_id, cell_id, count(*) FROM grade GROUP BY notebook_id, cell_id "
            "HAVING count(*) > 1")).all()
    engine.dispose()
    return {(a, s): n for a, s, n in subs}, doubled


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    found = bench_cluster.CliCluster(
        str(tmp_path_factory.mktemp("dask")), env={"INSIDE_VMAP_KILL_STUDENT": KILLER},
        scheduler_env={"DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES": "1"}).start()
    try:
        for _ in range(2):
            found.add_worker("--preload", PRELOAD)
        found.wait_for(2)
        yield found
    finally:
        found.stop()


@pytest.fixture(scope="module")
def serial(tmp_path_factory):
    paths = collected(tmp_path_factory.mktemp("serial"))
    C.autograde(paths, TIMEOUT, extra=[f"--JudgeExercises.seed={SEED}", "--jobs=1"])
    return graded(paths)


@pytest.fixture(scope="module")
def on_postgres(postgres, tmp_path_factory):
    url = postgres.create_database("t_distributed")
    return collected(tmp_path_factory.mktemp("postgres"), db_url=url), url


def test_the_cluster_grades_into_postgres_what_a_serial_run_grades_into_sqlite(
        serial, cluster, on_postgres):
    paths, url = on_postgres
    assert not os.path.exists(os.path.join(paths.course, "gradebook.db"))
    out = finished(*autograde(paths, cluster))
    assert f"dashboard http://127.0.0.1:{cluster.dashboard_port}/status" in out, out
    assert "on the Dask cluster" in out and "(2 worker(s)" in out, out
    assert "autograde: progress: graded 3 / failed 1 / left 0" in out, out
    assert bench_cluster.CLUSTER_LINE.search(out).group(1) == str(len(CLASS)), out  # make bench's
    export, feedback, grades = graded(paths, url)
    assert export == serial[0]
    assert ",dev," in export and "kernel died" in export and ",blank," in export
    assert sorted(feedback) == sorted(serial[1]) and feedback == serial[1]
    assert grades == serial[2] and len(grades) > 3 * len(CLASS)
    first = C.assignments(paths.exercises)[0]
    assert rows(url) == ({(first, st.id): 1 for st in CLASS}, [])


def test_a_worker_killed_mid_submission_changes_nothing(serial, cluster, on_postgres):
    paths, url = on_postgres
    pids = cluster.wait_for(2)
    proc, log = autograde(paths, cluster, "--force")
    killed = None
    while killed is None and proc.poll() is None:
        for pid in pids.values():             # a worker with a child is grading (its kernel)
            if psutil.Process(pid).children():
                os.kill(pid, signal.SIGKILL)
                killed = pid
                break
        time.sleep(0.05)
    out = finished(proc, log)
    assert killed is not None, "no worker was seen grading:\n" + out
    assert killed not in cluster.wait_for(2).values()      # its nanny started a new one
    assert graded(paths, url) == serial
    first = C.assignments(paths.exercises)[0]
    assert rows(url) == ({(first, st.id): 1 for st in CLASS}, [])   # graded again: same rows


def test_a_submission_that_kills_its_workers_is_failed_and_the_rest_graded(cluster, tmp_path):
    students = (C.Student("ada", C.FULL, False), C.Student(KILLER, C.FULL, False))
    paths = collected(tmp_path, students)          # SQLite: every worker is on this host
    first = C.assignments(paths.exercises)[0]
    out = finished(*autograde(paths, cluster))
    assert f"FAILED {first} {KILLER}: it stopped 2 grading workers" in out, out
    status = {row["student_id"]: (row["status"], row["reason"]) for row in C.export(paths)
              if row["assignment"] == first}
    assert status == {"ada": ("graded", ""), KILLER: ("failed", "it stopped 2 grading workers")}
    pids = cluster.wait_for(2)
    again = finished(*autograde(paths, cluster))   # resumed: nothing left to grade
    assert "failed earlier, unchanged: it stopped 2 grading workers" in again, again
    assert "on the Dask cluster" not in again and cluster.wait_for(2) == pids


def test_a_worker_that_cannot_see_the_course_folder_stops_the_run(cluster, tmp_path):
    if shutil.which("bwrap") is None:
        pytest.skip("inside-vmap: no bubblewrap to hide the course folder from a worker")
    paths = collected(tmp_path, CLASS[:1])
    # A third worker in a mount namespace where the course's folder is an empty tmpfs.
    blind = cluster.add_worker(prefix=("bwrap", "--dev-bind", "/", "/", "--tmpfs", paths.work))
    try:
        cluster.wait_for(3)
        out = finished(*autograde(paths, cluster), rc=1)
    finally:
        bench_cluster.stop(blind)
        cluster.workers.remove(blind)
    assert f"cannot see the course folder {paths.course}" in out, out
    assert "judged the instructor's solutions" not in out, out     # it stopped before the warm-up
    cluster.wait_for(2)
