"""Runs in a box of its own: import JAX and the kits once, then fork one child per request.

A judge child, and a grading kernel, spend most of their start importing JAX. This process (the
zygote) pays that once per grading process and role (``argv[2]``: ``judge``, the default, or
``kernel``) and forks each child from the imported state, before any XLA backend exists (the
backend, its threads and its compilations belong to the child). Each child is then boxed again,
from the inside, before it reads a byte of student code (`rebox.py`: namespaces of its own, a
fresh /tmp, only its own folders, no capabilities; then `seccomp.py`'s filter and the rlimits the
trusted process sends, through `confine.py`), with its answer pipe as fd 3 and every other fd
closed.

The trusted side (``pool.py``) moves the child into its cgroup before it lets it go on: the
child waits for one byte on its stdin first. The zygote itself runs no student code, reads no
request (the request goes straight to the child's stdin) and cannot be traced by its children
(it is not dumpable). Protocol on the control socket (fd ``argv[1]``, SOCK_SEQPACKET): the
trusted side sends ``fork`` with the child's four fds; the zygote answers ``forked`` (the child's
pid in the box), then ``exited`` once it has ended (seen, not yet reaped, so the pid cannot be
reused while the trusted side may still signal it), and reaps it on ``reap``. A kernel's
connection (its HMAC key among it) also goes straight to its stdin, after the byte; it writes
``R`` on fd 3 once boxed, so a set-up that failed is seen before jupyter_client waits for it.
"""
from __future__ import annotations

import fcntl
import json
import os
import socket
import sys
import traceback

from . import confine, rebox, seccomp

READY = "ready"
SETUP_FAILED = 71                 # a forked child's exit status when its own set-up failed
ANSWER_FD = 3


def _exit_code(status: int) -> int:
    code = os.waitstatus_to_exitcode(status)
    return 128 - code if code < 0 else code          # killed by signal n: 128 + n, as a shell says


def _child(fds: list[int], spec: dict, role: str) -> None:
    """The forked child: never returns. First in the zygote's namespaces (waits for the trusted
    side, enters its own), then (as pid 1 of a new pid namespace, for a judge child) the judge
    child or the kernel."""
    fds = [fcntl.fcntl(fd, fcntl.F_DUPFD, 16) for fd in fds]   # clear of 0-3 before dup2
    for target, fd in enumerate(fds):                # stdin, stdout, stderr, answer
        os.dup2(fd, target)
    os.closerange(len(fds), os.sysconf("SC_OPEN_MAX"))   # the control socket among them
    if os.read(0, 1) != b"G":                        # in its cgroup now, or told to stop
        os._exit(70)
    if role == "kernel":     # what names the student (its folders, its connection): never the
        spec = dict(spec, **json.loads(_line(0)))     # zygote's to hold for the next kernel
    # A kernel keeps its zygote's pid namespace: the /proc mounted there is its own (ipykernel
    # reads its children from it), and its threads could not start in a new one. Its cgroup
    # (a kernel is forked only into one) holds all it starts, and is killed when it ends.
    judge = role == "judge"
    rebox.namespaces(pid=judge)
    rebox.keep_only(spec.get("keep", []))
    rebox.fresh_tmp(spec["tmpfs_mb"])
    pid = os.fork() if judge else 0
    if pid:      # stays behind to pass on the exit status, holding the pipes open till then
        os._exit(_exit_code(os.waitpid(pid, 0)[1]))  # (their end is the trusted side's "done")
    rebox.drop_privileges()
    seccomp.install()                                # no namespace or mount of its own from here
    confine.apply({"rlimits": spec.get("rlimits", {})})
    try:
        _ROLES[role](spec)
        code = 0
    except SystemExit as stop:                       # as the interpreter would have exited
        code = stop.code if isinstance(stop.code, int) else int(stop.code is not None)
        if not isinstance(stop.code, (int, type(None))):
            print(stop.code, file=sys.stderr)
    except BaseException:
        traceback.print_exc()
        code = 1
    sys.stderr.flush()
    os._exit(code)


def _judge(spec: dict) -> None:
    os.environ["INSIDE_VMAP_ANSWER_FD"] = str(ANSWER_FD)
    from . import child
    child.main()


def _line(fd: int) -> bytes:
    line = b""
    while not line.endswith(b"\n"):
        part = os.read(fd, 65536)
        if not part:
            raise EOFError("the trusted side sent no spec")
        line += part
    return line


def _kernel(spec: dict) -> None:
    """ipykernel, as ``python -m ipykernel_launcher -f CONNECTION`` would start it in the
    kernel's own box: in its folder (first on sys.path), with the connection from stdin."""
    path = "/tmp/inside-vmap-kernel.json"
    with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as fh:
        json.dump(spec["connection"], fh)
    os.setsid()                  # a process group of its own: kill(0) reaches no zygote
    # Readable by its owner, as a launched kernel is (the zygote is not): the trusted side
    # counts the files it holds open with no name (quota.unlinked).
    rebox.dumpable(True)
    os.chdir(spec["cwd"])
    sys.path[0] = spec["cwd"]
    os.environ.pop("OPENBLAS_NUM_THREADS", None)     # the zygote's, not the kernel's
    import numpy
    numpy.random.seed()                              # not the zygote's state, shared by all
    import ipykernel_launcher
    argv = ["-f", path, *spec.get("extra", [])]
    sys.argv = [ipykernel_launcher.__file__, *argv]
    os.write(ANSWER_FD, b"R")                        # boxed: from here on it is the kernel
    os.close(ANSWER_FD)
    from ipykernel import kernelapp
    kernelapp.launch_new_instance(argv=argv)


def _send(sock: socket.socket, **message) -> None:
    sock.send(json.dumps(message).encode())


def _preimport(role: str) -> None:
    """What every child imports anyway: JAX, the kits, the child's own modules or ipykernel's;
    no backend."""
    import importlib
    import pkgutil

    import jax  # noqa: F401
    import jax.numpy  # noqa: F401

    from ... import feedback, lessons  # noqa: F401
    if role == "judge":
        from . import child, tamper, tripwires  # noqa: F401
    else:
        import ipykernel.kernelapp  # noqa: F401
        import ipykernel_launcher  # noqa: F401
    for info in pkgutil.walk_packages(lessons.__path__, lessons.__name__ + "."):
        if ".kit" in info.name or info.name.count(".") == 2:
            importlib.import_module(info.name)
    from ...core import _jax
    if _jax.backend_started():
        raise RuntimeError("an XLA backend started while importing: forking it is unsafe")


_ROLES = {"judge": _judge, "kernel": _kernel}      # what a forked child runs, once boxed


def _inherited() -> tuple:
    """What a child inherits that another process of the same user could change in this one
    (a kernel shares this process's pid namespace, so it can name it): the rlimits, the nice
    value, the CPUs, the OOM score and what a core dump holds."""
    import resource
    found = [tuple(resource.getrlimit(getattr(resource, name)) for name in dir(resource)
                   if name.startswith("RLIMIT_")),
             os.getpriority(os.PRIO_PROCESS, 0), sorted(os.sched_getaffinity(0))]
    for name in ("oom_score_adj", "coredump_filter"):   # writable by the same user, if raised
        try:
            with open(f"/proc/self/{name}") as fh:
                found.append(fh.read())
        except OSError:
            found.append(None)
    return tuple(found)


def serve(sock: socket.socket, role: str) -> None:
    start = _inherited()
    while True:
        message, fds, _, _ = socket.recv_fds(sock, 4096, 4)
        if not message:
            return                                   # the trusted side went away
        request = json.loads(message)
        if request.get("op") != "fork" or len(fds) != 4:
            for fd in fds:
                os.close(fd)
            _send(sock, error=f"bad request {request.get('op')!r}")
            continue
        if _inherited() != start:    # changed by an earlier child: the next would inherit it
            _send(sock, error="this zygote's limits were changed since it started")
            os._exit(1)
        pid = os.fork()
        if pid == 0:
            try:
                _child(fds, request, role)
            except BaseException:
                traceback.print_exc()                # to the child's stderr once it is dup'ed
            os._exit(SETUP_FAILED)
        for fd in fds:
            os.close(fd)
        _send(sock, forked=pid)
        info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
        code = info.si_status if info.si_code == os.CLD_EXITED else 128 + info.si_status
        _send(sock, exited=code)
        while json.loads(sock.recv(4096) or b'{"op": "reap"}').get("op") != "reap":
            pass
        os.waitpid(pid, 0)
        _reap_strays()


def _reap_strays() -> None:
    """Reap any other child that has ended (none should exist: the filter refuses CLONE_PARENT;
    were one made, its cgroup was killed with the kernel's)."""
    try:
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass
    except ChildProcessError:
        pass


def main() -> None:
    sock = socket.socket(fileno=int(sys.argv[1]))
    role = sys.argv[2] if len(sys.argv) > 2 else "judge"
    try:
        rebox.dumpable(False)                        # no child may read or trace this process
        from . import child
        child._forget_editable_installs()
        if role not in _ROLES:
            raise ValueError(f"no zygote role {role!r}")
        _preimport(role)
        if len(os.listdir("/proc/self/task")) > 1:
            raise RuntimeError("threads started while importing: forking is unsafe")
    except BaseException as err:
        _send(sock, error=f"{type(err).__name__}: {err}"[:500])
        os._exit(1)
    _send(sock, **{READY: os.getpid()})
    serve(sock, role)
    os._exit(0)


if __name__ == "__main__":
    main()
