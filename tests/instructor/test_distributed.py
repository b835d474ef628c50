"""Grading on a Dask cluster, the parts that need no cluster: which workers may grade a run and
why not, what a task's end becomes in the grading status, the warm cache a worker unpacks, the
per-submission lock, the progress line. The cluster itself: tests/pipeline/test_cluster.py."""
import hashlib
import io
import os
import socket
import subprocess
import sys
import types

import pytest
from distributed import KilledWorker

from grader.instructor import cluster_task as T
from grader.instructor import distributed as D
from grader.instructor import grading
from grader.instructor.autograde import AutogradeEach
from grader.instructor.progress import Progress, format_eta
from grader.nbgrader_plugins import FAILED

HERE = socket.gethostname()
BOXES = (True, True)


def run(tmp_path, **kw):
    fields = dict(course=str(tmp_path), token="t0k3n", db_url="sqlite:///gradebook.db",
                  course_id="c", settings=grading.RunSettings(), boxes=BOXES, code="abc")
    return T.Run(**dict(fields, **kw))


def found(**kw):
    return dict(dict(host=HERE, pid=1, sees=True, why="", boxes=BOXES, code="abc"), **kw)


# ---- which workers may grade ----------------------------------------------------------------------
def test_a_worker_sees_the_course_only_where_this_run_s_token_is(tmp_path):
    assert T.probe(str(tmp_path), "t0k3n")["why"].startswith("cannot read ")
    (tmp_path / T.TOKEN_FILE).write_text("other\n")
    assert "another run's" in T.probe(str(tmp_path), "t0k3n")["why"]
    (tmp_path / T.TOKEN_FILE).write_text("t0k3n\n")
    got = T.probe(str(tmp_path), "t0k3n")
    assert got["sees"] and got["host"] == HERE and got["code"] == T.code_digest()


def test_each_reason_a_worker_cannot_grade_names_the_worker_and_the_fix(tmp_path):
    r = run(tmp_path, sqlite_host=HERE)
    assert T.unfit(r, found(), "w1") is None
    blind = T.unfit(r, found(sees=False, why="cannot read it"), "w1")
    assert blind.startswith("worker w1 on ") and f"cannot see the course folder {tmp_path}" in blind
    assert "PostgreSQL" in T.unfit(r, found(host="elsewhere"), "w1")
    assert "grades could differ" in T.unfit(r, found(boxes=(False, True)), "w1")
    assert "same commit" in T.unfit(r, found(code="old"), "w1")
    assert T.unfit(run(tmp_path, db_url="postgresql://x/y"), found(host="elsewhere"), "w") is None


class FakeClient:
    def __init__(self, probes):
        self.probes = probes

    def run(self, function, *args, on_error="raise"):
        assert function is T.probe and on_error == "return"
        return self.probes


def say_nothing():
    return types.SimpleNamespace(_say=lambda text: None)


def test_a_sqlite_gradebook_is_refused_in_one_line_once_a_worker_is_elsewhere(tmp_path):
    client = FakeClient({"tcp://a:1": found(), "tcp://b:1": found(host="gpu-node-7")})
    with pytest.raises(D.ClusterError) as err:
        D._checked(say_nothing(), client, run(tmp_path))
    assert "SQLite" in str(err.value) and "gpu-node-7" in str(err.value)
    assert "PostgreSQL" in str(err.value) and "\n" not in str(err.value)
    # every worker here: SQLite on this host's disk, as the local workers use it
    local = D._checked(say_nothing(), FakeClient({"tcp://a:1": found()}), run(tmp_path))
    assert local.sqlite_host == HERE and local.boxes == BOXES
    shared = D._checked(say_nothing(), client, run(tmp_path, db_url="postgresql://h/db"))
    assert shared.sqlite_host == ""


def test_workers_that_box_differently_or_cannot_be_probed_stop_the_run(tmp_path):
    mixed = FakeClient({"tcp://a:1": found(), "tcp://b:1": found(boxes=(False, False))})
    with pytest.raises(D.ClusterError, match="limit student code differently"):
        D._checked(say_nothing(), mixed, run(tmp_path))
    broken = FakeClient({"tcp://a:1": ModuleNotFoundError("No module named 'grader'")})
    with pytest.raises(D.ClusterError, match="could not be probed.*make setup"):
        D._checked(say_nothing(), broken, run(tmp_path))


# ---- what a task's end becomes --------------------------------------------------------------------
class Done:
    def __init__(self, error=None, result=None):
        self.error, self.value = error, result

    def result(self):
        if self.error:
            raise self.error
        return self.value


@pytest.fixture
def recorder(monkeypatch):
    def make(tmp_path):
        records, results = [], []
        status = types.SimpleNamespace(record=lambda *a: records.append(a))
        app = types.SimpleNamespace(coursedir=types.SimpleNamespace(root=str(tmp_path)))
        monkeypatch.setattr(D.submissions, "settle",
                            lambda app, st, a, s, here, r: results.append(r) or ("x",))
        return app, status, records, results
    return make


def test_a_submission_that_stopped_its_workers_is_failed_saying_how_many(tmp_path, recorder):
    app, status, records, _ = recorder(tmp_path)
    here = types.SimpleNamespace(timestamp="2026-01-01", digest="d1")
    dead = KilledWorker("key", types.SimpleNamespace(address="tcp://w"), 3)
    got = D._outcome(app, status, Done(dead), "a1", "zed", here)
    assert got == (FAILED, "FAILED: it stopped 4 grading workers", "it stopped 4 grading workers")
    assert records == [(app.coursedir, "a1", "zed", FAILED, "it stopped 4 grading workers",
                        "2026-01-01", "d1")]


def test_other_task_errors_fail_that_submission_and_an_unfit_worker_stops_the_run(tmp_path, recorder):
    app, status, _, results = recorder(tmp_path)
    D._outcome(app, status, Done(OSError("disk full\n=evil()")), "a1", "ada", None)
    assert results == [{"success": False,
                        "reason": "autograde error: OSError: disk full =evil()"}]
    D._outcome(app, status, Done(result={"success": True}), "a1", "ada", None)
    assert results[-1] == {"success": True}
    with pytest.raises(D.ClusterError, match="cannot see"):
        D._outcome(app, status, Done(T.WorkerUnfit("worker w cannot see it")), "a", "s", None)


# ---- the warm cache and the lock ------------------------------------------------------------------
def test_the_warm_cache_reaches_a_worker_read_only_and_leaves_with_the_run(tmp_path):
    cache = tmp_path / "cache"
    (cache / "sub").mkdir(parents=True)
    (cache / "sub" / "entry").write_bytes(b"executable")
    worker = types.SimpleNamespace(local_directory=str(tmp_path / "worker"))
    os.makedirs(worker.local_directory)
    plugin = T.JudgeCache(T.pack(str(cache)), "inside-vmap-judge-cache-t0k3n")
    plugin.setup(worker)
    entry = os.path.join(plugin.path, "sub", "entry")
    assert open(entry, "rb").read() == b"executable"
    assert not os.stat(entry).st_mode & 0o222 and not os.stat(plugin.path).st_mode & 0o222
    plugin.teardown(worker)
    assert not os.path.exists(plugin.path)


LOCKER = """import fcntl, sys
with open(sys.argv[1], "a") as fh:
    try:
        fcntl.lockf(fh, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, int(sys.argv[2]))
    except OSError:
        sys.exit(3)
"""


def test_one_grader_per_submission_at_a_time(tmp_path):
    r = run(tmp_path)

    def offset(student):
        name = f"inside-vmap submission c a1 {student}"
        return str(int.from_bytes(hashlib.sha256(name.encode()).digest()[:4], "big"))

    path = str(tmp_path / ".autograde-submissions.lock")
    with T.submission_lock(r, "a1", "ada"):
        try_ada = subprocess.run([sys.executable, "-c", LOCKER, path, offset("ada")])
        try_ben = subprocess.run([sys.executable, "-c", LOCKER, path, offset("ben")])
    assert (try_ada.returncode, try_ben.returncode) == (3, 0)


# ---- the hook and the progress line --------------------------------------------------------------
def test_scheduler_is_an_option_of_autograde():
    app = AutogradeEach()
    app.parse_command_line(["--scheduler=tcp://h:8786"])
    assert app.config.AutogradeEach.scheduler == "tcp://h:8786"
    assert AutogradeEach.class_traits()["scheduler"].metadata.get("config")
    assert AutogradeEach.class_traits()["scheduler"].help


def test_the_progress_line_counts_and_projects(monkeypatch):
    now = [100.0]
    out = io.StringIO()
    p = Progress(10, out, every=30, clock=lambda: now[0])
    assert p.line(2) == "graded 0 / failed 0 / left 10 | 0.0 per minute | - left | 2 worker(s)"
    now[0] = 130.0
    for failed in (False, False, True):
        p.done(failed)
    assert p.line() == "graded 2 / failed 1 / left 7 | 6.0 per minute | 70 s left"
    p.show(2)
    p.show(2)                                   # not a terminal: at most one per 30 s
    assert out.getvalue().count("autograde: progress: ") == 1
    tty = io.StringIO()
    tty.isatty = lambda: True
    live = Progress(5, tty)
    live.show(1)
    live.clear()
    assert tty.getvalue().startswith("\r\033[Kgraded 0") and tty.getvalue().endswith("\r\033[K")
    assert (format_eta(59), format_eta(600), format_eta(5 * 3600 + 60)) == \
        ("59 s", "10 min", "5 h 01 min")
