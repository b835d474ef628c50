"""The grading status in the gradebook's database and the one-autograde-per-gradebook lock
(grader.nbgrader_plugins.status, .lock)."""
import threading
import time

import pytest
import sqlalchemy as sa
from nbgrader.api import Gradebook
from nbgrader.coursedir import CourseDirectory

from grader.nbgrader_plugins import FAILED, GRADED, GRADING, TIMED_OUT, GradingStatus
from grader.nbgrader_plugins.lock import is_postgres
from grader.nbgrader_plugins.status import TABLE

STAMP = "2026-01-05 10:00:00.000000 UTC"


def where(db_url, course_id="c"):
    return CourseDirectory(db_url=db_url, course_id=course_id)


def records_replace_and_survive(db_url):
    """Records replace each other per (course, assignment, student), beside nbgrader's tables."""
    with Gradebook(db_url, "c"):
        pass                                    # nbgrader's tables first, as in a course
    status = GradingStatus()
    status.record(where(db_url), "a1", "s", GRADING, "", STAMP, "d1")
    status.record(where(db_url), "a1", "s", FAILED, TIMED_OUT, STAMP, "d1")
    status.record(where(db_url, "other"), "a1", "s", GRADED)
    (rec,) = GradingStatus().load(where(db_url)).values()     # a fresh reader: it is stored
    assert (rec.status, rec.reason, rec.timestamp, rec.digest) == (FAILED, TIMED_OUT, STAMP, "d1")
    assert GradingStatus().load(where(db_url, "other"))[("a1", "s")].status == GRADED
    engine = sa.create_engine(db_url)
    tables = set(sa.inspect(engine).get_table_names())
    engine.dispose()
    assert TABLE.name in tables and {"grade", "submitted_assignment"} <= tables
    with Gradebook(db_url, "c") as gb:          # nbgrader still opens it as its own
        assert [a.name for a in gb.assignments] == []


def test_status_records_in_a_sqlite_gradebook(tmp_path):
    records_replace_and_survive("sqlite:///" + str(tmp_path / "gradebook.db"))
    assert [p.name for p in tmp_path.iterdir()] == ["gradebook.db"]    # no file beside it


def test_status_records_in_a_postgres_gradebook(postgres_url):
    records_replace_and_survive(postgres_url)


def test_a_reason_is_made_safe_to_show(tmp_path):
    url = "sqlite:///" + str(tmp_path / "gradebook.db")
    GradingStatus().record(where(url), "a1", "s", FAILED, "bad\x1b[2Jcell\n" + "x" * 5000)
    reason = GradingStatus().load(where(url))[("a1", "s")].reason
    assert "\x1b" not in reason and "\n" not in reason and len(reason) < 5000


# ---- the lock -----------------------------------------------------------------------------
def second_run_waits(lock_a, lock_b):
    """Hold lock_a; a thread taking lock_b must wait, say so, and get it once lock_a is let go."""
    said, order = [], []

    def second():
        with lock_b(said.append):
            order.append("second")

    with lock_a(None):
        t = threading.Thread(target=second)
        t.start()
        deadline = time.monotonic() + 10
        while not said and time.monotonic() < deadline:
            time.sleep(0.05)
        assert said and "waiting for another autograde" in said[0], said
        assert order == []                  # still waiting while the first run holds it
        order.append("first done")
    t.join(timeout=10)
    assert order == ["first done", "second"]
    return said[0]


def test_a_second_autograde_on_a_sqlite_gradebook_waits(tmp_path):
    status = GradingStatus()
    lock = lambda say: status.exclusive(str(tmp_path), "sqlite:///x.db", "c", True, say)  # noqa
    told = second_run_waits(lock, lock)
    assert "pid" in told and "autograde.lock" in told


def test_without_waiting_a_second_autograde_is_refused(tmp_path):
    status = GradingStatus()
    with status.exclusive(str(tmp_path)):
        with pytest.raises(RuntimeError, match="another autograde .pid"):
            with status.exclusive(str(tmp_path)):
                pass
    with status.exclusive(str(tmp_path)):
        pass


@pytest.mark.parametrize("url, pg", [("sqlite:////x/gradebook.db", False),
                                     ("postgresql://u@h/db", True),
                                     ("postgresql+psycopg2://u@127.0.0.1:5/db", True), ("", False)])
def test_which_lock(url, pg):
    assert is_postgres(url) is pg


def test_a_second_autograde_on_a_postgres_gradebook_waits_from_any_folder(postgres_url, tmp_path):
    status = GradingStatus()
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()        # another course folder (another machine): the same lock
    first = lambda say: status.exclusive(str(tmp_path / "a"), postgres_url, "c", True, say)  # noqa
    second = lambda say: status.exclusive(str(tmp_path / "b"), postgres_url, "c", True, say)  # noqa
    told = second_run_waits(first, second)
    assert "inside-vmap autograde, pid" in told and "PostgreSQL advisory lock" in told
    with status.exclusive(str(tmp_path / "a"), postgres_url, "c"):
        with pytest.raises(RuntimeError, match="holds this gradebook's lock in PostgreSQL"):
            with status.exclusive(str(tmp_path / "b"), postgres_url, "c"):
                pass
        with status.exclusive(str(tmp_path / "b"), postgres_url, "another course"):
            pass                                # one lock per course id
