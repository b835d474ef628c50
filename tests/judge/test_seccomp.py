"""The filter's hand-written system-call numbers (grader/judge/box/seccomp.py), checked against
libseccomp's own tables where the library is installed (libseccomp2 on Debian; no binding needed:
its C API through ctypes). A wrong number would leave that call allowed, silently."""
import ctypes
import ctypes.util

import pytest

from grader.judge.box import seccomp

# In the order of seccomp._DENIED (its comment): then clone and clone3.
DENIED = ("unshare", "setns", "mount", "umount2", "pivot_root", "open_tree", "move_mount", "fsopen",
          "fsconfig", "fsmount", "fspick", "mount_setattr", "open_tree_attr", "ptrace")
_found = ctypes.util.find_library("seccomp")
libseccomp = ctypes.CDLL(_found) if _found else None


def _resolve(machine: str, name: str) -> int:
    resolve = libseccomp.seccomp_syscall_resolve_name_arch
    resolve.argtypes, resolve.restype = [ctypes.c_uint32, ctypes.c_char_p], ctypes.c_int
    return resolve(seccomp._AUDIT_ARCH[machine], name.encode())


@pytest.mark.skipif(libseccomp is None, reason="libseccomp is not installed")
@pytest.mark.parametrize("machine", sorted(seccomp._AUDIT_ARCH))
def test_every_denied_call_has_the_number_libseccomp_gives_it(machine):
    ours = dict(zip(DENIED, seccomp._DENIED[machine], strict=True))
    ours.update(clone=seccomp._CLONE[machine], clone3=seccomp._CLONE3)
    theirs = {name: _resolve(machine, name) for name in ours}
    known = {name: n for name, n in theirs.items() if n >= 0}   # an older libseccomp lacks the newest
    assert len(known) >= len(ours) - 1, theirs                  # (2.5.4: open_tree_attr, Linux 6.15)
    assert {name: ours[name] for name in known} == known
