"""The box a judge child runs in: bubblewrap with no network and a read-only view of only what
Python needs, plus CPU, memory and wall-clock limits. Without bubblewrap it still applies the
limits, and says loudly that student code can read the disk."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import warnings
from dataclasses import dataclass

GRADER_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class SandboxUnavailable(UserWarning):
    """Raised as a warning when grading runs without bubblewrap."""


@dataclass(frozen=True)
class Limits:
    wall_s: float = 60.0
    cpu_s: int = 120
    memory_mb: int = 4096


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


@dataclass(frozen=True)
class Outcome:
    """How a child ended: its stdout, and why it failed if it did (``None`` when it exited 0)."""
    stdout: str
    failure: str | None


def _readable_roots() -> list[str]:
    """Only what the interpreter and its packages need; never the course, submissions or gradebook."""
    roots = {sys.prefix, sys.base_prefix, sysconfig.get_paths()["stdlib"],
             os.path.join(GRADER_ROOT, "grader")}
    return sorted(p for p in roots if os.path.exists(p))


def bwrap_prefix(share_net: bool = False, cwd: str | None = None) -> list[str]:
    """bubblewrap options: a private /tmp, read-only system and Python; ``cwd`` bound writable."""
    cmd = ["bwrap", "--unshare-all", "--die-with-parent", "--new-session",
           "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    cmd += ["--share-net"] if share_net else []
    for sysdir in ("/usr", "/lib", "/lib64", "/bin", "/etc/alternatives", "/etc/ld.so.cache"):
        if os.path.exists(sysdir):
            cmd += ["--ro-bind", sysdir, sysdir]
    for root in _readable_roots():
        cmd += ["--ro-bind", root, root]
    if cwd:
        cmd += ["--bind", cwd, cwd]
    return cmd + ["--chdir", cwd or "/tmp"]


def available() -> bool:
    if shutil.which("bwrap") is None:
        return False
    probe = subprocess.run(bwrap_prefix() + ["true"], capture_output=True)
    return probe.returncode == 0


# Limits are set by a tiny launcher that then execs the box, rather than by ``preexec_fn``: the
# parent runs JAX's threads, and forking a threaded process to run Python code can deadlock.
_LAUNCH = ("import os, resource, sys\n"
           "cpu, mem = int(sys.argv[1]), int(sys.argv[2])\n"
           "resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))\n"
           "resource.setrlimit(resource.RLIMIT_AS, (mem, mem))\n"
           "os.execvp(sys.argv[3], sys.argv[3:])\n")


def _limited(cmd: list[str], limits: Limits) -> list[str]:
    return [sys.executable, "-S", "-c", _LAUNCH, str(limits.cpu_s),
            str(limits.memory_mb * 2 ** 20)] + cmd


def command(module: str, use_bwrap: bool, cache: CompileCache | None = None) -> list[str]:
    box = bwrap_prefix() + (cache.bwrap_args() if cache else []) if use_bwrap else []
    return box + [sys.executable, "-m", module]


def child_env(cache: CompileCache | None = None) -> dict:
    keep = {k: os.environ[k] for k in ("PATH", "LANG", "LC_ALL") if k in os.environ}
    return dict(keep, JAX_PLATFORMS="cpu", PYTHONPATH=GRADER_ROOT, HOME="/tmp",
                PYTHONDONTWRITEBYTECODE="1", XLA_FLAGS="--xla_force_host_platform_device_count=1",
                **(cache.env() if cache else {}))


def run(module: str, stdin: str, limits: Limits = Limits(), use_bwrap: bool | None = None,
        cache: CompileCache | None = None) -> Outcome:
    """Run ``python -m module`` in the box with ``stdin``; never raises for the child's faults."""
    if use_bwrap is None:
        use_bwrap = available()
    if not use_bwrap:
        warnings.warn("bubblewrap is unavailable: judge children run WITHOUT filesystem or network "
                      "isolation (install Debian's bubblewrap)", SandboxUnavailable, stacklevel=2)
    try:
        proc = subprocess.run(_limited(command(module, use_bwrap, cache), limits), input=stdin,
                              capture_output=True, text=True, timeout=limits.wall_s,
                              env=child_env(cache), start_new_session=True,
                              cwd=None if use_bwrap else tempfile.gettempdir())
    except subprocess.TimeoutExpired:
        return Outcome("", f"timed out after {limits.wall_s:.0f} s")
    if proc.returncode != 0:
        return Outcome(proc.stdout, _died(proc.returncode, proc.stderr))
    return Outcome(proc.stdout, None)


def _died(code: int, stderr: str) -> str:
    if code < 0:
        return f"killed by signal {-code}"
    tail = stderr.strip().splitlines()[-1:] or [""]
    return f"exited with status {code}" + (f" ({tail[0][:200]})" if tail[0] else "")
