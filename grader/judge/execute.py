"""nbgrader's ``Execute``, bounded: what a submission's kernel may print, use and write.

`BoundedExecute` takes ``Execute``'s place in ``Autograde.autograde_preprocessors`` (every
``c.Execute.*`` option still applies). It runs in the trusted nbgrader process, so it is what
keeps that process small whatever the kernel sends:

* output is counted as each message arrives, never held: past ``cell_output_kb`` in a cell or
  ``notebook_output_kb`` in the notebook it is dropped (with a note in the cell), and past
  ``output_hard_mb`` received in all only the kernel's status is read on (one note in the
  notebook says so). Printing alone never fails a submission: the kernel runs its cells on and
  the judge grades the answers, which it re-runs itself. The kernel cuts what it prints at once
  (``box/outstream.py``), so that only a message it forges over ``output_hard_mb``, which ZeroMQ
  refuses before it is read, cuts a channel off and stops it;
* the kernel gets a cgroup (memory, tasks; CPU is read from it) or, where none can be made,
  rlimits and a count of its process tree (see ``sandbox.py``), its tmpfs are sized, and it
  starts with an allow-listed environment (``kernel.py``);
* what it adds to the submission's folder, or to its own socket folder, is counted while it
  runs and after (``quota.py``): past ``disk_mb`` it is stopped and what it added is removed.
* it draws on the submission's one budget of time, shared with the judge's children
  (``sandbox.submission_budget``): spent, it is stopped, the reason naming the exercise whose
  cell was running ("timed out in spy: ..."). ``watchdog.py`` reads all of it every tick.

A limit hit fails the submission with `KernelLimitExceeded`, whose message nbgrader logs; the
reason of any failure here (a limit, a dead kernel, a timeout) goes into the gradebook's
grading status (`grader.nbgrader_plugins.status`) whichever front end autogrades; the rest of
the batch is graded.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import tempfile

from nbclient.util import run_sync
from nbformat.v4 import new_output
from nbgrader.preprocessors import Execute
from traitlets import Bool, Enum, Int, List, TraitError, Unicode, validate

from . import cgroup, kernel, quota, sandbox, watch
from .box import outstream
from .channels import BoundedKernelManager
from .channels import size as message_size
from .failure import MARK, KernelLimitExceeded, failure_reason  # noqa: F401  (MARK: re-exported)
from .watchdog import KernelRun, Watchdog, exercise_of_cells

_OUTSTREAM = "--IPKernelApp.outstream_class"     # the kernel's stdout and stderr
# Read past output_hard_mb: when a cell runs and ends (small, whatever the kernel prints).
_READ_ON = {"status", "execute_input"}
_KEPT = {"stream", "display_data", "execute_result", "error", "update_display_data",
         "comm_open", "comm_msg"}


def _limit(reason: str, cause: BaseException | None) -> KernelLimitExceeded:
    """``KernelLimitExceeded(reason) from cause``, to be raised once recorded."""
    err = KernelLimitExceeded(reason)
    err.__cause__ = cause
    return err


class BoundedExecute(Execute):
    memory_mb = Int(4096, help="MiB of memory for the kernel and everything it starts, tmpfs "
                               "included (a cgroup; else RLIMIT_AS per process).").tag(config=True)
    cpu_seconds = Int(600, help="CPU seconds for the kernel and everything it starts, "
                                "together where a cgroup counts them.").tag(config=True)
    wall_seconds = Int(1200, help="Wall-clock seconds for the whole notebook (each cell has "
                                  "Execute.timeout as well). The submission's one budget, "
                                  "JudgeExercises.budget_seconds for its kernel and its judge "
                                  "together, may stop it first.").tag(config=True)
    max_tasks = Int(512, help="Processes and threads the kernel may run at once.").tag(config=True)
    disk_mb = Int(64, help="MiB the kernel may add to the submission's folder (writable only "
                           "unboxed) or to its socket folder, each (RLIMIT_FSIZE per file, and "
                           "a count of the folder).").tag(config=True)
    tmpfs_mb = Int(sandbox.Limits.tmpfs_mb, help="MiB of each of the kernel's tmpfs (/tmp, "
                                                 "/dev/shm).").tag(config=True)
    cell_output_kb = Int(1024, help="KiB of output kept per cell; the rest is dropped with a "
                                    "note.").tag(config=True)
    notebook_output_kb = Int(3072, help="KiB of output kept per notebook.").tag(config=True)
    output_hard_mb = Int(32, help="MiB of output received in all (kept or not) past which "
                                  "only the kernel's status is read (the kernel runs on and "
                                  "the submission is graded; a note says where output was "
                                  "cut), and the largest message read: a kernel sending a "
                                  "larger one is stopped and the submission fails (the "
                                  "kernel's own printing is cut to 256 KiB a message). At "
                                  "least 2.").tag(config=True)
    sandbox = Enum(["auto", "bwrap", "none"], default_value="auto",
                   help="The kernel's box: 'bwrap' requires bubblewrap, 'none' runs it without "
                        "isolation (limits still hold), 'auto' boxes it when bubblewrap works."
                   ).tag(config=True)
    env_keep = List(Unicode(), default_value=list(kernel.ENV_KEEP),
                    help="Variables of nbgrader's environment the kernel keeps; it gets no "
                         "others (HOME and PYTHONPATH are set).").tag(config=True)
    fork_kernels = Bool(True, help="Fork each boxed kernel from a zygote that has imported JAX "
                                   "and ipykernel once per grading process (grader.judge."
                                   "zygote), in the same box, limits and environment; where "
                                   "one cannot start, or False, each kernel is launched in a "
                                   "box of its own.").tag(config=True)

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("kernel_manager_class", BoundedKernelManager)
        super().__init__(*args, **kwargs)

    @validate("output_hard_mb")
    def _room_for_a_piece(self, proposal):
        # What the kernel prints at once comes in pieces of up to 1.5 MiB (box/outstream.py).
        if proposal.value < 2:
            raise TraitError(f"BoundedExecute.output_hard_mb={proposal.value}: at least 2 MiB "
                             "(the kernel sends what it prints in pieces of up to 1.5 MiB)")
        return proposal.value

    # ---- one notebook -------------------------------------------------------------------
    def preprocess(self, nb, resources, km=None):
        folder = os.path.abspath(resources.get("metadata", {}).get("path") or os.getcwd())
        group = cgroup.Group.create(self.memory_mb, self.max_tasks, "inside-vmap-kernel") \
            if sandbox.cgroups() else None
        self._reason = None
        self._run = KernelRun(group, sandbox.submission_budget(resources, self._budget_seconds()))
        self._seen = {"all": 0, "kept": 0, "cell": None}
        self._exercises = exercise_of_cells(nb)
        before = quota.snapshot(folder)
        dog = Watchdog(self, self._run, folder, before)
        error = None
        try:
            dog.start()
            nb, resources = super().preprocess(nb, resources, km)
        except Exception as err:         # a limit's consequence (a dead kernel) or a real error
            error = err
        finally:
            dog.finish()
            reason = self._reason or self._group_reason() or dog.check_disk()
            if quota.added(folder, before, self.disk_mb * 2 ** 20) > self.disk_mb * 2 ** 20:
                quota.remove_added(folder, before)
            if group is not None:
                group.remove()
            for sockets in self._run.sockets:   # a folder per kernel (nbgrader may retry)
                shutil.rmtree(sockets, ignore_errors=True)
        if reason:
            error = _limit(reason, error)
        if error is not None:
            # Recorded here, where every front end's autograde passes (nbgrader's CLI and API,
            # the formgrader, make autograde): nbgrader only logs the error and goes on.
            from ..nbgrader_plugins.status import FAILED, record_step
            try:
                record_step(self, resources, FAILED, failure_reason(error))
            except Exception as unrecorded:     # nbgrader must still see the failure itself
                self.log.warning("inside-vmap: the failure could not be recorded: %s", unrecorded)
            raise error
        return nb, resources

    def _budget_seconds(self) -> float:
        from .preprocessor import JudgeExercises  # the one setting of the submission's budget
        return JudgeExercises(parent=self).budget_seconds

    def _spec(self) -> dict:
        boxed = self.sandbox != "none" and sandbox.available()
        confine = sandbox.confinement(self.cpu_seconds, self.memory_mb, self.max_tasks,
                                      self.disk_mb, self._run.group, boxed)
        return {"confine": confine, "tmpfs_mb": self.tmpfs_mb, "env": list(self.env_keep),
                "sandbox": self.sandbox, "kits": sandbox.kits()}

    async def async_start_new_kernel(self, **kwargs):
        # Here, not in preprocess: ExecutePreprocessor.preprocess re-reads extra_arguments
        # from the configuration.
        limits = f"{kernel.LIMITS_ARG}={json.dumps(self._spec())}"
        self.extra_arguments = [a for a in self.extra_arguments
                                if not a.startswith((kernel.LIMITS_ARG, _OUTSTREAM))] + \
            [limits, f"{_OUTSTREAM}={outstream.__name__}.CutOutStream"]
        return await super().async_start_new_kernel(**kwargs)

    start_new_kernel = run_sync(async_start_new_kernel)   # nbclient's sync path calls this one

    def create_kernel_manager(self):
        km = super().create_kernel_manager()
        if isinstance(km, BoundedKernelManager):
            km.max_message_bytes = self.output_hard_mb * 2 ** 20 + 2 ** 16
            km.fork_kernel = self.fork_kernels and self.sandbox != "none"
        if km.transport == "ipc" and km.ip:
            # A socket folder of its own: the box binds it, and no other kernel's sockets
            # (another worker's, at the same time) are there to listen to.
            sockets = tempfile.mkdtemp(prefix="k-", dir=os.path.dirname(km.ip) or None)
            if getattr(self, "_run", None) is not None:
                self._run.sockets.append(sockets)
            km.ip = os.path.join(sockets, os.path.basename(km.ip))
        return km

    # ---- stopping the kernel ------------------------------------------------------------
    def stop(self, reason: str) -> None:
        """Record why (the first reason wins) and kill the kernel with all it started;
        nbclient then finds it dead."""
        self._reason = self._reason or reason
        if self._run.group is not None:
            self._run.group.kill()
        pid = self.kernel_pid()
        if pid:
            watch.kill_tree(pid)

    def kernel_pid(self) -> int | None:
        process = getattr(getattr(self.km, "provisioner", None), "process", None)
        return getattr(process, "pid", None)

    def _group_reason(self) -> str | None:
        run = self._run
        code = run.exit_code                    # RLIMIT_CPU, where no cgroup counts CPU
        if code in (-signal.SIGXCPU, 128 + signal.SIGXCPU):
            return f"the grading kernel used more than {self.cpu_seconds} s of CPU time"
        if run.group is None:
            return None
        if run.group.out_of_memory():
            if run.cut:
                return f"the grading kernel printed more than {self.output_hard_mb} MiB at once"
            if self._seen["all"] > self.notebook_output_kb * 2 ** 10:
                # Printing faster than it is read (a loaded machine), a kernel's unsent output
                # can fill its memory: a memory limit, the flood's doing.
                return (f"the grading kernel used more than {self.memory_mb} MiB of memory "
                        "holding output it had not sent yet")
            return f"the grading kernel used more than {self.memory_mb} MiB of memory"
        if run.group.hit_task_limit():
            return f"the grading kernel started more than {self.max_tasks} processes or threads"
        return None

    # ---- output, as it arrives ----------------------------------------------------------
    def preprocess_cell(self, cell, resources, index):
        self._run.where = self._exercises.get(index, f"cell {index + 1}")
        self._run.running = True          # a channel dropping the kernel now is its doing
        try:
            return super().preprocess_cell(cell, resources, index)
        finally:
            self._run.running = False

    def process_message(self, msg, cell, cell_index):
        seen, kind = self._seen, msg["msg_type"]
        size = message_size(msg.get("content")) + sum(len(b) for b in msg.get("buffers") or ())
        seen["all"] += size
        if seen["all"] > self.output_hard_mb * 2 ** 20 and kind not in _READ_ON:
            return self._cut_after(cell, seen)     # counted, never held: the kernel runs on
        if kind in _KEPT:
            if seen["cell"] != cell_index:
                seen.update(cell=cell_index, in_cell=0, noted=False)
            room = min(self.cell_output_kb * 2 ** 10 - seen["in_cell"],
                       self.notebook_output_kb * 2 ** 10 - seen["kept"])
            if size > room:
                if kind != "stream" or room <= 0:
                    return self._note(cell, seen)
                msg["content"]["text"] = msg["content"].get("text", "")[:room]   # the start fits
                size = room
            seen["in_cell"] += size
            seen["kept"] += size
            out = super().process_message(msg, cell, cell_index)
            if seen["in_cell"] >= self.cell_output_kb * 2 ** 10 or \
                    seen["kept"] >= self.notebook_output_kb * 2 ** 10:
                self._note(cell, seen)
            return out
        return super().process_message(msg, cell, cell_index)

    def _cut_after(self, cell, seen) -> None:
        """Say once per notebook, in the cell printing, that output is no longer kept."""
        if not seen.get("cut_after"):
            seen["cut_after"] = True
            cell.outputs.append(new_output("stream", name="stderr", text=(
                f"[output cut after {self.output_hard_mb} MiB: what the grading kernel printed "
                "from here on was not kept; the answers are graded as usual]\n")))

    def _note(self, cell, seen) -> None:
        """Say once per cell that output was cut (what is cut is never held)."""
        if not seen["noted"]:
            seen["noted"] = True
            cell.outputs.append(new_output("stream", name="stderr", text=(
                f"[output cut off while grading: more than {self.cell_output_kb} KiB in this "
                f"cell or {self.notebook_output_kb} KiB in the notebook]\n")))
