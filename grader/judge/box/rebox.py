"""A forked child's own box, built from the inside before it reads a byte of student code.

The zygote (`zygote.py`) forks each judge child and grading kernel from a process that imported
JAX once; what the bubblewrap box around the zygote does not already give the child alone, the
child does to itself here, with the kernel's own calls (unshare, mount, prctl, capset):

* its own user, mount, pid, IPC, network and UTS namespaces (``namespaces``), so a judge child is
  pid 1 of a pid namespace that dies with it (nothing it starts outlives it), and sees no earlier
  child's anything. A kernel keeps the zygote's pid namespace (ipykernel reads its own children
  from /proc, which is the zygote's; threads cannot start in a new one): it is forked only into a
  cgroup, which holds and then kills all it starts, and it can name its zygote, which checks
  before each fork that nothing it passes on (rlimits, nice, CPUs) was changed;
* a fresh, size-limited /tmp and /dev/shm (``fresh_tmp``; what the zygote's box bound under /tmp
  is bound into the new /tmp again, read-only as before); the zygote's own /tmp and /dev/shm are
  read-only, so nothing is left there for a later child to find even if one is uncovered;
* no capabilities (those the new user namespace gave it are dropped) and no new privileges
  (``drop_privileges``); then the system-call filter of every box (``seccomp.py``: no namespace or
  mount of its own) and the rlimits the trusted process sends (``confine.py``);
* a kernel also sees, of the folders its zygote's box binds for every kernel (the submissions'
  and the sockets'), only its own (``keep_only``): the rest is covered by an empty read-only
  tmpfs.
"""
from __future__ import annotations

import ctypes
import os

STAGE = "/inside-vmap-stage"      # an empty folder of the zygote's box: where the new /tmp is built
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


def keep_only(keep: list) -> None:
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


def fresh_tmp(tmpfs_mb: int) -> None:
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


def namespaces(pid: bool) -> None:
    uid, gid = os.getuid(), os.getgid()
    os.unshare(os.CLONE_NEWUSER | os.CLONE_NEWNS | (os.CLONE_NEWPID if pid else 0) |
               os.CLONE_NEWIPC | os.CLONE_NEWNET | os.CLONE_NEWUTS)
    for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"),
                       ("gid_map", f"{gid} {gid} 1")):
        with open(f"/proc/self/{name}", "w") as fh:
            fh.write(text)


def drop_privileges() -> None:
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


def dumpable(flag: bool) -> None:
    """Whether processes of the same user may read or trace this one (``PR_SET_DUMPABLE``)."""
    _libc.prctl(_PR_SET_DUMPABLE, int(flag), 0, 0, 0)
