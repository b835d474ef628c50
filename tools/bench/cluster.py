"""`make bench`'s distributed column: `make autograde SCHEDULER=...` on a cluster of 1, then 2
Dask workers on this machine, each a fresh `dask scheduler` and `dask worker --nthreads 1`
processes on loopback (`CliCluster`, also what tests/pipeline/test_cluster.py starts).

Each run's own closing line says how long its grading took from the first submission handed
out to the last result, apart from its set-up (connecting, checking the workers, the warm-up,
the cache sent to the workers): the throughput is over the grading, so that a projection to
thousands of submissions adds the set-up once. The scores and the feedback of every run are
compared with those of the local run of the same class on the same seed.
"""
from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

from . import runs

CLUSTER_LINE = re.compile(r"on the cluster: (\d+) submission\(s\) in ([\d.]+) s of grading "
                          r"after ([\d.]+) s of set-up")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class CliCluster:
    """A `dask scheduler` and `dask worker`s, separate processes on loopback ports nothing
    else uses, each in its own session so that stopping one by its PID stops its children."""

    def __init__(self, work: str | None = None, env: dict | None = None,
                 scheduler_env: dict | None = None):
        self.work = work or tempfile.mkdtemp(prefix="inside-vmap-dask-")
        self.env = dict(runs.env(), **(env or {}))
        self.scheduler_env = scheduler_env or {}
        self.port, self.dashboard_port = free_port(), free_port()
        self.address = f"tcp://127.0.0.1:{self.port}"
        self.scheduler, self.workers = None, []

    def _dask(self, args: list[str], log: str, env: dict, prefix=()) -> subprocess.Popen:
        out = open(os.path.join(self.work, log), "w")
        try:
            dask = os.path.join(os.path.dirname(sys.executable), "dask")
            return subprocess.Popen([*prefix, dask, *args], cwd=self.work, env=env, stdout=out,
                                    stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    start_new_session=True)
        finally:
            out.close()

    def start(self) -> CliCluster:
        self.scheduler = self._dask(
            ["scheduler", "--host", "127.0.0.1", "--port", str(self.port),
             "--dashboard-address", f"127.0.0.1:{self.dashboard_port}"],
            "scheduler.log", dict(self.env, **self.scheduler_env))
        return self

    def add_worker(self, *extra: str, prefix=()) -> subprocess.Popen:
        """One more worker process (with its nanny); ``prefix`` runs it inside another command."""
        n = len(self.workers)
        proc = self._dask(["worker", self.address, "--nworkers", "1", "--nthreads", "1",
                           "--host", "127.0.0.1", "--name", f"grader-{n}",
                           "--local-directory", os.path.join(self.work, f"worker-{n}"),
                           *extra], f"worker-{n}.log", self.env, prefix)
        self.workers.append(proc)
        return proc

    def wait_for(self, n: int, timeout_s: float = 120) -> dict:
        """Until ``n`` workers are connected; ``{address: worker process pid}``."""
        from distributed import Client
        with Client(self.address, timeout="60s", set_as_default=False) as client:
            deadline = time.monotonic() + timeout_s
            while len(client.nthreads()) != n:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{len(client.nthreads())} worker(s) joined, not {n}:\n"
                                       + self.logs())
                time.sleep(0.2)
            return client.run(os.getpid)

    def logs(self) -> str:
        return "\n".join(f"--- {name}\n" + open(os.path.join(self.work, name)).read()[-3000:]
                         for name in sorted(os.listdir(self.work)) if name.endswith(".log"))

    def stop(self) -> None:
        """Workers first (each nanny stops its worker), then the scheduler; by PID."""
        for proc in self.workers + [self.scheduler]:
            stop(proc)

    def __enter__(self) -> CliCluster:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def stop(proc: subprocess.Popen | None) -> None:
    """Stop a process started in its own session, and what it started there, by its PID."""
    if proc is None or proc.poll() is not None:
        return
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


# ---- the measurement ----------------------------------------------------------------------------
def measure(paths, seed: int, reference: dict, counts=(1, 2), echo=print) -> dict:
    """``{workers: {"grading_s", "setup_s", "submissions", "per_minute", "same"}}`` for a run
    on a fresh cluster of each size; ``reference``: `runs.results` of the local run."""
    found = {}
    for k in counts:
        before = runs.load()
        cluster = CliCluster().start()
        try:
            for _ in range(k):
                cluster.add_worker()
            cluster.wait_for(k)
            took, out = runs.timed(
                [sys.executable, "-m", "grader.instructor", "autograde", "--force",
                 f"--JudgeExercises.seed={seed}", f"--scheduler={cluster.address}"],
                paths.course)
        finally:
            cluster.stop()
            shutil.rmtree(cluster.work, ignore_errors=True)
        runs.full_marks(paths, f"make autograde SCHEDULER=... ({k} worker(s))")
        m = CLUSTER_LINE.search(out)
        if not m:
            raise RuntimeError(f"autograde on the cluster printed no closing line:\n{out[-2000:]}")
        n, grading_s, setup_s = int(m.group(1)), float(m.group(2)), float(m.group(3))
        same = runs.differences(runs.results(paths), reference) == []
        found[k] = {"submissions": n, "grading_s": grading_s, "setup_s": setup_s,
                    "whole_s": took, "per_minute": n / grading_s * 60, "same": same}
        echo(f"bench: {k} Dask worker(s): {n} submissions graded in {grading_s:.1f} s after "
             f"{setup_s:.1f} s of set-up ({n / grading_s * 60:.1f} per minute; whole run "
             f"{took:.1f} s); load {before} -> {runs.load()}")
    return found


def column(paths, seed: int, reference: dict, counts=(1, 2), echo=print) -> dict:
    """Measure, then print the distributed column; the measurements (see `measure`)."""
    found = measure(paths, seed, reference, counts, echo)
    table(found, echo)
    return found


def table(found: dict, echo=print) -> None:
    """Throughput per cluster size, and the speedup per added worker."""
    counts = sorted(found)
    echo(f"\nDask workers on this machine ({os.cpu_count()} cores; grading time, set-up apart):")
    echo(f"  {'workers':<9}{'submissions':>12}{'grading':>11}{'set-up':>10}{'per minute':>12}"
         f"{'s / sub':>9}  same as local")
    for k in counts:
        r = found[k]
        echo(f"  {k:<9}{r['submissions']:>12}{r['grading_s']:>9.1f} s{r['setup_s']:>8.1f} s"
             f"{r['per_minute']:>12.1f}{r['grading_s'] / r['submissions']:>9.2f}  "
             f"{'yes' if r['same'] else 'NO'}")
    for a, b in zip(counts, counts[1:]):
        gain = found[b]["per_minute"] / found[a]["per_minute"]
        echo(f"  {a} -> {b} workers: throughput x{gain:.2f} "
             f"(x{gain ** (1 / (b - a)):.2f} per added worker)")
