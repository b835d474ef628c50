"""What a Dask worker runs for `grader.instructor.distributed`: one task per submission.

Every task grades through `grading.grade_submission`, exactly as autograde's local workers do
(the sandboxed kernel, the judge, its limits, the run's secret seed, its read-only warm cache),
and first checks that this worker may grade this run at all (`WorkerUnfit` says why not): it
sees the course folder (the run's token file is there), it boxes student code as the other
workers do, it runs the same grading code, and a SQLite gradebook is on its own host. The
instructor's process stops the run on the first `WorkerUnfit`: a worker that cannot grade
would otherwise fail every submission it is handed.

The warm compilation cache travels once per worker, as a `JudgeCache` plugin that unpacks it
read-only onto the worker's local disk; only the instructor's trusted warm-up ever wrote it.
"""
from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import functools
import hashlib
import importlib.metadata
import io
import os
import socket
import stat
import tarfile
import threading

from distributed.diagnostics.plugin import WorkerPlugin

from .. import repo
from . import grading

TOKEN_FILE = ".autograde-run"          # in the course folder while a cluster run lasts
_ONE_AT_A_TIME = threading.Lock()      # nbgrader's app is per-process state (see grading)


class WorkerUnfit(RuntimeError):
    """Why this worker cannot grade this run (one line naming the worker)."""


@dataclasses.dataclass(frozen=True)
class Run:
    """What every task of one run carries: where the course is, how to prove it is the same
    folder, how submissions are graded, and what a worker must be to grade them."""
    course: str                     # the folder of nbgrader_config.py, as the instructor sees it
    token: str                      # TOKEN_FILE's content for this run
    db_url: str
    course_id: str
    settings: grading.RunSettings   # compile_cache is replaced by each worker's local copy
    boxes: tuple                    # `boxing()` of the workers, all alike
    code: str                       # `code_digest()` of the instructor's checkout
    sqlite_host: str = ""           # a SQLite gradebook: the one host allowed to grade
    cache: str = ""                 # the JudgeCache plugin's name ("": no warm cache)


# ---- what a worker is ---------------------------------------------------------------------------
@functools.lru_cache(maxsize=1)
def boxing() -> tuple[bool, bool]:
    """(bubblewrap works, cgroups can be made): how this host limits student code."""
    from ..judge import sandbox
    return sandbox.available(), sandbox.cgroups()


@functools.lru_cache(maxsize=1)
def code_digest() -> str:
    """The grading code and the packages it grades with: the grader package's Python files,
    and the JAX and nbgrader versions the kernels and judge children import."""
    package = repo.PACKAGE
    digest = hashlib.sha256()
    for folder, dirs, files in sorted(os.walk(package)):
        dirs.sort()
        for name in sorted(f for f in files if f.endswith(".py")):
            path = os.path.join(folder, name)
            digest.update(os.path.relpath(path, package).encode() + b"\0")
            with open(path, "rb") as fh:
                digest.update(fh.read())
    for dist in ("jax", "jaxlib", "nbgrader"):
        digest.update(f"{dist}=={importlib.metadata.version(dist)}".encode())
    return digest.hexdigest()[:16]


def probe(course: str, token: str) -> dict:
    """Run on every worker at the start (``client.run``): what the checks need to know."""
    path = os.path.join(course, TOKEN_FILE)
    try:
        with open(path, encoding="utf-8") as fh:
            seen = fh.read().strip() == token
        why = "" if seen else f"{path} there is another run's (not the same folder)"
    except OSError as err:
        seen, why = False, f"cannot read {path}: {err.strerror or err}"
    if seen and not os.access(course, os.W_OK):
        seen, why = False, f"{course} is read-only there"
    return {"host": socket.gethostname(), "pid": os.getpid(), "sees": seen, "why": why,
            "boxes": boxing(), "code": code_digest()}


def unfit(run: Run, found: dict, where: str) -> str | None:
    """Why a worker whose `probe` gave ``found`` cannot grade ``run`` (None: it can)."""
    if not found["sees"]:
        return (f"worker {where} on {found['host']} cannot see the course folder {run.course}"
                f" ({found['why']}): mount it there at the same path, or stop that worker")
    if run.sqlite_host and found["host"] != run.sqlite_host:
        return (f"worker {where} is on {found['host']}, and a SQLite gradebook cannot be "
                f"shared across hosts: set CourseDirectory.db_url to a PostgreSQL database")
    if tuple(found["boxes"]) != tuple(run.boxes):
        return (f"worker {where} on {found['host']} limits student code as "
                f"{describe(found['boxes'])}, the run's other workers as "
                f"{describe(run.boxes)}: grades could differ")
    if found["code"] != run.code:
        return (f"worker {where} on {found['host']} runs other grading code ({found['code']}, "
                f"here {run.code}): check out the same commit and `make setup` there")
    return None


def describe(boxes) -> str:
    bwrap, groups = boxes
    return ("bubblewrap" if bwrap else "no sandbox") + (" and cgroups" if groups else
                                                        " and rlimits")


# ---- the task -----------------------------------------------------------------------------------
def grade_task(run: Run, assignment: str, student: str) -> dict:
    """Grade one submission on this worker; nbgrader's ``capture_log`` result, as locally."""
    from distributed import get_worker
    worker = get_worker()
    why = unfit(run, probe(run.course, run.token), worker.address)
    if why:
        raise WorkerUnfit(why)
    settings = run.settings
    if run.cache:
        plugin = worker.plugins.get(run.cache)
        if plugin is None or not os.path.isdir(getattr(plugin, "path", "")):
            raise WorkerUnfit(f"worker {worker.address}: the run's compilation cache did not "
                              "reach it")
        settings = dataclasses.replace(settings, compile_cache=plugin.path)
    with _ONE_AT_A_TIME, submission_lock(run, assignment, student):
        return grading.grade_submission(run.course, assignment, student, settings)


@contextlib.contextmanager
def submission_lock(run: Run, assignment: str, student: str):
    """One grader per submission at a time, whichever runs asked: a task cancelled by Ctrl-C
    still finishes on its worker, and the next run may hand the same submission out again."""
    from ..nbgrader_plugins import lock
    name = f"inside-vmap submission {run.course_id} {assignment} {student}"
    if lock.is_postgres(run.db_url):
        with lock.postgres_lock(run.db_url, name, wait=True):
            yield
        return
    # SQLite: one host (see `unfit`), so a byte-range lock in one file per course works.
    with open(os.path.join(run.course, ".autograde-submissions.lock"), "a") as fh:
        offset = int.from_bytes(hashlib.sha256(name.encode()).digest()[:4], "big")
        fcntl.lockf(fh, fcntl.LOCK_EX, 1, offset)
        try:
            yield
        finally:
            fcntl.lockf(fh, fcntl.LOCK_UN, 1, offset)


# ---- the warm cache, once per worker ------------------------------------------------------------
def pack(folder: str) -> bytes:
    """The cache folder as a gzipped tar (built here, unpacked on every worker)."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz", compresslevel=1) as tar:
        tar.add(folder, arcname=".")
    return out.getvalue()


class JudgeCache(WorkerPlugin):
    """The run's warm compilation cache, unpacked read-only into the worker's local folder
    (also on workers that join later: the scheduler hands them every registered plugin)."""

    def __init__(self, blob: bytes, name: str):
        self.blob, self.name, self.path = blob, name, ""

    def setup(self, worker) -> None:
        path = os.path.join(worker.local_directory, self.name)
        if not os.path.isdir(path):
            partial = path + ".partial"
            with tarfile.open(fileobj=io.BytesIO(self.blob), mode="r:gz") as tar:
                tar.extractall(partial, filter="data")
            _read_only(partial)
            os.rename(partial, path)
        self.path = path

    def teardown(self, worker) -> None:
        if self.path and os.path.isdir(self.path):
            _writable(self.path)
            import shutil
            shutil.rmtree(self.path, ignore_errors=True)


def _read_only(top: str) -> None:
    for folder, _, files in os.walk(top, topdown=False):
        for name in files:
            os.chmod(os.path.join(folder, name), stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
        os.chmod(folder, 0o555)


def _writable(top: str) -> None:
    for folder, _, _ in os.walk(top):
        os.chmod(folder, 0o755)
