"""Resource attacks, in one autograde batch with honest students: none can exhaust the machine.

Each attack floods, allocates, forks, fills or sleeps either in the grading kernel (nbgrader's
execution of the notebook) or in the judge's child (the re-run that grades), telling the two
apart the generic way (only a kernel defines ``get_ipython``). Every one is bounded by a small
limit configured here, reported for that student with its reason, and leaves nothing behind;
honest students in the same batch keep their full marks. A kernel's flood alone is cut, not
failed: the judge re-runs the answers and grades them. Meanwhile the trusted processes (this
one and autograde's workers) stay under 1 GB and every autograded notebook under 5 MB.
"""
import glob
import os
import secrets
import shutil
import threading
import time

import nbformat
import pytest

from grader.judge import cgroup, pool, sandbox, watch
from tools import classroom as C

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")]

FIRST = "01-the-rule-per-primitive"
SOURCE = os.path.join(C.ROOT, "exercises", FIRST, FIRST + ".ipynb")
SECRET = "INSIDE_VMAP_SECRET"
MEMORY = 1024 if sandbox.cgroups() else 4096   # RLIMIT_AS (no cgroup) must leave JAX room
LIMITS = [f"--JudgeExercises.memory_mb={MEMORY}", "--JudgeExercises.max_tasks=128",
          "--JudgeExercises.output_mb=4", "--JudgeExercises.tmpfs_mb=16",
          "--JudgeExercises.timeout=20", "--JudgeExercises.budget_seconds=60",
          f"--BoundedExecute.memory_mb={MEMORY}", "--BoundedExecute.max_tasks=128",
          "--BoundedExecute.disk_mb=16", "--BoundedExecute.tmpfs_mb=16",
          "--BoundedExecute.output_hard_mb=8", "--BoundedExecute.cell_output_kb=256",
          "--BoundedExecute.notebook_output_kb=1024"]


def only(where: str, body: str) -> str:
    """``body`` run only in the kernel (``where="kernel"``) or only in the judge's child."""
    test = "_in_kernel" if where == "kernel" else "not _in_kernel"
    indented = "".join("    " + line + "\n" for line in body.strip().splitlines())
    return ("import os, time\ntry:\n    get_ipython()\n    _in_kernel = True\n"
            "except NameError:\n    _in_kernel = False\n"
            f"if {test}:\n{indented}")


FLOOD = "while True:\n    os.write(1, b'x' * 65536)"
# 40 MiB, each piece sent on its own, past the kernel's 8 MiB read in all (issue 29 item 4).
PRINT_FLOOD = "for _ in range(400):\n    print('x' * 100_000, flush=True)"
MEMORY_BOMB = "hold = []\nwhile True:\n    hold.append(b'x' * (64 << 20))"
FORK_BOMB = "while True:\n    try:\n        os.fork()\n    except OSError:\n        pass"
# A judge's child may start no process (seccomp refuses a fork): its tasks are threads.
THREAD_BOMB = ("import threading\nwhile True:\n    try:\n        threading.Thread(target=time.sleep, "
               "args=(600,), daemon=True).start()\n    except RuntimeError:\n        pass")
SLEEP = "time.sleep(3600)"
DISK_FILL = "i = 0\nwhile True:\n    open(f'fill-{i}', 'wb').write(b'x' * (1 << 20))\n    i += 1"
# Both sides; at most 64 MiB, and removed after, so that even unboxed it leaves nothing.
SHM_FILL = """\
import os
_wrote = 0
try:
    while _wrote < 64:
        with open(f"/dev/shm/inside-vmap-fill-{_wrote}", "wb") as _fh:
            _fh.write(b"x" * (1 << 20))
        _wrote += 1
except OSError:
    pass
print(f"SHM-WROTE {_wrote}")
for _i in range(_wrote + 1):
    try:
        os.remove(f"/dev/shm/inside-vmap-fill-{_i}")
    except OSError:
        pass
"""
# Prints the environment into the kernel's output (the autograded notebook, the feedback) and,
# in the judge, answers with it, so the verdict quotes it.
ENVIRON = """\
import os
print(dict(os.environ))
def spy(*args, **kwargs):
    return repr(dict(os.environ))
"""


def solutions():
    return C.solutions(nbformat.read(SOURCE, as_version=4))


def points(without=()):
    source = nbformat.read(SOURCE, as_version=4)
    return sum(p for gid, p, _ in C.exercises_in(source) if gid not in without)


def build(released, attacks=None, after=""):
    """Every exercise solved, with ``attacks[answer cell id]`` put before that answer cell's code
    and ``after`` after the spy's own answer cell (the last one its exercise owns)."""
    attacks = attacks or {}
    source = nbformat.read(SOURCE, as_version=4)
    spy_answer = next(cells for gid, _, cells in C.exercises_in(source) if gid == "spy")[-1]
    nb, answers = nbformat.from_dict(released), solutions()
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("solution") and cell.cell_type == "code":
            cid = meta["grade_id"]
            cell.source = "\n".join(s for s in (attacks.get(cid, ""), answers[cid],
                                                after if cid == spy_answer else "") if s)
    return nb


def first_answer(grade_id: str) -> str:
    """The first answer cell of an exercise (an attack there costs that exercise alone)."""
    source = nbformat.read(SOURCE, as_version=4)
    return next(cells for gid, _, cells in C.exercises_in(source) if gid == grade_id)[0]


GRADED, FAILED, MANUAL = "graded", "failed", "needs manual grading"
FULL = points()
ANSWER_CELLS = [c for _, _, cells in C.exercises_in(nbformat.read(SOURCE, as_version=4))
                for c in cells]
KERNEL_OOM = f"the grading kernel used more than {MEMORY} MiB of memory"
# In the judge, one student's two exercises each run a different bomb: the first child dies,
# each exercise is judged again alone, and each bomb costs only its own exercise.
BOMBS = {"spy": (FLOOD, "printed more than 4 MiB"),
         "moments_rule": (MEMORY_BOMB, f"used more than {MEMORY} MiB of memory")}
# A judge's child starts no process, and the first thread it starts sends what is observed from
# then on to a human (the task limit under it: tests/judge/test_zygote.py): a thread bomb costs
# the submission its automatic score, and the rest of the batch nothing.
TASKS = ("stack2_rule", "it started a thread")


def students(released):
    """``{student: (notebook, (lowest, highest) score or None, status, reason)}``: a kernel's
    limit is the failed submission's reason; a judge's limit is in the verdicts, by exercise."""
    kernel_memory = (None, FAILED, KERNEL_OOM) if sandbox.cgroups() else \
        ((FULL, FULL), GRADED, "")
    bombs = {first_answer(g): only("judge", code) for g, (code, _) in BOMBS.items()}
    no_bombs = points(without=BOMBS)
    return {
        "a-honest": (build(released), (FULL, FULL), GRADED, {}),
        "judge-bombs": (build(released, bombs), (no_bombs, no_bombs), GRADED,
                        {g: why for g, (_, why) in BOMBS.items()}),
        # The first child sleeps to its limit in the spy's cell: the spy fails at once (it had
        # the time), the rest are judged together in one more child and keep their points.
        "judge-threads": (build(released, {first_answer(TASKS[0]): only("judge", THREAD_BOMB)}),
                          (0, 0), MANUAL, {TASKS[0]: (TASKS[1],)}),
        "judge-sleep": (build(released, {first_answer("spy"): only("judge", SLEEP)}),
                        (points(without=("spy",)),) * 2, GRADED,
                        {"spy": ("timed out after 20 s",)}),
        # Sleeping just under each cell's timeout in the kernel: the submission's one budget
        # (60 s here, its kernel and judge together) stops it where it runs out.
        "kernel-sleeps": (build(released, {cell: only("kernel", "time.sleep(19)")
                                           for cell in ANSWER_CELLS}), None, FAILED,
                          "timed out in "),
        # The kernel's flood is cut and the judge, re-running the answers, grades them.
        "kernel-flood": (build(released, {first_answer("spy"): only("kernel", PRINT_FLOOD)}),
                         (FULL, FULL), GRADED, {}),
        "kernel-memory": (build(released, {first_answer("spy"): only("kernel", MEMORY_BOMB)}),)
        + kernel_memory,
        "kernel-forks": (build(released, {first_answer("spy"): only("kernel", FORK_BOMB)}), None,
                         FAILED, "the grading kernel started more than 128 processes or threads"),
        # Boxed, the submission's folder is read-only to the kernel: the fill fails at its first
        # write, and the student keeps what they solved; unboxed, the folder's quota stops it.
        "kernel-disk": (build(released, {first_answer("spy"): only("kernel", DISK_FILL)}),)
        + (((FULL, FULL), GRADED, {}) if sandbox.available() else
           (None, FAILED, "the grading kernel wrote more than 16 MiB into the submission's folder")),
        "shm-fill": (build(released, {first_answer("spy"): SHM_FILL}), (FULL, FULL), GRADED, {}),
        "environ": (build(released, after=ENVIRON), (points(without=("spy",)),) * 2, GRADED, {}),
        "z-honest": (build(released), (FULL, FULL), GRADED, {}),
    }


class PeakRSS(threading.Thread):
    """The peak resident set (VmHWM) of this process and of autograde's worker processes (its
    children running multiprocessing's spawn_main), read every 0.1 s while the batch runs."""

    def __init__(self):
        super().__init__(daemon=True)
        self.me, self.peaks, self.done = os.getpid(), {}, threading.Event()
        with open("/proc/self/clear_refs", "w") as fh:   # start from what is resident now
            fh.write("5")

    def run(self):
        while not self.done.wait(0.1):
            for pid in [self.me] + self._workers():
                self.peaks[pid] = max(self.peaks.get(pid, 0), _hwm(pid))

    def _workers(self):
        found = []
        for pid in watch.tree(self.me):
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as fh:
                    if b"spawn_main" in fh.read():
                        found.append(pid)
            except OSError:
                pass
        return found

    def stop(self):
        self.done.set()
        self.join()
        self.peaks[self.me] = max(self.peaks.get(self.me, 0), _hwm(self.me))


def _hwm(pid) -> int:
    try:
        with open(f"/proc/{pid}/status") as fh:
            return next(int(line.split()[1]) * 1024 for line in fh if line.startswith("VmHWM"))
    except (OSError, StopIteration):
        return 0


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    only_first = tmp_path_factory.mktemp("exercises")
    shutil.copytree(os.path.join(C.ROOT, "exercises", FIRST), only_first / FIRST)
    course = C.build_course(str(tmp_path_factory.mktemp("resources")), str(only_first))
    C.assign(course)
    released = nbformat.read(os.path.join(course.course, "release", FIRST, FIRST + ".ipynb"),
                             as_version=4)
    corpus = students(released)
    for student, (nb, *_) in corpus.items():
        C.nbgrader(["db", "student", "add", student], course.course)
        folder = os.path.join(course.course, "submitted", student, FIRST)
        os.makedirs(folder)
        nbformat.write(nb, os.path.join(folder, FIRST + ".ipynb"))
    secret = secrets.token_hex(16)
    os.environ[SECRET] = secret
    peak = PeakRSS()
    peak.start()
    start = time.monotonic()
    try:
        printed = C.autograde(course, timeout=20, extra=LIMITS)
    finally:
        peak.stop()
        del os.environ[SECRET]
    seconds = time.monotonic() - start
    C.nbgrader(["generate_feedback", FIRST, "--force"], course.course)
    rows = {row["student_id"]: row for row in C.export(course)}
    return course, corpus, rows, peak.peaks, secret, printed, seconds


def autograded(course, student):
    return os.path.join(course.course, "autograded", student, FIRST, FIRST + ".ipynb")


def verdict(course, student, grade_id) -> str:
    nb = nbformat.read(autograded(course, student), as_version=4)
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade_id") == grade_id and meta.get("grade"):
            return str(cell.outputs)
    raise AssertionError(f"no grade cell {grade_id}")


def test_each_student_gets_what_they_solved_and_each_limit_its_reason(batch):
    course, corpus, rows, *_ = batch
    for student, (_, score, status, reason) in corpus.items():
        row = rows[student]
        assert row["status"] == status, (student, row)
        if status == FAILED:                 # the kernel's limit: the submission's reason
            assert row["score"] == "" and row["reason"].startswith(reason), (student, row)
            continue
        assert score[0] <= float(row["score"]) <= score[1], (student, row)
        for grade_id, why in reason.items():   # the judge's limits: in those verdicts
            said = verdict(course, student, grade_id)
            assert any(w in said for w in ((why,) if isinstance(why, str) else why)), said


def test_an_exercise_stopped_for_time_is_named_in_the_export_and_the_line(batch):
    course, corpus, rows, _, _, printed, _ = batch
    assert "timed out in spy" in rows["judge-sleep"]["reason"], rows["judge-sleep"]
    assert rows["kernel-sleeps"]["reason"].startswith("timed out in "), rows["kernel-sleeps"]
    assert "the submission's 60 s (its kernel and the judge together) ran out" in \
        rows["kernel-sleeps"]["reason"]
    line = next(ln for ln in printed.splitlines() if "judge-sleep" in ln)
    assert "timed out in spy" in line, line


def test_the_trusted_processes_stay_small(batch):
    *_, peaks, _, printed, seconds = batch
    print(printed + f"resource batch: {seconds:.0f} s; peak RSS (MB) " +
          ", ".join(f"{p}: {v / 2 ** 20:.0f}" for p, v in peaks.items()))
    assert len(peaks) >= 2, "autograde's workers were never seen"   # this process + workers
    assert max(peaks.values()) < 10 ** 9, peaks


def test_every_autograded_notebook_stays_small(batch):
    course = batch[0]
    sizes = {p: os.path.getsize(p) for p in
             glob.glob(os.path.join(course.course, "autograded", "*", FIRST, "*.ipynb"))}
    assert len(sizes) >= 6 and max(sizes.values()) < 5 * 10 ** 6, sizes


def test_the_instructors_environment_never_reaches_a_student(batch):
    course, _, _, _, secret, *_ = batch
    written = glob.glob(os.path.join(course.course, "autograded", "*", FIRST, "*.ipynb")) + \
        glob.glob(os.path.join(course.course, "feedback", "*", FIRST, "*.html"))
    assert any("environ" in p for p in written)
    for path in written:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        assert secret not in text and SECRET not in text, path
    assert "'PATH'" in open(autograded(course, "environ"), encoding="utf-8").read()


def test_a_flood_s_notebook_holds_the_cut_note_and_little_else(batch):
    path = autograded(batch[0], "kernel-flood")
    printed = open(path, encoding="utf-8").read()
    assert printed.count("output cut after 8 MiB") == 1
    assert os.path.getsize(path) < 2 * 10 ** 6, os.path.getsize(path)


def test_tmpfs_in_the_boxes_is_sized(batch):
    if not sandbox.available():
        pytest.skip("bubblewrap is not available: the kernel's /dev/shm is the machine's")
    nb = nbformat.read(autograded(batch[0], "shm-fill"), as_version=4)
    printed = "".join(o.get("text", "") for c in nb.cells for o in c.get("outputs", []))
    assert "SHM-WROTE 16" in printed, printed[-500:]


def test_nothing_is_left_behind(batch):
    course = batch[0]
    pool.close_all()               # this process's own zygote (tests judging in-process) goes
    for pid in watch.tree(os.getpid()):                     # no kernel, child or worker
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            seen = fh.read()
        assert pid == os.getpid() or not any(
            word in seen for word in (b"ipykernel", b"confine.py", b"bwrap", b"spawn_main")), seen
    assert not glob.glob("/dev/shm/inside-vmap-fill-*")
    assert not glob.glob(os.path.join(course.course, "**", "fill-*"), recursive=True)
    pids = set(batch[3])
    leftovers = [d for d in glob.glob(os.path.join(cgroup.ROOT, "**", "inside-vmap-*"),
                                      recursive=True)
                 if int(os.path.basename(d).rsplit("-", 2)[-2]) in pids]
    assert not leftovers
