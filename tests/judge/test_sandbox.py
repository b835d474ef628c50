"""Every limit of a judge child holds, by cgroup and by rlimits, boxed and not: each attack is a
few lines of ``python -c`` run in the box the judge uses, so no lesson module is involved."""
import os
import sys

import pytest

from grader.judge import cgroup, sandbox
from grader.judge.sandbox import End

SMALL = sandbox.Limits(wall_s=20, cpu_s=3, memory_mb=256, tasks=64, output_mb=2, answer_mb=1,
                       tmpfs_mb=8)
ANSWER = "import os\nanswer = lambda text: os.write(int(os.environ['INSIDE_VMAP_ANSWER_FD']), " \
         "str(text).encode())\n"

FLOOD = "import os\nwhile True:\n    os.write(1, b'x' * 65536)\n"
MEMORY = "hold = []\nwhile True:\n    hold.append(b'x' * (16 << 20))\n"
# Each process stays well under the limit; only a count of all of them catches this.
MEMORY_IN_FORKS = ("import os, time\nfor _ in range(8):\n    if os.fork() == 0:\n"
                   "        hold = b'x' * (64 << 20)\n        time.sleep(60)\ntime.sleep(60)\n")
FORKS = "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n"
SPIN = "while True:\n    pass\n"
SLEEP = "import time\ntime.sleep(600)\n"


def child(code, limits=SMALL, **kw):
    return sandbox.run_argv([sys.executable, "-c", code], "", limits, **kw)


@pytest.fixture(params=["cgroup", "rlimits"])
def mechanism(request, monkeypatch):
    """Each test once with a cgroup per child (where one can be made) and once without."""
    if request.param == "cgroup" and not sandbox.cgroups():
        pytest.skip("no cgroup can be made here (not root, or no delegated cgroup v2)")
    if request.param == "rlimits":
        monkeypatch.setattr(sandbox, "cgroups", lambda: False)
    return request.param


@pytest.fixture(params=[True, False], ids=["boxed", "unboxed"])
def boxed(request):
    if request.param and not sandbox.available():
        pytest.skip("bubblewrap is not available")
    return request.param


def leftovers() -> list[str]:
    mine = f"inside-vmap-{os.getpid()}-"
    return [os.path.join(d, n) for c in ("memory", "pids", "cpuacct", "")
            for d in [os.path.join(cgroup.ROOT, c)] if os.path.isdir(d)
            for n in _walk_names(d) if os.path.basename(n).startswith(mine)]


def _walk_names(top):
    for dirpath, dirs, _ in os.walk(top):
        yield from (os.path.join(dirpath, d) for d in dirs)


@pytest.mark.filterwarnings("ignore::grader.judge.sandbox.SandboxUnavailable")
class TestOneChild:
    def test_the_answer_has_its_own_pipe(self, boxed, mechanism):
        out = child(ANSWER + "print('noise' * 100)\nanswer('hello')\n", use_bwrap=boxed)
        assert (out.answer, out.kind, out.failure) == ("hello", End.OK, None)

    def test_printing_without_end_is_killed_at_the_cap(self, boxed, mechanism):
        out = child(FLOOD, use_bwrap=boxed)
        assert (out.kind, out.failure, out.answer) == (End.OUTPUT, "printed more than 2 MiB", "")

    def test_an_answer_past_its_cap_is_refused(self, boxed, mechanism):
        out = child(ANSWER + "answer('x' * (3 << 20))\n", use_bwrap=boxed)
        assert (out.kind, out.failure) == (End.ANSWER, "answered with more than 1 MiB")

    def test_a_memory_bomb_is_stopped(self, boxed, mechanism):
        out = child(MEMORY, use_bwrap=boxed)
        assert (out.kind, out.failure) == (End.MEMORY, "used more than 256 MiB of memory")

    def test_memory_spread_over_processes_counts_together(self, boxed):
        if not sandbox.cgroups():
            pytest.skip("only a cgroup counts memory across processes (rlimits are per process)")
        assert child(MEMORY_IN_FORKS, use_bwrap=boxed).failure == \
            "used more than 256 MiB of memory"
        assert not leftovers()

    def test_a_fork_bomb_is_stopped_and_nothing_survives(self, boxed, mechanism):
        out = child(FORKS, use_bwrap=boxed)
        assert (out.kind, out.failure) == (End.TASKS, "started more than 64 processes or threads")
        assert not leftovers()

    def test_cpu_time_is_limited(self, boxed, mechanism):
        limits = sandbox.Limits(wall_s=20, cpu_s=1, memory_mb=256, tasks=64)
        out = child(SPIN, limits, use_bwrap=boxed)
        assert (out.kind, out.failure) == (End.CPU, "used more than 1 s of CPU time")

    def test_the_environment_is_allow_listed(self, boxed, monkeypatch):
        monkeypatch.setenv("INSIDE_VMAP_SECRET", "do-not-show")
        out = child(ANSWER + "answer(repr(dict(os.environ)))\n", use_bwrap=boxed)
        assert "INSIDE_VMAP_SECRET" not in out.answer and "do-not-show" not in out.answer
        assert "PATH" in out.answer


def test_every_tmpfs_is_sized():
    if not sandbox.available():
        pytest.skip("bubblewrap is not available")
    fill = ANSWER + ("written = {}\nfor folder in ('/dev/shm', '/tmp', '/dev'):\n"
                     "    written[folder] = 0\n    try:\n        for i in range(8):\n"
                     "            with open(f'{folder}/f{i}', 'wb') as fh:\n"
                     "                fh.write(b'x' * (3 << 20))\n"
                     "            written[folder] += 3\n    except OSError:\n        pass\n"
                     "answer(written)\n")
    out = child(fill)
    assert out.failure is None
    assert eval(out.answer) == {"/dev/shm": 6, "/tmp": 6, "/dev": 0}   # 8 MiB each; /dev read-only


def test_a_sleep_times_out():
    out = child(SLEEP, sandbox.Limits(wall_s=2, cpu_s=3, memory_mb=256))
    assert (out.kind, out.failure) == (End.TIMED_OUT, "timed out after 2 s")


def test_one_budget_spans_every_child_of_a_submission():
    budget = sandbox.Budget(3)
    limits = sandbox.Limits(wall_s=2, cpu_s=30, memory_mb=256)
    assert child(SLEEP, limits, budget=budget).failure == "timed out after 2 s"
    second = child(SLEEP, limits, budget=budget)                          # 1 s was left
    assert (second.kind, second.failure) == (End.TIMED_OUT, budget.spent())
    assert budget.left() <= 0
    never = child("print('never runs')", limits, budget=budget)
    assert (never.kind, never.failure) == (End.TIMED_OUT, budget.spent())


def test_the_mechanism_is_named():
    assert ("cgroup" in sandbox.mechanism()) == sandbox.cgroups()
