"""Runs in a box of its own: import JAX and the kits once, then fork one child per request.

A judge child, and a grading kernel, spend most of their start importing JAX. This process (the
zygote) pays that once per grading process and role (``argv[2]``: ``judge``, the default, or
``kernel``) and forks each child from the imported state, before any XLA backend exists (the
backend, its threads and its compilations belong to the child). Each child is then boxed again,
from the inside, before it reads a byte of student code:

* its own user, mount, pid, IPC, network and UTS namespaces, so a judge child is pid 1 of a pid
  namespace that dies with it (nothing it starts outlives it), and sees no earlier child's
  anything. A kernel keeps the zygote's pid namespace (ipykernel reads its own children from
  /proc, which is the zygote's; threads cannot start in a new one): it is forked only into a
  cgroup, which holds and then kills all it starts, and it can name its zygote, which checks
  before each fork that nothing it passes on (rlimits, nice, CPUs) was changed;
* a fresh, size-limited /tmp and /dev/shm (what the zygote's box bound under /tmp is bound into
  the new /tmp again, read-only as before); the zygote's own /tmp and /dev/shm are read-only, so
  nothing is left there for a later child to find even if one is uncovered;
* no capabilities (those the new user namespace gave it are dropped), no new privileges, and the
  system-call filter of every box (``seccomp.py``: no namespace or mount of its own);
* the rlimits the trusted process sends, its answer pipe as fd 3, every other fd closed;
* a kernel also sees, of the folders its zygote's box binds for every kernel (the submissions'
  and the sockets'), only its own (``keep``): the rest is covered by an empty read-only tmpfs.

The trusted side (``forked.py``) moves the child into its cgroup before it lets it go on: the
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

import ctypes
import fcntl
import json
import os
import socket
import sys
import traceback

from . import confine, seccomp

READY = "ready"
SETUP_FAILED = 71                 # a forked child's exit status when its own set-up failed
STAGE = "/inside-vmap-stage"      # an empty folder of the zygote's box: where the new /tmp is built
ANSWER_FD = 3
_MS_NOSUID, _MS_NODEV, _MS_RDONLY, _MS_REMOUNT = 2, 4, 1, 32
_MS_BIND, _MS_MOVE, _MS_REC = 4096, 8192, 16384
_PR_SET_DUMPABLE, _PR_CAPBSET_DROP, _PR_SET_NO_NEW_PRIVS = 4, 24, 38
_libc = ctypes.CDLL(None, use_errno=True)


def _check(ret: int, what: str) -> None:
    if ret != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _mount(source: str, target: str, fstype: str | None, flags: int, data: str | None = None):
    _check(_libc.mount(source.encode(), target.encode(), fstype.encode() if fstype else None,
                       ctypes.c_ulong(flags), data.encode() if data else None),
           f"mount {source} on {target}")


def _mounts_under(top: str) -> list[str]:
    """Mount points strictly below ``top``, outermost first (each with what is mounted below it,
    bound recursively, so only the outermost are listed)."""
    points = []
    with open("/proc/self/mountinfo") as fh:
        for line in fh:
            point = line.split()[4].encode().decode("unicode_escape")
            if point.startswith(top + "/"):
                points.append(point)
    return [p for p in points if not any(p.startswith(q + "/") for q in points if q != p)]


def _keep_only(keep: list) -> None:
    """Cover each ``[root, path, writable]``'s root with an empty read-only tmpfs holding only
    its kept paths, bound back where they were (read-only unless writable): a kernel's zygote
    binds every kernel's submission and socket folders, each kernel sees its own."""
    if not keep:
        return
    _mount("tmpfs", STAGE, "tmpfs", _MS_NOSUID | _MS_NODEV, "size=65536,mode=0700")
    held = []
    for i, (_root, path, writable) in enumerate(keep):
        spot = os.path.join(STAGE, str(i))
        os.mkdir(spot)
        _mount(path, spot, None, _MS_BIND | _MS_REC)
        if not writable:
            _mount("none", spot, None, _MS_REMOUNT | _MS_BIND | _MS_RDONLY | _MS_NOSUID | _MS_NODEV)
        held.append((path, spot))
    roots = sorted({r for r, _, _ in keep}, key=len)
    roots = [r for r in roots if not any(r.startswith(q + "/") for q in roots if q != r)]
    for root in roots:                               # outermost only: they cover the inner
        _mount("tmpfs", root, "tmpfs", _MS_NOSUID | _MS_NODEV, "size=65536,mode=0755")
    for path, spot in held:
        os.makedirs(path, exist_ok=True)
        _mount(spot, path, None, _MS_MOVE)
    for root in roots:
        _mount("none", root, None, _MS_REMOUNT | _MS_BIND | _MS_RDONLY | _MS_NOSUID | _MS_NODEV)
    _check(_libc.umount2(STAGE.encode(), 0), f"umount {STAGE}")


def _fresh_tmp(tmpfs_mb: int) -> None:
    """A new /tmp and /dev/shm for this child alone, with the zygote's binds under /tmp kept."""
    size = f"size={tmpfs_mb * 2 ** 20},mode=1777"
    _mount("tmpfs", "/dev/shm", "tmpfs", _MS_NOSUID | _MS_NODEV, size)
    binds = list(dict.fromkeys(_mounts_under("/tmp")))   # a covered root is listed twice
    _mount("tmpfs", STAGE, "tmpfs", _MS_NOSUID | _MS_NODEV, size)
    for point in binds:
        target = STAGE + point[len("/tmp"):]
        os.makedirs(target, exist_ok=True)
        _mount(point, target, None, _MS_BIND | _MS_REC)
        _mount("none", target, None, _MS_REMOUNT | _MS_BIND | _MS_RDONLY | _MS_NOSUID | _MS_NODEV)
    _mount(STAGE, "/tmp", None, _MS_MOVE)
    os.chdir("/tmp")                                 # the box's working folder, the new one


def _namespaces(pid: bool) -> None:
    uid, gid = os.getuid(), os.getgid()
    os.unshare(os.CLONE_NEWUSER | os.CLONE_NEWNS | (os.CLONE_NEWPID if pid else 0) |
               os.CLONE_NEWIPC | os.CLONE_NEWNET | os.CLONE_NEWUTS)
    for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"),
                       ("gid_map", f"{gid} {gid} 1")):
        with open(f"/proc/self/{name}", "w") as fh:
            fh.write(text)


def _drop_privileges() -> None:
    """No capability left in any set, none to gain by exec."""
    _check(_libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    for cap in range(64):
        if _libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            break                                    # past the last capability this kernel has

    class Header(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class Data(ctypes.Structure):
        _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                    ("inheritable", ctypes.c_uint32)]
    header, data = Header(0x20080522, 0), (Data * 2)()
    _check(_libc.capset(ctypes.byref(header), data), "capset")


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
    _namespaces(pid=judge)
    _keep_only(spec.get("keep", []))
    _fresh_tmp(spec["tmpfs_mb"])
    pid = os.fork() if judge else 0
    if pid:      # stays behind to pass on the exit status, holding the pipes open till then
        os._exit(_exit_code(os.waitpid(pid, 0)[1]))  # (their end is the trusted side's "done")
    _drop_privileges()
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
    _libc.prctl(_PR_SET_DUMPABLE, 1, 0, 0, 0)
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
        _libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)    # no child may read or trace this process
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
