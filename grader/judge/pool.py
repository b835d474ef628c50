"""The zygotes of this process, on the trusted side: each a process in a box like its children's
that has imported JAX (``box/zygote.py``), which `forked` asks for a judge child or a grading
kernel. This module starts them (`Zygote`), follows their children (`Child`), keeps the idle
ones (`take`, `give_back`) and remembers, per role, why none starts here (`broken`).

One zygote serves one thread of one grading process at a time, for one role and one box (a
compile cache and a tmpfs size; a kernel's environment and the folders its box binds); a second
thread asking meanwhile gets a zygote of its own. A zygote that cannot start here (no nested user
namespaces, no bubblewrap) is not tried again for its role by this process: `take` answers
``None`` and the caller starts the child in a box of its own, as without a zygote. A zygote that
dies is replaced on the next request; the child it was serving is reported killed.
"""
from __future__ import annotations

import atexit
import json
import select
import socket
import subprocess
import sys
import threading
import time
import warnings

from . import sandbox, watch
from .box import rebox, zygote

START_S = 120.0            # for the zygote to import JAX and the kits, on a loaded machine
REPLY_S = 10.0             # for it to answer a fork


class ZygoteFailed(RuntimeError):
    """The zygote could not start, or stopped answering."""


def zygote_box(tmpfs_mb: int, binds: list[str]) -> list[str]:
    """A zygote's box with nothing writable left in it but ``binds``' writable folders (which
    each kernel covers but for its own, ``rebox.keep_only``), since every child of the
    zygote shares it: its root (bubblewrap's tmpfs), /tmp, /dev/shm and the tmpfs over a hidden
    copy of the course read-only (each child gets a fresh /tmp and /dev/shm), and an empty
    folder to build them in."""
    ro = ["/tmp", "/dev/shm", *sandbox.hidden_copies()]
    # Run by root, its children map uid 0 into their user namespaces: that takes CAP_SETFCAP.
    # They drop it with every other capability (and take the seccomp filter) before any cell.
    box = sandbox.bwrap_prefix(tmpfs_mb=tmpfs_mb, keep_caps=("CAP_SETFCAP",))
    return box + binds + sandbox.sealed(["--dir", rebox.STAGE] +
                                        [x for path in ro for x in ("--remount-ro", path)])


def _host_pid(root: int, box_pid: int) -> int | None:
    """The pid, as this process sees it, of the descendant of ``root`` that is ``box_pid`` in
    the zygote's pid namespace."""
    for pid in watch.tree(root):
        try:
            with open(f"/proc/{pid}/status") as fh:
                line = next(x for x in fh if x.startswith("NSpid:"))
        except (OSError, StopIteration):
            continue
        if line.split()[-1] == str(box_pid) and len(line.split()) == 3:
            return pid
    return None


def running(pid: int) -> bool:
    """Whether ``pid`` is a process that is neither a zombie nor stopped."""
    return watch.state(pid) not in (None, "Z", "X", "T", "t")


class Zygote:
    def __init__(self, role: str, box: list[str], env: dict):
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        # OpenBLAS starts its threads as numpy loads: one thread, or the zygote cannot fork.
        env = dict(env, OPENBLAS_NUM_THREADS="1")
        argv = box + [sys.executable, "-m", "grader.judge.box.zygote", str(theirs.fileno()), role]
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
        """Started and not ended, nor stopped (by a child that signalled it: it goes)."""
        return self.proc.poll() is None and running(self.proc.pid)

    def close(self) -> None:
        self.sock.close()
        if self.proc.poll() is None:
            watch.kill_tree(self.proc.pid)
        self.proc.wait()

    def fork(self, fds: list[int], spec: dict) -> Child:
        try:
            socket.send_fds(self.sock, [json.dumps(dict(spec, op="fork")).encode()], fds)
        except OSError as err:
            raise ZygoteFailed(f"the zygote is gone ({err})") from err
        reply = self._reply(REPLY_S)
        while "exited" in reply:          # of the child before, read here first: never acted on
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
_BROKEN: dict[str, str] = {}          # role: why its zygote does not start here (the first time)


def broken(role: str = "judge") -> str | None:
    """Why ``role``'s zygotes do not work here (the first failure), or ``None``."""
    return _BROKEN.get(role)


def fail(role: str, reason: str) -> str:
    """Remember that ``role``'s zygotes do not work here, and why (the first reason stays)."""
    return _BROKEN.setdefault(role, reason)


def take(key: tuple, make) -> Zygote | None:
    """An idle zygote for ``key`` (its role first), else a new one from ``make()``."""
    role = key[0]
    with _LOCK:
        # Another key of the same role is another run's box (a Dask worker grades run after
        # run): its zygotes would only hold memory.
        stale = [z for k in list(_IDLE) if k != key and k[0] == role for z in _IDLE.pop(k)]
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
    if role in _BROKEN:
        return None
    try:
        return make()
    except (ZygoteFailed, OSError) as err:
        fail(role, str(err))
        what = "judge children" if role == "judge" else "grading kernels"
        warnings.warn(f"{what} start in boxes of their own: no zygote here ({err})",
                      stacklevel=3)
        return None


def give_back(key, z: Zygote) -> None:
    if not z.alive():
        z.close()
        return
    with _LOCK:
        _IDLE.setdefault(key, []).append(z)


@atexit.register
def close_all() -> None:
    """At exit: close every idle zygote of this process (a test asks it sooner)."""
    with _LOCK:
        found = [z for zs in _IDLE.values() for z in zs]
        _IDLE.clear()
    for z in found:
        z.close()


def enter(child: Child, procs_files, role: str) -> None:
    """Move ``child`` into its cgroup before it reads its first byte (the "G"); where that is
    refused, it never starts, and a box of its own will try."""
    try:
        for procs in procs_files:
            with open(procs, "w") as fh:
                fh.write(str(child.pid))
    except OSError as err:
        if child.stdin is not None:
            child.stdin.close()
        Child.wait(child)                 # (a kernel's zygote is not given back: it is closed)
        Child.release(child)
        raise ZygoteFailed(fail(role, f"cannot move a forked child into its cgroup: {err}")) \
            from err
