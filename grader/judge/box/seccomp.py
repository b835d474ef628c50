"""The system calls student code never needs and a box must not allow: new namespaces, mounts.

Where grading runs as root, a box's processes are uid 0 on the host even without capabilities.
In a user namespace of its own a process gets every capability back, can mount cgroupfs there,
and, as the owner of its cgroup's files, raise its own limits (the fourth red-team round did so
for memory, tasks and CPU). So every box refuses ``unshare``, ``setns``, ``clone`` with a
``CLONE_NEW*`` flag or ``CLONE_PARENT``, ``clone3`` (whose flags a filter cannot read: ENOSYS, and the C library falls
back to ``clone``), every mount call and ``ptrace``, with EPERM; and 32-bit calls of a 64-bit
process. The kernel's and a judge child's own box get this filter from bubblewrap (``--seccomp FD``,
`memfd`); a child forked from the zygote installs it itself (`install`), after its own
namespaces are made. `program` is classic BPF, as ``seccomp_export_bpf`` would write it.

A judge child adds a second filter before it runs a cell (``install(processes=False)``): no new
process at all (``fork``, ``vfork``, ``execve``, ``execveat``, and ``clone`` without
``CLONE_THREAD``; threads stay allowed, XLA's among them). Its watch, its audit hook and its
sealed channel are its own process's: a second interpreter, or a fork with the channel pointed at
/dev/null, could look up what an exercise forbids where nothing watches (red team, round 10).
"""
from __future__ import annotations

import ctypes
import os
import platform
import struct

# ---- the filter --------------------------------------------------------------------------------
_AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
_X32_BIT = 0x40000000                            # x86_64's x32 ABI: the same calls, another number
# Per architecture: unshare, setns, mount, umount2, pivot_root, the new mount API (open_tree,
# move_mount, fsopen, fsconfig, fsmount, fspick, mount_setattr, open_tree_attr), and ptrace (a
# box's process could stop bubblewrap's pid 1 and hang its own box); then clone, clone3.
_DENIED = {"x86_64": (272, 308, 165, 166, 155, 428, 429, 430, 431, 432, 433, 442, 467, 101),
           "aarch64": (97, 268, 40, 39, 41, 428, 429, 430, 431, 432, 433, 442, 467, 117)}
_CLONE = {"x86_64": 56, "aarch64": 220}
_CLONE3 = 435
# A judge child's own: fork, vfork, execve, execveat (aarch64 has no fork or vfork; clone is both).
_PROCESS = {"x86_64": (57, 58, 59, 322), "aarch64": (221, 281)}
CLONE_THREAD = 0x00010000
# CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET (clone's flags are its first
# argument; its low byte is the exit signal, so CLONE_NEWTIME cannot be told apart there), and
# CLONE_PARENT: a forked kernel's sibling would be its zygote's child, outside what it reaps
# (the fifth red-team round left hundreds of zombies there).
CLONE_NEW = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | \
    0x40000000 | 0x00008000
_ALLOW, _ERRNO = 0x7FFF0000, 0x00050000
_EPERM, _ENOSYS = 1, 38
_LD, _JEQ, _JSET, _JGE, _RET = 0x20, 0x15, 0x45, 0x35, 0x06


def _op(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def program(machine: str | None = None, processes: bool = True) -> bytes | None:
    """The filter for this machine's architecture, or ``None`` where the course knows none;
    ``processes=False``: refuse every new process too (a judge child's second filter)."""
    machine = machine or platform.machine()
    if machine not in _AUDIT_ARCH:
        return None
    denied = _DENIED[machine] + (() if processes else _PROCESS[machine])
    ops = [(_LD, 4),                                         # seccomp_data.arch
           (_JEQ, _AUDIT_ARCH[machine], "next", "eperm"),    # a foreign ABI: refused
           (_LD, 0)]                                         # seccomp_data.nr
    if machine == "x86_64":
        ops += [(_JGE, _X32_BIT, "eperm", "next")]
    ops += [(_JEQ, nr, "eperm", "next") for nr in denied]
    ops += [(_JEQ, _CLONE3, "enosys", "next"),               # clone3: use clone
            (_JEQ, _CLONE[machine], "next", "allow"),
            (_LD, 16),                                       # clone's flags (low 32 bits)
            (_JSET, CLONE_NEW, "eperm", "allow" if processes else "next")]
    if not processes:
        ops += [(_JSET, CLONE_THREAD, "allow", "eperm")]     # a thread, or a process: refused
    ops += [("eperm", _RET, _ERRNO | _EPERM), ("enosys", _RET, _ERRNO | _ENOSYS),
            ("allow", _RET, _ALLOW)]
    return _assemble(ops)


def _assemble(ops: list) -> bytes:
    """Classic BPF from ``(code, k[, jt, jf])`` and labelled ``(label, code, k)`` returns; a jump
    names a label or "next" (BPF jumps count the instructions they skip)."""
    where = {op[0]: i for i, op in enumerate(ops) if isinstance(op[0], str)}
    out = []
    for i, op in enumerate(ops):
        if isinstance(op[0], str):
            op = op[1:]
        code, k, *jumps = op
        jt, jf = (0 if j == "next" else where[j] - i - 1 for j in (jumps or ("next", "next")))
        out.append(_op(code, k, jt, jf))
    return b"".join(out)


# ---- putting it in place -----------------------------------------------------------------------
def memfd() -> int | None:
    """A file descriptor holding the filter, for bubblewrap's ``--seccomp`` (each bubblewrap
    reads its own to the end: one per box), or ``None`` where there is no filter."""
    prog = program()
    if prog is None:
        return None
    fd = os.memfd_create("inside-vmap-seccomp", 0)
    os.set_inheritable(fd, True)                            # bwrap, exec'd, reads it
    os.write(fd, prog)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def install(processes: bool = True) -> bool:
    """Install the filter on this process (setting no_new_privs, which a box has set already);
    ``False`` if there is none for this machine."""
    prog = program(processes=processes)
    if prog is None:
        return False

    class Filter(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]
    fprog = Filter(len(prog) // 8, prog)
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(38, 1, 0, 0, 0) != 0 or \
            libc.prctl(22, 2, ctypes.byref(fprog), 0, 0) != 0:   # NO_NEW_PRIVS; SECCOMP, FILTER
        err = ctypes.get_errno()
        raise OSError(err, f"seccomp: {os.strerror(err)}")
    return True
