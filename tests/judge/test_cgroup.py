"""A cgroup holds a box and everything it starts: it limits them together, says which limit
they hit, and is gone afterwards."""
import json
import os
import subprocess
import sys
import time

import pytest

from grader.judge import cgroup
from grader.judge.box import confine

pytestmark = pytest.mark.skipif(not cgroup.available(),
                                reason="no cgroup can be made here (not root, or no delegated v2)")


def run_in(group, code):
    spec = json.dumps({"cgroup": group.procs_files(), "rlimits": {}})
    return subprocess.run([sys.executable, "-I", "-S", confine.__file__, spec, sys.executable,
                           "-c", code], capture_output=True, timeout=60)


def test_memory_of_every_member_counts_and_the_kill_is_named():
    group = cgroup.Group.create(memory_mb=64, tasks=16)
    try:
        proc = run_in(group, "import os\nif os.fork() == 0:\n    x = b'x' * (48 << 20)\n"
                             "    os._exit(0)\nos.wait()\ny = b'y' * (48 << 20)\n"
                             "z = b'z' * (48 << 20)\n")
        assert proc.returncode != 0 and group.out_of_memory()
        assert not group.hit_task_limit()
    finally:
        assert group.remove()
    assert all(not os.path.exists(d) for d in group.dirs.values()) and not group.dirs


FORK_AND_SPIN = """\
import os, time
started = 0
for _ in range(20):
    try:
        if os.fork() == 0:
            os.close(1)          # the parent's pipe is not held open by the children
            os.close(2)
            time.sleep(120)
            os._exit(0)
        started += 1
    except OSError:
        break
print(started)
t = time.process_time()
while time.process_time() - t < 0.3:
    pass
"""


def test_tasks_are_counted_and_cpu_time_is_read():
    group = cgroup.Group.create(memory_mb=256, tasks=8)
    try:
        proc = run_in(group, FORK_AND_SPIN)
        assert int(proc.stdout) < 8 and group.hit_task_limit()
        assert group.cpu_seconds() >= 0.3
        assert group.pids()            # the sleeping children are still members...
    finally:
        assert group.remove()          # ...until remove kills them


def test_flat_keyed_files_are_read_by_key():
    assert cgroup._field("oom 2\noom_kill 3\n", "oom_kill") == 3
    assert cgroup._field("max 0\n", "oom_kill") == 0


def test_groups_left_by_a_grading_process_that_died_are_swept(monkeypatch):
    """A run killed half-way leaves its groups (and maybe a kernel in one); the next run's first
    group removes them, with what runs there. A maker's pid past pid_max never exists."""
    with open("/proc/sys/kernel/pid_max") as fh:
        dead = int(fh.read()) + 1
    left = cgroup.Group.create(memory_mb=64, tasks=8)
    for controller, path in list(left.dirs.items()):      # as if made by process ``dead``
        renamed = os.path.join(os.path.dirname(path), f"inside-vmap-{dead}-0")
        os.rename(path, renamed)
        left.dirs[controller] = renamed
    spec = json.dumps({"cgroup": left.procs_files(), "rlimits": {}})
    sleeper = subprocess.Popen([sys.executable, "-I", "-S", confine.__file__, spec,
                                "sleep", "120"])
    try:
        deadline = time.monotonic() + 10
        while not left.pids() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert left.pids() == [sleeper.pid]
        monkeypatch.setattr(cgroup, "_swept", set())
        fresh = cgroup.Group.create(memory_mb=64, tasks=8)
        assert fresh.remove()
        assert sleeper.wait(timeout=10) == -9
        assert not any(os.path.exists(d) for d in left.dirs.values())
    finally:
        sleeper.kill()
        sleeper.wait()
        left.remove()
