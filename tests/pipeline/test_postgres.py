"""A gradebook several graders share: the course on a real PostgreSQL server (tests/fixtures/postgres.py).

The same small class (a full solution, a partial one, the untouched release; the first assignment)
is graded into SQLite and into PostgreSQL on the same hidden cases: the exports are the same. Then
two autograde runs start at once on one PostgreSQL gradebook: the second waits for the first, and
together they grade every submission exactly once, losing and duplicating nothing.
"""
import os
import subprocess
import sys
import time

import pytest
import sqlalchemy as sa

from tools import classroom as C

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")]
TIMEOUT, SEED = 30, 20260105
CLASS = (C.Student("ada", C.FULL, False), C.Student("cleo", C.PARTIAL, False),
         C.Student("ben", C.BLANK, False))


def collected(work, db_url=None):
    """A course copy (on db_url's gradebook, else SQLite) with CLASS's first assignment collected."""
    paths = C.build_course(str(work), settings={"CourseDirectory.db_url": db_url} if db_url else {})
    C.enrol(paths, CLASS)
    C.assign(paths)
    C.submit_all(paths, CLASS)
    C.collect(paths)
    return paths


def seeded(paths):
    C.autograde(paths, TIMEOUT, extra=[f"--JudgeExercises.seed={SEED}"])


def exported(paths):
    C.export(paths)
    with open(os.path.join(paths.course, "grades.csv"), encoding="utf-8") as fh:
        return fh.read()


@pytest.fixture(scope="module")
def sqlite_export(tmp_path_factory):
    paths = collected(tmp_path_factory.mktemp("sqlite"))
    seeded(paths)
    return exported(paths)


def test_a_class_graded_into_postgres_exports_what_sqlite_does(sqlite_export, postgres_url,
                                                               tmp_path):
    paths = collected(tmp_path, postgres_url)
    assert not os.path.exists(os.path.join(paths.course, "gradebook.db"))    # no SQLite file
    seeded(paths)
    assert exported(paths) == sqlite_export
    assert "ada" in sqlite_export and ",blank," in sqlite_export


def counts(url):
    """Rows per (assignment, student) and per grade cell of each submission, in the gradebook."""
    engine = sa.create_engine(url)
    with engine.connect() as conn:
        subs = conn.execute(sa.text(
            "SELECT a.name, s.student_id, count(*) FROM submitted_assignment s JOIN assignment a "
            "ON a.id = s.assignment_id GROUP BY a.name, s.student_id")).all()
        grades = conn.execute(sa.text(
            "SELECT g.notebook_id, g.cell_id, count(*) FROM grade g "
            "GROUP BY g.notebook_id, g.cell_id HAVING count(*) > 1")).all()
    engine.dispose()
    return {(a, s): n for a, s, n in subs}, grades


def test_two_autogrades_at_once_lose_and_duplicate_nothing(sqlite_export, postgres_url, tmp_path):
    paths = collected(tmp_path, postgres_url)
    env = dict(os.environ, JAX_PLATFORMS="cpu",
               PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    runs = []
    for name in ("first", "second"):
        out = open(tmp_path / f"{name}.out", "w")
        runs.append((subprocess.Popen(
            [sys.executable, "-m", "grader.instructor", "autograde", f"--Execute.timeout={TIMEOUT}",
             f"--JudgeExercises.seed={SEED}"], cwd=paths.course, env=env, stdout=out,
            stderr=subprocess.STDOUT, start_new_session=True), out))
        time.sleep(0.5)
    texts = []
    for proc, out in runs:
        assert proc.wait(timeout=600) == 0, (tmp_path / os.path.basename(out.name)).read_text()
        out.close()
        texts.append(open(out.name).read())
    waited = [t for t in texts if "waiting for another autograde" in t]
    assert len(waited) == 1, texts                  # one ran, the other took its turn after it
    graded_now = [line for t in texts for line in t.splitlines()
                  if line.lstrip().startswith("[") and "unchanged" not in line]
    assert len(graded_now) == len(CLASS), texts     # each submission graded once, by one run
    assert all("unchanged" in line for line in waited[0].splitlines()
               if line.lstrip().startswith("["))
    subs, duplicated = counts(postgres_url)
    first = C.assignments(paths.exercises)[0]
    assert subs == {(first, st.id): 1 for st in CLASS} and duplicated == []
    assert exported(paths) == sqlite_export
