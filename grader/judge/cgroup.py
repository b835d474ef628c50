"""A control group holding one box and everything it starts, where the machine lets us make one.

Per-process rlimits miss what a box does with many processes or with tmpfs: ten forks of 1 GiB
each, or a file in /dev/shm, fit under any RLIMIT_AS. A cgroup counts all of it: memory (tmpfs
pages included), tasks (processes and threads) and CPU time, for the group as a whole.

Two layouts are handled: cgroup v2 (one hierarchy, ``/sys/fs/cgroup/cgroup.controllers``) and
cgroup v1 (a ``memory``, a ``pids`` and a ``cpuacct`` hierarchy). Groups are made below the
grading process's own cgroup, so they stay inside whatever limits the machine already puts on
it. Where neither works (no permission, a v2 parent holding processes, no cgroup file system),
`create` returns ``None`` and the sandbox falls back to rlimits (see ``sandbox.py``);
`confinement` says which a box gets.
"""
from __future__ import annotations

import itertools
import os
import re
import signal
import time

ROOT = "/sys/fs/cgroup"
V1_CONTROLLERS = ("memory", "pids", "cpuacct")
_serial = itertools.count()


def _read(path: str) -> str:
    try:
        with open(path) as fh:
            return fh.read()
    except OSError:
        return ""


def _write(path: str, value) -> None:
    with open(path, "w") as fh:
        fh.write(str(value))


def _own_paths() -> dict[str, str]:
    """``{controller or "": path}`` of this process's cgroups, from /proc/self/cgroup."""
    found = {}
    for line in _read("/proc/self/cgroup").splitlines():
        _, controllers, path = line.split(":", 2)
        for name in controllers.split(",") if controllers else [""]:
            found[name] = path
    return found


def _field(text: str, name: str) -> int:
    """The value of ``name`` in a flat-keyed cgroup file ("oom_kill 3"); 0 when absent."""
    for line in text.splitlines():
        key, _, value = line.partition(" ")
        if key == name:
            return int(value or 0)
    return 0


def _parent(mount: str, own: str) -> str:
    """Where our groups go in one hierarchy: below our own cgroup, or at the mount's root when
    the mount shows only a part of the tree (a container's view of its own cgroup)."""
    below = os.path.join(mount, own.lstrip("/"))
    return below if os.path.isdir(below) else mount


def _enable(parent: str) -> None:
    for controller in ("memory", "pids", "cpu"):
        try:
            _write(os.path.join(parent, "cgroup.subtree_control"), "+" + controller)
        except OSError:  # refused (a parent holding processes): memory.max is missing, no group
            pass


def layout() -> str | None:
    """"v2", "v1" or ``None``: which cgroup file system this machine offers us."""
    if os.path.exists(os.path.join(ROOT, "cgroup.controllers")):
        return "v2"
    if all(os.path.isdir(os.path.join(ROOT, c)) for c in V1_CONTROLLERS):
        return "v1"
    return None


class Group:
    """One cgroup: made with its limits, joined by the box's launcher, read, killed, removed."""

    def __init__(self, version: str, dirs: dict[str, str]):
        self.version = version
        self.dirs = dirs                    # controller ("" on v2) -> its directory

    # ---- making one -------------------------------------------------------------------
    @classmethod
    def create(cls, memory_mb: int, tasks: int, prefix: str = "inside-vmap") -> Group | None:
        """A new group limited to ``memory_mb`` MiB and ``tasks`` tasks, or ``None``."""
        version = layout()
        if version is None:
            return None
        name = f"{prefix}-{os.getpid()}-{next(_serial)}"
        own = _own_paths()
        wanted = [""] if version == "v2" else list(V1_CONTROLLERS)
        dirs = {c: os.path.join(_parent(os.path.join(ROOT, c), own.get(c, "/")), name)
                for c in wanted}
        _sweep_once(version, {c: os.path.dirname(d) for c, d in dirs.items()})
        group = cls(version, {})
        try:
            if version == "v2":               # children get these controllers only if enabled
                _enable(os.path.dirname(dirs[""]))
            for controller, path in dirs.items():
                os.mkdir(path)
                group.dirs[controller] = path
            group._limit(memory_mb * 2 ** 20, tasks)
        except OSError:
            group.remove()
            return None
        return group

    def _limit(self, memory: int, tasks: int) -> None:
        if self.version == "v2":
            d = self.dirs[""]
            _write(os.path.join(d, "memory.max"), memory)
            if os.path.exists(os.path.join(d, "memory.swap.max")):
                _write(os.path.join(d, "memory.swap.max"), 0)
            _write(os.path.join(d, "pids.max"), tasks)
            return
        mem = self.dirs["memory"]
        _write(os.path.join(mem, "memory.limit_in_bytes"), memory)
        if os.path.exists(os.path.join(mem, "memory.memsw.limit_in_bytes")):
            _write(os.path.join(mem, "memory.memsw.limit_in_bytes"), memory)   # no swapping out
        _write(os.path.join(self.dirs["pids"], "pids.max"), tasks)

    def procs_files(self) -> list[str]:
        """What the launcher writes its pid into, before it execs the box."""
        return [os.path.join(d, "cgroup.procs") for d in self.dirs.values()]

    # ---- reading it -------------------------------------------------------------------
    def _file(self, controller: str, name: str) -> str:
        return _read(os.path.join(self.dirs.get("" if self.version == "v2" else controller, ""),
                                  name))

    def cpu_seconds(self) -> float:
        """CPU time used by every task of the group so far."""
        if self.version == "v2":
            return _field(self._file("", "cpu.stat"), "usage_usec") / 1e6
        return int(self._file("cpuacct", "cpuacct.usage").strip() or 0) / 1e9

    def out_of_memory(self) -> bool:
        """Whether the kernel killed a task of the group for memory."""
        if self.version == "v2":
            return _field(self._file("", "memory.events"), "oom_kill") > 0
        return _field(self._file("memory", "memory.oom_control"), "oom_kill") > 0

    def hit_task_limit(self) -> bool:
        """Whether a fork or thread start failed because the group was full."""
        return _field(self._file("pids", "pids.events"), "max") > 0

    def pids(self) -> list[int]:
        return [int(p) for p in self._file("pids", "cgroup.procs").split()]

    # ---- ending it --------------------------------------------------------------------
    def kill(self) -> None:
        """SIGKILL every process of the group (those it forks meanwhile too)."""
        if self.version == "v2" and os.path.exists(os.path.join(self.dirs.get("", ""),
                                                                "cgroup.kill")):
            try:
                _write(os.path.join(self.dirs[""], "cgroup.kill"), 1)
                return
            except OSError:
                pass
        for _ in range(100):                 # the task limit bounds how many forks can race
            pids = self.pids()
            if not pids:
                return
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass

    def remove(self, wait_s: float = 5.0) -> bool:
        """Kill what is left and delete the group; ``False`` if it could not be deleted."""
        self.kill()
        deadline = time.monotonic() + wait_s
        for controller, path in list(self.dirs.items()):
            while True:
                try:
                    os.rmdir(path)
                    break
                except FileNotFoundError:
                    break
                except OSError:              # dying tasks are still members for a moment
                    if time.monotonic() > deadline:
                        return False
                    self.kill()
                    time.sleep(0.02)
            del self.dirs[controller]
        return True


_ORPHAN = re.compile(r"^inside-vmap(?:-[a-z]+)?-(\d+)-\d+$")
_swept: set[str] = set()


def _sweep_once(version: str, parents: dict[str, str]) -> None:
    """Once per process: remove the groups that grading processes which died without removing
    them (killed half-way, say) left below our own cgroup, with whatever still runs in them (a
    kernel whose bubblewrap outlived its parent). Read where memory is counted (v1's memory
    hierarchy, or v2's one), so only groups made from our own cgroup are seen; a group whose
    maker's pid is alive, or reused, is kept."""
    where = parents.get("memory", parents.get(""))
    if where is None or where in _swept:
        return
    _swept.add(where)
    try:
        names = os.listdir(where)
    except OSError:
        return
    for name in names:
        m = _ORPHAN.match(name)
        if m and not os.path.exists(f"/proc/{m.group(1)}"):
            dirs = {c: os.path.join(p, name) for c, p in parents.items()
                    if os.path.isdir(os.path.join(p, name))}
            Group(version, dirs).remove(wait_s=1.0)


def available() -> bool:
    """Whether a group with limits can be made here (made, and removed again)."""
    group = Group.create(64, 16, prefix="inside-vmap-probe")
    return group is not None and group.remove()


def confinement(cpu_s: int, memory_mb: int, tasks: int, fsize_mb: int, group,
                boxed: bool) -> dict:
    """What ``confine.apply`` sets in a box before it starts: the group to join and the
    rlimits. With a group, memory is its business (RLIMIT_AS would count address space JAX
    reserves and never touches); without, RLIMIT_AS is the best bound there is."""
    rlimits = {"cpu": cpu_s, "fsize": fsize_mb * 2 ** 20, "nproc": tasks}
    if group is None:
        rlimits["as"] = memory_mb * 2 ** 20
        if not boxed and os.getuid() != 0:   # outside a user namespace it counts all our tasks
            rlimits["nproc"] = tasks + _own_tasks()
    return {"rlimits": rlimits, "cgroup": group.procs_files() if group else []}


def _own_tasks() -> int:
    uid, count = str(os.getuid()), 0
    for name in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{name}/status") as fh:
                status = dict(line.split(":", 1) for line in fh if ":" in line)
        except OSError:
            continue
        if status.get("Uid", "").split()[:1] == [uid]:
            count += int(status.get("Threads", "1"))
    return count
