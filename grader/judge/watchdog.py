"""What watches a grading kernel while its cells run (`BoundedExecute`'s watchdog): every tick
it reads the kernel's clock, the submission's budget, its CPU time, its tasks, what it cut off
and what it wrote, and stops it with the reason of the first limit hit."""
from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field

from nbgrader.utils import is_grade, is_solution

from . import cellmeta, quota, watch
from .budget import Budget
from .cgroup import Group
from .channels import BoundedKernelClient


def exercise_of_cells(nb) -> dict[int, str]:
    """``{cell index: grade id}`` for the cells of an exercise: its grade cell and the answer
    cells above it (what a time limit hit while they run is said to be "in")."""
    found, pending = {}, []
    for index, cell in enumerate(nb.cells):
        if is_grade(cell) and cellmeta.grade_id(cell):
            found.update({i: cellmeta.grade_id(cell) for i in pending + [index]})
            pending = []
        elif is_solution(cell):
            pending.append(index)
    return found


@dataclass
class KernelRun:
    """What one notebook's run shares between its executor and the watchdog, each side
    writing its own fields."""
    group: Group | None = None      # the kernel's cgroup, where one can be made
    budget: Budget | None = None    # the submission's one budget (`budget.submission_budget`)
    where: str = ""                 # the exercise (or cell) whose cell runs, for its reason
    sockets: list[str] = field(default_factory=list)   # a folder per kernel started
    running: bool = False           # a cell runs: a channel dropping the kernel is its doing
    cut: bool = False               # (watchdog) its channel refused a message too large
    exit_code: int | None = None    # (watchdog) how the kernel ended


class Watchdog(threading.Thread):
    """Reads the kernel's CPU time, tasks, folder and clock every tick while cells run.
    ``ex`` is the `execute.BoundedExecute` running the notebook: its limits, ``km``, ``kc``,
    ``kernel_pid()`` and ``stop(reason)``."""

    def __init__(self, ex, run: KernelRun, folder: str, before: dict):
        super().__init__(name="inside-vmap-kernel-watchdog", daemon=True)
        self.ex, self.state, self.folder, self.before = ex, run, folder, before
        self.done, self.process = threading.Event(), None

    def run(self) -> None:
        start = time.monotonic()
        while not self.done.wait(watch.TICK_S):
            reason = self.check(time.monotonic() - start)
            if reason:
                self.ex.stop(reason)

    def check(self, elapsed: float) -> str | None:
        ex, group = self.ex, self.state.group
        self.process = self.process or getattr(getattr(ex.km, "provisioner", None), "process",
                                               None)
        if elapsed > ex.wall_seconds:
            return f"the grading kernel ran longer than {ex.wall_seconds} s"
        budget = self.state.budget
        if budget is not None and budget.left() <= 0:
            return budget.spent(self.state.where)
        if group is not None and group.cpu_seconds() > ex.cpu_seconds:
            return f"the grading kernel used more than {ex.cpu_seconds} s of CPU time"
        pid = ex.kernel_pid()
        if (group.hit_task_limit() if group is not None else
                pid and watch.tasks_in_tree(pid) > ex.max_tasks):
            return f"the grading kernel started more than {ex.max_tasks} processes or threads"
        if self._cut_off(pid):
            return f"the grading kernel printed more than {ex.output_hard_mb} MiB at once"
        return self.check_disk()

    def _cut_off(self, pid: int | None) -> bool:
        """A channel dropped a kernel that is still alive a moment later: ZeroMQ refused a
        message too large. (A kernel that dies, or is interrupted to death, drops them too.)"""
        kc = getattr(self.ex, "kc", None)
        if self.state.cut or not (self.state.running and
                                  isinstance(kc, BoundedKernelClient) and kc.cut_off()):
            return False
        time.sleep(0.1)
        # Alive: the cut is the kernel's doing. (What it could not send then piles up in its
        # memory: a kill for memory right after is the flood's, see _group_reason.)
        self.state.cut = watch.state(pid) not in (None, "Z", "X")
        return self.state.cut

    def check_disk(self) -> str | None:
        limit = self.ex.disk_mb * 2 ** 20
        if quota.added(self.folder, self.before, limit) > limit:
            return (f"the grading kernel wrote more than {self.ex.disk_mb} MiB into the "
                    "submission's folder")
        # Its socket folder is the host's too, and writable (the fifth red-team round filled the
        # disk there): anything beside its sockets counts against the same limit.
        for sockets in self.state.sockets:
            try:
                dev = os.stat(sockets).st_dev
            except OSError:
                continue
            if quota.added(sockets, {}, limit) + quota.unlinked(self._pids(), dev) > limit:
                return (f"the grading kernel wrote more than {self.ex.disk_mb} MiB into its "
                        "socket folder")
        return None

    def _pids(self) -> list[int]:
        group, pid = self.state.group, self.ex.kernel_pid()
        try:
            return group.pids() if group is not None else list(watch.tree(pid) if pid else ())
        except OSError:
            return []

    def finish(self) -> None:
        self.done.set()
        if self.is_alive():
            self.join()
        if self.process is not None:      # how the kernel ended (jupyter_client reaped it)
            self.state.exit_code = self.process.returncode
