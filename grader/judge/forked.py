"""Judge children and grading kernels forked from a zygote (``box/zygote.py``, kept by `pool`):
the same box, limits and answer, without paying ``import jax`` for every child.

`judge_child` and `kernel` each build what their child is given (its pipes, its limits, what
goes to its stdin rather than through the zygote) and fall back to a box of their own, or answer
``None`` for the caller to, where the pool has no zygote for them.
"""
from __future__ import annotations

import json
import os
import pathlib
import select
import signal

from . import pool, sandbox, watch
from .box import zygote


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
    binds = cache.bwrap_args() if cache else []
    make = lambda: pool.Zygote("judge", pool.zygote_box(limits.tmpfs_mb, binds),
                               sandbox.child_env(cache))
    for attempt in range(2):      # a zygote found dead or broken: once more, in a fresh one
        z = pool.take(key, make)
        if z is None:
            return None
        try:
            outcome = sandbox.follow(_launcher(z, limits), b"G" + stdin.encode(), limits, budget,
                                     talk=talk)
        except pool.ZygoteFailed:
            z.close()
            if talk is not None:
                talk.reset()
            continue
        except BaseException:
            pool.give_back(key, z)
            raise
        # The child's set-up failed, before any cell ran: whatever broke it is the zygote's (or
        # an answer exiting with the same status, which then costs only itself a second start).
        if attempt == 0 and outcome.kind is sandbox.End.EXITED and \
                outcome.status == zygote.SETUP_FAILED:
            z.close()
            if talk is not None:
                talk.reset()
            continue
        pool.give_back(key, z)
        return outcome
    return None


def _launcher(z: pool.Zygote, limits: sandbox.Limits):
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
            pool.enter(child, group.procs_files(), "judge")
        return child, pipes[3][0]
    return launch


# ---- grading kernels ---------------------------------------------------------------------------
KERNEL_READY_S = 60.0      # for a forked kernel to box itself, on a loaded machine


class Kernel(pool.Child):
    """A forked grading kernel, as jupyter_client's provisioner handles a ``Popen``, by the pid
    this process sees. It stays in its zygote's pid namespace (``zygote._child``); its cgroup,
    which the trusted side moved it into, holds everything it starts."""

    def __init__(self, owner: pool.Zygote, pid: int, key: tuple):
        super().__init__(owner, pid)
        self.key, self._released = key, False

    def poll(self):
        code = super().poll()
        if code is None and not pool.running(self.pid):  # ended: its zygote is about to say so
            self._read(pool.REPLY_S)
            if self.returncode is None:                   # or it cannot (stopped): it goes
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
            pool.give_back(self.key, self.owner)


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
    make = lambda: pool.Zygote("kernel", pool.zygote_box(tmpfs_mb, args), env)
    spec = {"rlimits": confine.get("rlimits", {}), "tmpfs_mb": tmpfs_mb}
    # To the kernel's stdin, not through its zygote, whose memory every later kernel starts as.
    private = {"keep": keep, "cwd": cwd, "extra": list(extra), "connection": connection}
    for _attempt in range(2):     # a zygote found dead or broken: once more, in a fresh one
        z = pool.take(key, make)
        if z is None:
            return None
        try:
            return _start_kernel(z, key, spec, private, confine.get("cgroup", ()))
        except pool.ZygoteFailed as err:
            z.close()
            reason = str(err)
    pool.fail("kernel", reason)
    return None


def _start_kernel(z: pool.Zygote, key: tuple, spec: dict, private: dict, procs_files) -> Kernel:
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
        pool.enter(proc, procs_files, "kernel")
        proc.stdin.write(b"G" + json.dumps(private).encode() + b"\n")
        boxed = select.select([ready[0]], [], [], KERNEL_READY_S)[0] and \
            os.read(ready[0], 1) == b"R"
    except OSError:
        boxed = False
    finally:
        os.close(ready[0])
    if not boxed:                 # its set-up failed: nothing of the student's has run yet
        watch.kill_tree(proc.pid)
        pool.Child.wait(proc, pool.REPLY_S)
        pool.Child.release(proc)
        raise pool.ZygoteFailed("a forked kernel did not box itself (its set-up failed)")
    return proc
