"""The status file and the one-autograde-per-gradebook lock (grader.nbgrader_plugins.status, .lock)."""
import threading
import time

import pytest
from traitlets.config import Config

from grader.nbgrader_plugins import FAILED, GRADED, GRADING, TIMED_OUT, GradingStatus
from grader.nbgrader_plugins.lock import is_postgres

STAMP = "2026-01-05 10:00:00.000000 UTC"


def test_status_records_replace_and_survive(tmp_path):
    status = GradingStatus()
    status.record(str(tmp_path), "a1", "s", GRADING, "", STAMP)
    status.record(str(tmp_path), "a1", "s", FAILED, TIMED_OUT, STAMP)
    (rec,) = status.load(str(tmp_path)).values()
    assert (rec.status, rec.reason, rec.timestamp) == (FAILED, TIMED_OUT, STAMP)
    assert [p.name for p in tmp_path.iterdir()] == ["grading-status.json"]   # no temp files


@pytest.mark.parametrize("text", ["{not json", "[]", '{"assignments": {"a1": {"s": {"x": 1}}}}'])
def test_an_unreadable_status_file_is_ignored(tmp_path, text):
    (tmp_path / "grading-status.json").write_text(text)
    assert GradingStatus().load(str(tmp_path)) == {}


def test_the_status_file_is_configurable(tmp_path):
    cfg = Config()
    cfg.GradingStatus.path = "status/here.json"
    (tmp_path / "status").mkdir()
    GradingStatus(config=cfg).record(str(tmp_path), "a1", "s", GRADED)
    assert (tmp_path / "status" / "here.json").exists()


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
    assert "pid" in told and "grading-status.json.lock" in told


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
