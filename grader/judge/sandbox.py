"""The box a judge child runs in: bubblewrap with no network and a read-only view of only what
Python needs, size-limited tmpfs, and limits on memory, CPU, tasks, output and wall-clock time.

Where the limits come from (`mechanism` says which applies on this machine):

* **a cgroup** (``cgroup.py``; v2, or v1's memory/pids/cpuacct, where we may make one, e.g. as
  root): memory (tmpfs included), tasks and CPU time count every process of the box together;
* **else rlimits**, per process: RLIMIT_AS for memory, RLIMIT_CPU, RLIMIT_NPROC (counted in
  bubblewrap's own user namespace when not root; never enforced for root), plus a count of the
  box's process tree every ``watch.TICK_S`` (what holds for root without a cgroup).

Either way RLIMIT_CPU and RLIMIT_FSIZE also hold per process, every tmpfs is sized, and the
trusted process reads at most ``output_mb`` of output and ``answer_mb`` of answer (``watch.py``).
A `Budget` bounds the wall-clock time of all the children one submission costs. Without
bubblewrap the limits still apply, and it says loudly that student code can read the disk."""
from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import warnings
from dataclasses import dataclass

from . import cgroup, kit_tree, watch
from .box import confine, seccomp
from .budget import Budget, submission_budget  # noqa: F401  (the box's callers' one import)
from .cgroup import confinement
from .watch import End, Outcome  # noqa: F401  (how a box ended, to its callers)


class SandboxUnavailable(UserWarning):
    """Raised as a warning when grading runs without bubblewrap."""


# The name of the variable that tells the child which file descriptor its answer goes to.
ANSWER_FD = "INSIDE_VMAP_ANSWER_FD"


@dataclass(frozen=True)
class Limits:
    """One judge child's limits, and how much answer code the trusted side reads before any
    child runs; the defaults are the course's (``JudgeExercises`` reads them)."""
    wall_s: float = 90.0         # wall-clock seconds
    cpu_s: int = 180             # CPU seconds, all its processes together where a cgroup counts
    memory_mb: int = 4096        # MiB, all processes and tmpfs together (else per process)
    tasks: int = 512             # processes and threads (JAX alone starts a few per core)
    output_mb: int = 8           # MiB it may print to stdout and stderr together
    answer_mb: int = 64          # MiB of answer in all (every line on its answer pipe)
    tmpfs_mb: int = 64           # size of each of its tmpfs (/tmp, /dev/shm)
    # KiB of one line of answer: one case's observation (an honest moments_rule draw measured 114 KB)
    case_kb: int = 1024
    # Syntax-tree nodes of all answer cells together that the trusted side reads (the largest
    # instructor solution has under 1,000): past it nothing is read or run (`runner.oversized`).
    answer_nodes: int = 50_000


@dataclass(frozen=True)
class CompileCache:
    """A JAX persistent compilation cache shared by the judge children of one grading run.

    Only a trusted child (the instructor's solutions, see ``warm``) writes it; children running
    student code get it read-only and are told never to write, so no submission can plant an
    executable that another student's child would load. Keys are hashes of the compiled program,
    so a hit can only return the executable that program compiles to."""
    path: str
    writable: bool = False

    def bwrap_args(self) -> list[str]:
        return ["--bind" if self.writable else "--ro-bind", self.path, self.path]

    def env(self) -> dict:
        # A reader never writes: its misses are too slow (over 1e9 s) to be worth keeping.
        return {"JAX_COMPILATION_CACHE_DIR": self.path,
                "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0" if self.writable else "1e9",
                "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": "-1"}


KITS_ENV = "INSIDE_VMAP_KITS"


def kits() -> str:
    """The folder holding the ``grader`` the boxes see (the kit tree): built once per grading
    process; a kernel's launcher is told it (``KITS_ENV``) rather than building its own, which
    nothing would remove once it has exec'd the box."""
    return os.environ.get(KITS_ENV) or kit_tree.shared()


def _readable_roots() -> list[str]:
    """Only what the interpreter and its packages need, and of the course only the lessons' kits
    (`kit_tree`); never the course's answer key, submissions or gradebook."""
    roots = {sys.prefix, sys.base_prefix, sysconfig.get_paths()["stdlib"], kits()}
    return sorted(p for p in roots if os.path.exists(p))


def hidden_copies() -> list[str]:
    """A full ``grader`` package installed inside a mounted root (``pip install .`` rather than
    the editable install): mounted over with an empty tmpfs, so only the kit tree imports."""
    import importlib.util
    spec = importlib.util.find_spec("grader")
    found = list(spec.submodule_search_locations or []) if spec else []
    roots = [r for r in _readable_roots() if r != kits()]
    return [p for p in found if any(os.path.commonpath([p, r]) == r for r in roots)]


def bwrap_prefix(share_net: bool = False, cwd: str | None = None,
                 tmpfs_mb: int = Limits.tmpfs_mb, writable_cwd: bool = True,
                 seccomp_fd: int | None = None, keep_caps: tuple[str, ...] = ()) -> list[str]:
    """bubblewrap options: read-only system and Python, ``cwd`` bound (writable unless told
    otherwise), and a private /tmp and /dev/shm of ``tmpfs_mb`` MiB each (``--dev``'s own
    /dev/shm is a folder of an unbounded tmpfs, so /dev is remounted read-only once /dev/shm is
    mounted over it). Run by root, bubblewrap leaves root's capabilities in the box (enough to
    remount a read-only bind read-write): all are dropped but ``keep_caps``. ``seccomp_fd``
    holds the filter of `seccomp` the box's command starts under."""
    size = ["--size", str(tmpfs_mb * 2 ** 20)]
    cmd = ["bwrap", "--unshare-all", "--die-with-parent", "--new-session",
           "--proc", "/proc", "--dev", "/dev", *size, "--tmpfs", "/dev/shm",
           "--remount-ro", "/dev", *size, "--tmpfs", "/tmp"]
    cmd += ["--share-net"] if share_net else []
    for sysdir in ("/usr", "/lib", "/lib64", "/bin", "/etc/alternatives", "/etc/ld.so.cache"):
        if os.path.exists(sysdir):
            cmd += ["--ro-bind", sysdir, sysdir]
    for root in _readable_roots():
        cmd += ["--ro-bind", root, root]
    for hidden in hidden_copies():
        cmd += ["--tmpfs", hidden]
    if cwd:
        cmd += ["--bind" if writable_cwd else "--ro-bind", cwd, cwd]
    if os.geteuid() == 0:
        cmd += ["--cap-drop", "ALL"] + [x for cap in keep_caps for x in ("--cap-add", cap)]
    if seccomp_fd is not None:
        cmd += ["--seccomp", str(seccomp_fd)]
    return cmd + ["--chdir", cwd or "/tmp"]


def sealed(box: list[str]) -> list[str]:
    """``box`` with bubblewrap's own root (a tmpfs, unbounded by ``tmpfs_mb``) read-only: the
    last of its options, once every bind has made its mount point."""
    return box + ["--remount-ro", "/"]


@functools.lru_cache(maxsize=1)
def available() -> bool:
    """Whether bubblewrap runs here (probed once per process: every kernel and child asked)."""
    if shutil.which("bwrap") is None:
        return False
    probe = subprocess.run(bwrap_prefix() + ["true"], capture_output=True)
    return probe.returncode == 0


@functools.lru_cache(maxsize=1)
def cgroups() -> bool:
    """Whether boxes get a cgroup here (probed once per process)."""
    return cgroup.available()


def mechanism() -> str:
    """Which limits hold on this machine, in words (logged by autograde)."""
    if cgroups():
        return f"cgroup {cgroup.layout()} (memory, tasks and CPU per box, all its processes)"
    return ("rlimits per process (RLIMIT_AS, RLIMIT_CPU, RLIMIT_FSIZE, RLIMIT_NPROC) and a "
            "count of each box's process tree; no cgroup can be made here")


def _launched(cmd: list[str], spec: dict) -> list[str]:
    # Run as a file, isolated (-I: no PYTHON* variables, no script folder on the path), so it
    # finds nothing of the course whatever the current folder and the child's PYTHONPATH.
    return [sys.executable, "-I", "-S", confine.__file__, json.dumps(spec)] + cmd


def command(argv: list[str], use_bwrap: bool, cache: CompileCache | None = None,
            tmpfs_mb: int = Limits.tmpfs_mb, seccomp_fd: int | None = None) -> list[str]:
    box = sealed(bwrap_prefix(tmpfs_mb=tmpfs_mb, seccomp_fd=seccomp_fd) +
                 (cache.bwrap_args() if cache else [])) if use_bwrap else []
    return box + list(argv)


def child_env(cache: CompileCache | None = None) -> dict:
    keep = {k: os.environ[k] for k in ("PATH", "LANG", "LC_ALL") if k in os.environ}
    return dict(keep, JAX_PLATFORMS="cpu", PYTHONPATH=kits(), HOME="/tmp",
                PYTHONDONTWRITEBYTECODE="1", XLA_FLAGS="--xla_force_host_platform_device_count=1",
                **(cache.env() if cache else {}))


def run(module: str, stdin: str, limits: Limits = Limits(), use_bwrap: bool | None = None,
        cache: CompileCache | None = None, budget: Budget | None = None,
        talk=None) -> Outcome:
    """Run ``python -m module`` in a box of its own with ``stdin`` (then, with a ``talk``, the
    conversation it holds, see ``watch.Follow``); never raises for the child's faults. The
    judge's child forked from a zygote where one works: `forked.judge_child`."""
    return run_argv([sys.executable, "-m", module], stdin, limits, use_bwrap, cache, budget,
                    talk)


def run_argv(argv: list[str], stdin: str, limits: Limits = Limits(),
             use_bwrap: bool | None = None, cache: CompileCache | None = None,
             budget: Budget | None = None, talk=None) -> Outcome:
    """Run ``argv`` in the box, as `run` does (its answer pipe is ``$INSIDE_VMAP_ANSWER_FD``)."""
    if use_bwrap is None:
        use_bwrap = available()
    if not use_bwrap:
        warnings.warn("bubblewrap is unavailable: judge children run WITHOUT filesystem or network "
                      "isolation (install Debian's bubblewrap)", SandboxUnavailable, stacklevel=2)

    def launch(group, spec):
        answer_r, answer_w = os.pipe()
        filt = seccomp.memfd() if use_bwrap else None
        try:
            proc = subprocess.Popen(
                _launched(command(argv, use_bwrap, cache, limits.tmpfs_mb, filt), spec),
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                pass_fds=(answer_w,) + ((filt,) if filt is not None else ()),
                env=dict(child_env(cache), **{ANSWER_FD: str(answer_w)}),
                start_new_session=True, cwd=None if use_bwrap else tempfile.gettempdir())
        except BaseException:
            os.close(answer_r)
            raise
        finally:
            os.close(answer_w)
            if filt is not None:
                os.close(filt)
        return proc, answer_r

    return follow(launch, stdin.encode(), limits, budget, use_bwrap, talk)


def follow(launch, stdin: bytes, limits: Limits, budget: Budget | None,
           boxed: bool = True, talk=None) -> Outcome:
    """Start a child with ``launch(group, confinement)`` -> ``(process, answer fd)``, feed it
    ``stdin`` (and hold ``talk``'s conversation) and follow it to its end within ``limits`` and
    ``budget``, in its own cgroup where there are cgroups. (``launch`` may raise; the group is
    removed all the same.)"""
    wanted = limits
    if budget is not None:
        if budget.left() <= 0:
            return Outcome("", End.TIMED_OUT, budget.spent())
        limits = budget.cap(limits)
    group = cgroup.Group.create(limits.memory_mb, limits.tasks) if cgroups() else None
    spec = confinement(limits.cpu_s, limits.memory_mb, limits.tasks, limits.tmpfs_mb, group,
                       boxed)
    proc = None
    try:
        proc, answer_r = launch(group, spec)
        if budget is not None:
            budget.running(lambda: _stop(proc, group))
        ended = watch.Follow(proc, stdin, answer_r, limits, group, talk).run()
    finally:
        if budget is not None:
            budget.running(None)
        if proc is not None and hasattr(proc, "release"):
            proc.release()
        if group is not None and not group.remove():
            warnings.warn(f"could not remove the judge's cgroup {group.dirs}", stacklevel=2)
    if budget is not None and budget.cancelled:
        return Outcome(ended.answer, End.CANCELLED, "cancelled: the submission failed meanwhile")
    if limits.wall_s < wanted.wall_s and ended.kind is End.TIMED_OUT:
        return Outcome(ended.answer, End.TIMED_OUT, budget.spent())  # the budget's time, not its own
    return ended


def _stop(proc, group) -> None:
    """Kill a box from another thread (its `watch.Follow` then finds it dead); never a pid
    already reaped, which could have been reused."""
    if proc.poll() is None:
        watch.kill_tree(proc.pid)
    if group is not None:
        group.kill()
