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


def program(machine: str | None = None) -> bytes | None:
    """The filter for this machine's architecture, or ``None`` where the course knows none."""
    machine = machine or platform.machine()
    if machine not in _AUDIT_ARCH:
        return None
    denied = _DENIED[machine]
    ops = [_op(_LD, 4),                                      # seccomp_data.arch
           _op(_JEQ, _AUDIT_ARCH[machine], 1, 0),
           _op(_RET, _ERRNO | _EPERM),                       # a foreign ABI: refused
           _op(_LD, 0)]                                      # seccomp_data.nr
    if machine == "x86_64":
        ops += [_op(_JGE, _X32_BIT, 0, 1), _op(_RET, _ERRNO | _EPERM)]
    # Jumps count the instructions skipped: each denied call jumps to the EPERM below.
    for i, nr in enumerate(denied):
        ops.append(_op(_JEQ, nr, len(denied) - i + 3, 0))
    ops += [_op(_JEQ, _CLONE3, 4, 0),
            _op(_JEQ, _CLONE[machine], 0, 4),
            _op(_LD, 16),                                    # clone's flags (low 32 bits)
            _op(_JSET, CLONE_NEW, 0, 2),
            _op(_RET, _ERRNO | _EPERM),
            _op(_RET, _ERRNO | _ENOSYS),                     # clone3: use clone
            _op(_RET, _ALLOW)]
    return b"".join(ops)


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


def install() -> bool:
    """Install the filter on this process (no_new_privs must be set); ``False`` if none."""
    prog = program()
    if prog is None:
        return False

    class Filter(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]
    fprog = Filter(len(prog) // 8, prog)
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(22, 2, ctypes.byref(fprog), 0, 0) != 0:   # PR_SET_SECCOMP, MODE_FILTER
        err = ctypes.get_errno()
        raise OSError(err, f"seccomp: {os.strerror(err)}")
    return True
