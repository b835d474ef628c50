"""Judge children and grading kernels forked from a zygote (``zygote.py``): the same box, limits
and answer, without paying ``import jax`` for every child.

One zygote serves one thread of one grading process at a time, for one role and one box (a
compile cache and a tmpfs size; a kernel's environment and the folders its box binds); a second
thread asking meanwhile gets a zygote of its own. A zygote that cannot start here (no nested user
namespaces, no bubblewrap) is not tried again for its role by this process: `run` and `kernel`
answer ``None`` and the caller starts the child in a box of its own, as without a zygote. A
zygote that dies is replaced on the next request; the child it was serving is reported killed.
"""
from __future__ import annotations

import atexit
import json
import os
import pathlib
import select
import signal
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


def _box(tmpfs_mb: int, binds: list[str]) -> list[str]:
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
        return self.proc.poll() is None and _running(self.proc.pid)

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


def _take(key: tuple, make) -> Zygote | None:
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
        _BROKEN.setdefault(role, str(err))
        what = "judge children" if role == "judge" else "grading kernels"
        warnings.warn(f"{what} start in boxes of their own: no zygote here ({err})",
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
    """At exit: close every idle zygote of this process (a test asks it sooner)."""
    with _LOCK:
        found = [z for zs in _IDLE.values() for z in zs]
        _IDLE.clear()
    for z in found:
        z.close()


def judge_child(stdin: str, limits: sandbox.Limits, use_bwrap: bool | None = None,
                cache: sandbox.CompileCache | None = None, budget: sandbox.Budget | None = None,
                forked: bool = True, talk=None) -> sandbox.Outcome:
    """The judge's child (``grader.judge.box.child``) on ``stdin``: forked from a zygote where
    one works, unless ``forked`` is false, else started in a box of its own
    (`sandbox.run`); the box and the limits are the same either way."""
    if use_bwrap is None:
        use_bwrap = sandbox.available()
    if forked and use_bwrap:
        outcome = run(stdin, limits, cache, budget, talk)
        if outcome is not None:
            return outcome
    return sandbox.run("grader.judge.box.child", stdin, limits, use_bwrap, cache, budget, talk)


def run(stdin: str, limits: sandbox.Limits, cache: sandbox.CompileCache | None,
        budget: sandbox.Budget | None, talk=None) -> sandbox.Outcome | None:
    """A judge child forked from this process's zygote, or ``None`` where there is none."""
    if cache is not None and cache.writable:     # the warm-up's writer: a box of its own
        return None
    key = ("judge", cache, limits.tmpfs_mb)
    make = lambda: Zygote("judge", _box(limits.tmpfs_mb, cache.bwrap_args() if cache else []),
                          sandbox.child_env(cache))
    for attempt in range(2):      # a zygote found dead or broken: once more, in a fresh one
        z = _take(key, make)
        if z is None:
            return None
        try:
            outcome = sandbox.follow(_launcher(z, limits), b"G" + stdin.encode(), limits, budget,
                                     talk=talk)
        except ZygoteFailed:
            z.close()
            if talk is not None:
                talk.reset()
            continue
        except BaseException:
            _give_back(key, z)
            raise
        # The child's set-up failed, before any cell ran: whatever broke it is the zygote's (or
        # an answer exiting with the same status, which then costs only itself a second start).
        if attempt == 0 and outcome.kind is sandbox.End.EXITED and \
                outcome.status == zygote.SETUP_FAILED:
            z.close()
            if talk is not None:
                talk.reset()
            continue
        _give_back(key, z)
        return outcome
    return None


def _enter(child: Child, procs_files, role: str) -> None:
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
        _BROKEN.setdefault(role, f"cannot move a forked child into its cgroup: {err}")
        raise ZygoteFailed(_BROKEN[role]) from err


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
        if group is not None:
            _enter(child, group.procs_files(), "judge")
        return child, pipes[3][0]
    return launch


# ---- grading kernels ---------------------------------------------------------------------------
KERNEL_READY_S = 60.0      # for a forked kernel to box itself, on a loaded machine


class Kernel(Child):
    """A forked grading kernel, as jupyter_client's provisioner handles a ``Popen``, by the pid
    this process sees. It stays in its zygote's pid namespace (``zygote._child``); its cgroup,
    which the trusted side moved it into, holds everything it starts."""

    def __init__(self, owner: Zygote, pid: int, key: tuple):
        super().__init__(owner, pid)
        self.key, self._released = key, False

    def poll(self):
        code = super().poll()
        if code is None and not _running(self.pid):   # ended: its zygote is about to say so
            self._read(REPLY_S)
            if self.returncode is None:               # or it cannot (stopped): it goes
                self.owner.close()
                self.returncode = -9
            code = self.returncode
        return code

    def send_signal(self, signum: int) -> None:
        if self.poll() is not None:
            return
        if signum == signal.SIGKILL:
            watch.kill_tree(self.pid)
        else:
            os.kill(self.pid, signum)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def wait(self, timeout: float | None = None):
        code = super().wait(timeout if timeout is not None else 3600.0)
        self.release()
        return code

    def release(self) -> None:
        """Reap it, and put its zygote back for the next kernel (once)."""
        if not self._released and self.returncode is not None:
            self._released = True
            super().release()
            _give_back(self.key, self.owner)


def _running(pid: int) -> bool:
    """Whether ``pid`` is a process that is neither a zombie nor stopped."""
    return watch.state(pid) not in (None, "Z", "X", "T", "t")


def _above(path: str, levels: int) -> str | None:
    """``path``'s ancestor ``levels`` up, unless that is too near the top of the file system to
    bind into a box (``/``, ``/tmp``, ``/home``)."""
    for _ in range(levels):
        path = os.path.dirname(path)
    return path if len(pathlib.PurePath(path).parts) >= 3 else None


def kernel(connection: dict, cwd: str, extra: list[str], env: dict, tmpfs_mb: int,
           confine: dict) -> Kernel | None:
    """A grading kernel forked from this process's kernel zygote, boxed and ready to connect
    to; ``None`` where there is none (the caller starts one in a box of its own).

    The zygote's box binds, read-only, the folder above every submission's folder (``cwd``'s
    grandparent: nbgrader's ``autograded/``), and, writable, the folder of every kernel's socket
    folder; each kernel keeps only its own of both (``rebox.keep_only``)."""
    if connection.get("transport") != "ipc":      # over TCP the box keeps the network: its own
        return None
    if not confine.get("cgroup"):    # only a cgroup ends all it starts (it has no pid namespace)
        return None
    cwd = os.path.abspath(cwd)
    sockets = os.path.dirname(os.path.abspath(connection["ip"]))
    roots = (_above(cwd, 2), _above(sockets, 1))
    if None in roots:
        return None
    keep = [[roots[0], cwd, False], [roots[1], sockets, True]]
    binds = sorted({(roots[0], False), (roots[1], True)}, key=lambda b: len(b[0]))
    args = [x for root, rw in binds for x in ("--bind" if rw else "--ro-bind", root, root)]
    key = ("kernel", tmpfs_mb, tuple(binds), tuple(sorted(env.items())))
    make = lambda: Zygote("kernel", _box(tmpfs_mb, args), env)
    spec = {"rlimits": confine.get("rlimits", {}), "tmpfs_mb": tmpfs_mb}
    # To the kernel's stdin, not through its zygote, whose memory every later kernel starts as.
    private = {"keep": keep, "cwd": cwd, "extra": list(extra), "connection": connection}
    for _attempt in range(2):     # a zygote found dead or broken: once more, in a fresh one
        z = _take(key, make)
        if z is None:
            return None
        try:
            return _start_kernel(z, key, spec, private, confine.get("cgroup", ()))
        except ZygoteFailed as err:
            z.close()
            reason = str(err)
    _BROKEN.setdefault("kernel", reason)
    return None


def _start_kernel(z: Zygote, key: tuple, spec: dict, private: dict, procs_files) -> Kernel:
    stdin, ready = os.pipe(), os.pipe()
    # Not this process's own stdout and stderr (its log, whose flags a kernel could change).
    theirs = [stdin[0], os.open(os.devnull, os.O_WRONLY), os.open(os.devnull, os.O_WRONLY),
              ready[1]]
    try:
        child = z.fork(theirs, spec)
    except BaseException:
        os.close(stdin[1])
        os.close(ready[0])
        raise
    finally:
        for fd in theirs:
            os.close(fd)
    proc = Kernel(z, child.pid, key)
    proc.stdin = os.fdopen(stdin[1], "wb", buffering=0)
    try:
        _enter(proc, procs_files, "kernel")
        proc.stdin.write(b"G" + json.dumps(private).encode() + b"\n")
        boxed = select.select([ready[0]], [], [], KERNEL_READY_S)[0] and \
            os.read(ready[0], 1) == b"R"
    except OSError:
        boxed = False
    finally:
        os.close(ready[0])
    if not boxed:                 # its set-up failed: nothing of the student's has run yet
        watch.kill_tree(proc.pid)
        Child.wait(proc, REPLY_S)
        Child.release(proc)
        raise ZygoteFailed("a forked kernel did not box itself (its set-up failed)")
    return proc
