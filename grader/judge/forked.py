"""Judge children forked from a zygote (``zygote.py``): the same box, limits and answer, without
paying ``import jax`` for every child.

One zygote serves one thread of one grading process at a time, for one compile cache and one
tmpfs size; a second thread asking meanwhile gets a zygote of its own. A zygote that cannot start
here (no nested user namespaces, no bubblewrap) is not tried again by this process: `run` answers
``None`` and the caller starts the child in a box of its own, as without a zygote. A zygote that
dies is replaced on the next request; the child it was serving is reported killed.
"""
from __future__ import annotations

import atexit
import json
import os
import select
import socket
import subprocess
import sys
import threading
import time
import warnings

from . import sandbox, watch, zygote

START_S = 120.0            # for the zygote to import JAX and the kits, on a loaded machine
REPLY_S = 10.0             # for it to answer a fork


class ZygoteFailed(RuntimeError):
    """The zygote could not start, or stopped answering."""


def _box(cache: sandbox.CompileCache | None, tmpfs_mb: int) -> list[str]:
    """The judge child's box with nothing writable left in it, since every child of the zygote
    shares it: its root (bubblewrap's tmpfs), /tmp, /dev/shm and the tmpfs over a hidden copy
    of the course read-only (each child gets a fresh /tmp and /dev/shm), and an empty folder
    to build them in."""
    ro = ["/tmp", "/dev/shm", *sandbox._hidden_copies()]
    # Run by root, its children map uid 0 into their user namespaces: that takes CAP_SETFCAP.
    # They drop it with every other capability (and take the seccomp filter) before any cell.
    box = sandbox.bwrap_prefix(tmpfs_mb=tmpfs_mb, keep_caps=("CAP_SETFCAP",))
    return (box + (cache.bwrap_args() if cache else []) +
            sandbox.sealed(["--dir", zygote.STAGE] +
                           [x for path in ro for x in ("--remount-ro", path)]))


def _host_pid(root: int, box_pid: int) -> int | None:
    """The pid, as this process sees it, of the descendant of ``root`` that is ``box_pid`` in
    the zygote's pid namespace."""
    for pid in watch._tree(root):
        try:
            with open(f"/proc/{pid}/status") as fh:
                line = next(x for x in fh if x.startswith("NSpid:"))
        except (OSError, StopIteration):
            continue
        if line.split()[-1] == str(box_pid) and len(line.split()) == 3:
            return pid
    return None


class Zygote:
    def __init__(self, cache: sandbox.CompileCache | None, tmpfs_mb: int):
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        env = dict(sandbox.child_env(cache), OPENBLAS_NUM_THREADS="1")
        argv = _box(cache, tmpfs_mb) + [sys.executable, "-m", "grader.judge.zygote",
                                        str(theirs.fileno())]
        try:
            self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                         pass_fds=(theirs.fileno(),), env=env,
                                         start_new_session=True)
        finally:
            theirs.close()
        self.sock = ours
        ready = self._reply(START_S)
        if zygote.READY not in ready:
            self.close()
            raise ZygoteFailed(ready.get("error", f"no answer in {START_S:.0f} s"))

    def _reply(self, timeout: float) -> dict:
        """The zygote's next message; ``{}`` if none came within ``timeout`` seconds (or another
        thread took it: the budget's canceller polls the same child)."""
        if not select.select([self.sock], [], [], timeout)[0]:
            return {}
        try:
            data = self.sock.recv(4096, socket.MSG_DONTWAIT)
        except BlockingIOError:
            return {}
        except OSError as err:
            return {"error": str(err)}
        return json.loads(data) if data else {"error": "the zygote exited"}

    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self) -> None:
        self.sock.close()
        if self.proc.poll() is None:
            watch.kill_tree(self.proc.pid)
        self.proc.wait()

    def fork(self, fds: list[int], spec: dict) -> "Child":
        try:
            socket.send_fds(self.sock, [json.dumps(dict(spec, op="fork")).encode()], fds)
        except OSError as err:
            raise ZygoteFailed(f"the zygote is gone ({err})") from err
        reply = self._reply(REPLY_S)
        if "forked" not in reply:
            raise ZygoteFailed(reply.get("error", f"no answer to a fork in {REPLY_S:.0f} s"))
        pid = _host_pid(self.proc.pid, reply["forked"])
        if pid is None:
            raise ZygoteFailed("the forked child is not to be found")
        return Child(self, pid)


class Child:
    """What `watch.Follow` follows in place of a ``Popen``: a forked child, by the pid this
    process sees, alive until the zygote says it ended (and unreaped until `release`)."""

    def __init__(self, owner: Zygote, pid: int):
        self.owner, self.pid, self.returncode = owner, pid, None
        self.stdin = self.stdout = self.stderr = None

    def poll(self):
        if self.returncode is None:
            self._read(0.0)
        return self.returncode

    def wait(self, timeout: float = 30.0):
        deadline = time.monotonic() + timeout
        while self.returncode is None and time.monotonic() < deadline:
            self._read(min(0.5, deadline - time.monotonic()))
        if self.returncode is None:       # the zygote is stuck: it goes, and the child with it
            self.owner.close()
            self.returncode = -9
        return self.returncode

    def _read(self, timeout: float) -> None:
        if not self.owner.alive():
            self.returncode = -9
            return
        reply = self.owner._reply(timeout)
        if "exited" in reply:
            self.returncode = reply["exited"]
        elif "error" in reply:
            self.returncode = -9

    def release(self) -> None:
        """Let the zygote reap the child (its pid may be reused from now on)."""
        if self.owner.alive():
            try:
                self.owner.sock.send(b'{"op": "reap"}')
            except OSError:
                pass


# ---- the zygotes of this process --------------------------------------------------------------
_LOCK = threading.Lock()
_IDLE: dict[tuple, list[Zygote]] = {}
_BROKEN: list[str] = []


def broken() -> str | None:
    """Why zygotes do not work here (the first failure), or ``None``."""
    return _BROKEN[0] if _BROKEN else None


def _take(key) -> Zygote | None:
    with _LOCK:
        # Another key is another run's cache (a Dask worker grades run after run): its zygotes
        # would only hold memory.
        stale = [z for k in list(_IDLE) if k != key for z in _IDLE.pop(k)]
        found = None
        while _IDLE.get(key):
            z = _IDLE[key].pop()
            if z.alive():
                found = z
                break
            stale.append(z)
    for z in stale:
        z.close()
    if found is not None:
        return found
    if _BROKEN:
        return None
    try:
        return Zygote(*key)
    except (ZygoteFailed, OSError) as err:
        _BROKEN.append(str(err))
        warnings.warn(f"judge children start in boxes of their own: no zygote here ({err})",
                      stacklevel=3)
        return None


def _give_back(key, z: Zygote) -> None:
    if not z.alive():
        z.close()
        return
    with _LOCK:
        _IDLE.setdefault(key, []).append(z)


@atexit.register
def close_all() -> None:
    with _LOCK:
        found = [z for zs in _IDLE.values() for z in zs]
        _IDLE.clear()
    for z in found:
        z.close()


def run(stdin: str, limits: sandbox.Limits, cache: sandbox.CompileCache | None,
        budget: sandbox.Budget | None) -> sandbox.Outcome | None:
    """A judge child forked from this process's zygote, or ``None`` where there is none."""
    if cache is not None and cache.writable:     # the warm-up's writer: a box of its own
        return None
    key = (cache, limits.tmpfs_mb)
    for attempt in range(2):      # a zygote found dead or broken: once more, in a fresh one
        z = _take(key)
        if z is None:
            return None
        try:
            outcome = sandbox.follow(_launcher(z, limits), b"G" + stdin.encode(), limits, budget)
        except ZygoteFailed:
            z.close()
            continue
        except BaseException:
            _give_back(key, z)
            raise
        # The child's set-up failed, before any cell ran: whatever broke it is the zygote's (or
        # an answer exiting with the same status, which then costs only itself a second start).
        if attempt == 0 and (outcome.failure or "").startswith(
                f"exited with status {zygote.SETUP_FAILED}"):
            z.close()
            continue
        _give_back(key, z)
        return outcome
    return None


def _launcher(z: Zygote, limits: sandbox.Limits):
    def launch(group, spec):
        pipes = [os.pipe() for _ in range(4)]     # stdin, stdout, stderr, answer
        theirs = [pipes[0][0], pipes[1][1], pipes[2][1], pipes[3][1]]
        try:
            child = z.fork(theirs, {"rlimits": spec["rlimits"], "tmpfs_mb": limits.tmpfs_mb})
        except BaseException:
            for fd in (pipes[0][1], pipes[1][0], pipes[2][0], pipes[3][0]):
                os.close(fd)
            raise
        finally:
            for fd in theirs:
                os.close(fd)
        child.stdin = os.fdopen(pipes[0][1], "wb", buffering=0)
        child.stdout = os.fdopen(pipes[1][0], "rb", buffering=0)
        child.stderr = os.fdopen(pipes[2][0], "rb", buffering=0)
        if group is not None:             # before the child reads its first byte: the "G"
            try:
                for procs in group.procs_files():
                    with open(procs, "w") as fh:
                        fh.write(str(child.pid))
            except OSError as err:        # it never starts (no "G"); a box of its own will try
                child.stdin.close()
                child.wait()
                child.release()
                _BROKEN.append(f"cannot move a forked child into its cgroup: {err}")
                raise ZygoteFailed(_BROKEN[-1]) from err
        return child, pipes[3][0]
    return launch
