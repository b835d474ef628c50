"""A child forked from the zygote is boxed as a child of its own box is, and leaves nothing for
the next: each attack is an answer cell that reports what it reached by raising (the child
sends every cell's error back), run through the same entry point the judge uses."""
import json
import os
import signal
import subprocess

import pytest

from grader.judge import cgroup, forked, pool, sandbox, session
from grader.judge.box import zygote
from tests.fixtures.attacks import ESCALATIONS
from tests.fixtures.kernelspec import installed

pytestmark = pytest.mark.skipif(not sandbox.available(), reason="bubblewrap is not available")

SMALL = sandbox.Limits(wall_s=20, cpu_s=10, memory_mb=512, tasks=64, output_mb=2, answer_mb=1,
                       tmpfs_mb=8)


def cells_run(*sources, limits=SMALL, forked_=True) -> tuple[list[str], str | None]:
    """The cells' errors (what each reported) and the child's failure, if any."""
    talk = session.Session([{"kind": "answer", "name": f"c{i}", "source": s}
                            for i, s in enumerate(sources)], {}, None, 1 << 16)
    out = forked.judge_child("", limits, True, forked=forked_, talk=talk)
    if out.failure is not None:
        return [], out.failure
    assert talk.said_bye
    return talk.cell_errors, None


def report(expr: str) -> str:
    return f"raise RuntimeError('REPORT ' + repr({expr}))"


def reported(errors: list[str]) -> list[str]:
    return [e.split("REPORT ", 1)[1] for e in errors if "REPORT " in e]


def observed(*sources, **kw):
    """The one value the cells reported, with no failure of the child."""
    errors, failure = cells_run(*sources, **kw)
    assert failure is None, failure
    (seen,) = reported(errors)
    return eval(seen)


@pytest.fixture
def zygote_pid():
    """The pid of the zygote that serves this thread, started now if there is none."""
    cells_run("pass")
    assert pool.broken() is None, pool.broken()
    (z,) = [z for zs in pool._IDLE.values() for z in zs if z.alive()][:1]
    return z.proc.pid


def test_a_child_has_a_fresh_tmp_and_shm_and_finds_nothing_of_the_last_one(zygote_pid):
    errors, failure = cells_run(
        "open('/tmp/left-by-a', 'w').write('a'); open('/dev/shm/left-by-a', 'w').write('a')",
        report("'written'"))
    assert failure is None and reported(errors) == ["'written'"]
    errors, _ = cells_run(report("sorted(os.listdir('/tmp')) + sorted(os.listdir('/dev/shm'))")
                          .replace("raise", "import os\nraise"))
    (seen,) = reported(errors)
    assert "left-by-a" not in seen
    assert os.path.basename(sandbox.kits()) in seen    # the kit tree, bound again under /tmp


def test_what_was_bound_under_tmp_stays_readable_and_read_only(zygote_pid):
    kit = os.path.join(sandbox.kits(), "grader")
    errors, failure = cells_run(
        f"import os\nassert os.path.exists({os.path.join(kit, 'wire.py')!r})",
        f"open({os.path.join(kit, 'planted.py')!r}, 'w')")
    assert failure is None
    assert len(errors) == 1 and "Read-only file system" in errors[0], errors


def test_nothing_the_children_share_is_writable(zygote_pid):
    rw, wrote = observed(
        "import os\nrw, wrote = [], []\nfor line in open('/proc/self/mountinfo'):\n"
        "    f = line.split()\n    if 'rw' in f[5].split(','):\n        rw.append(f[4])\n"
        "for d in ('/', '/etc', '/inside-vmap-stage', '/usr', '/dev'):\n    try:\n"
        "        open(os.path.join(d, 'left-here'), 'w').close()\n        wrote.append(d)\n"
        "    except OSError:\n        pass\n"
        "try:\n    os.rmdir('/inside-vmap-stage')\n    wrote.append('rmdir')\n"
        "except OSError:\n    pass\n" + report("(rw, wrote)"))
    assert wrote == []
    # Its own /tmp and /dev/shm, /proc (its /sys is bubblewrap's read-only), device nodes.
    assert all(p in ("/tmp", "/dev/shm", "/proc") or p.startswith("/dev/") for p in rw), rw


def test_a_child_holds_no_capability_and_cannot_uncover_the_zygotes_tmp(zygote_pid):
    caps, gone = observed(
        "import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"
        "caps = [l.split()[1] for l in open('/proc/self/status') if l.startswith('Cap')]\n"
        "gone = libc.umount2(b'/tmp', 2) == 0\n" + report("(caps, gone)"))
    assert set(caps) == {"0000000000000000"} and not gone


@pytest.mark.parametrize("fork", [True, False], ids=["forked", "own box"])
def test_no_way_out_of_a_judge_child_works(fork):
    escaped = observed(ESCALATIONS + report(f"escalations({sandbox.kits()!r})"), forked_=fork)
    assert set(escaped) == {"capability", "user namespace", "cgroupfs", "remount", "ptrace",
                            "root writable", "sibling"}
    assert not any(escaped.values()), escaped


def test_a_child_holds_only_its_own_pipes(zygote_pid):
    found = observed(
        "import os\nfound = {}\nfor fd in os.listdir('/proc/self/fd'):\n    try:\n"
        "        found[int(fd)] = os.readlink(f'/proc/self/fd/{fd}').split(':')[0]\n"
        "    except OSError:\n        pass\n" + report("found"))
    assert [found[fd] for fd in range(4)] == ["pipe"] * 4      # stdin, stdout, stderr, answer
    assert "socket" not in found.values()                    # not the zygote's control socket


def test_a_child_can_neither_read_nor_signal_the_zygote(zygote_pid):
    errors, failure = cells_run(
        "import os, signal\nme = os.readlink('/proc/self')\nread, signalled = [], []\n"
        "for pid in [p for p in os.listdir('/proc') if p.isdigit() and p != me]:\n"
        "    for name in ('environ', 'mem', 'cwd'):\n"
        "        try:\n"
        "            os.listdir(f'/proc/{pid}/cwd') if name == 'cwd' else "
        "open(f'/proc/{pid}/{name}', 'rb').read(1)\n"
        "            read.append((pid, name))\n"
        "        except OSError:\n"
        "            pass\n"
        "for pid in range(2, 64):\n"
        "    try:\n"
        "        os.kill(pid, signal.SIGKILL)\n"
        "        signalled.append(pid)\n"
        "    except OSError:\n"
        "        pass\n"
        "try:\n    os.kill(-1, signal.SIGKILL)\nexcept OSError:\n    pass\n"
        + report("(read, signalled)"))
    assert failure is None, failure
    (seen,) = reported(errors)
    read, signalled = eval(seen)
    assert read == [] and signalled == []
    cells_run("pass")
    (z,) = [z for zs in pool._IDLE.values() for z in zs if z.alive()][:1]
    assert z.proc.pid == zygote_pid                                  # the same, unharmed


def test_a_child_starts_no_process_and_none_outlives_it(zygote_pid):
    mark = f"inside-vmap-outlive-{os.getpid()}"
    errors, failure = cells_run(
        "import subprocess, sys\ntry:\n"
        f"    subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)', {mark!r}],"
        " start_new_session=True)\n    started = 'started'\nexcept PermissionError:\n"
        "    started = 'refused'\n" + report("started"))
    assert failure is None and reported(errors) == ["'refused'"]
    left = subprocess.run(["pgrep", "-f", mark], capture_output=True, text=True).stdout.split()
    assert left == []


@pytest.mark.parametrize("code, reason", [
    ("hold = []\nwhile True:\n    hold.append(b'x' * (16 << 20))", "memory"),
    ("while True:\n    pass", "CPU time"),
    ("import os\nwhile True:\n    os.write(2, b'x' * 65536)", "printed more than"),
    ("import threading, time\nwhile True:\n    try:\n"
     "        threading.Thread(target=time.sleep, args=(60,), daemon=True).start()\n"
     "    except RuntimeError:\n        pass", "processes or threads"),   # (a child forks none)
    ("import time\ntime.sleep(600)", "timed out"),
])
def test_each_limit_holds_for_a_forked_child_and_the_zygote_serves_on(zygote_pid, code, reason):
    # Wall time to spare except where the wall clock is the limit under test: on a loaded machine
    # 3 s of CPU took more than 8 s of wall time, and the run said "timed out".
    limits = sandbox.Limits(wall_s=8 if reason == "timed out" else 60, cpu_s=3, memory_mb=512,
                            tasks=64, output_mb=2, answer_mb=1, tmpfs_mb=8)
    _, failure = cells_run(code, limits=limits)
    assert failure is not None and reason in failure, failure
    errors, failure = cells_run(report("'next'"))
    assert failure is None and reported(errors) == ["'next'"]
    assert not [g for g in _our_groups()]


def _our_groups() -> list[str]:
    mine = f"inside-vmap-{os.getpid()}-"
    top = os.path.join(cgroup.ROOT, "pids")
    return [d for d in (os.listdir(top) if os.path.isdir(top) else []) if d.startswith(mine)]


def test_a_child_ends_as_sys_exit_says(zygote_pid):
    _, failure = cells_run("import sys\nsys.exit(3)")
    assert failure is not None and failure.startswith("exited with status 3"), failure
    _, failure = cells_run("import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)")
    assert failure is None or "signal" in failure     # pid 1 ignores what it has no handler for


def test_without_a_zygote_the_child_gets_a_box_of_its_own(monkeypatch):
    def refuse(*args):
        raise pool.ZygoteFailed("refused for the test")
    monkeypatch.setattr(pool, "Zygote", refuse)
    monkeypatch.setattr(pool, "_IDLE", {})
    monkeypatch.setattr(pool, "_BROKEN", {})
    errors, failure = cells_run("import os\n" + report("os.getpid() != 1"))
    assert failure is None and reported(errors) == ["True"]     # bubblewrap's pid 2, not 1
    assert pool.broken() == "refused for the test"


def test_a_dead_zygote_is_replaced(zygote_pid):
    os.kill(zygote_pid, signal.SIGKILL)
    errors, failure = cells_run(report("'after'"))
    assert failure is None and reported(errors) == ["'after'"]
    pids = [z.proc.pid for zs in pool._IDLE.values() for z in zs if z.alive()]
    assert pids and zygote_pid not in pids


def test_a_zygote_of_another_run_is_stopped_not_kept(zygote_pid):
    other = sandbox.Limits(wall_s=20, cpu_s=10, memory_mb=512, tasks=64, output_mb=2,
                           answer_mb=1, tmpfs_mb=16)           # another key, as another run's
    errors, failure = cells_run(report("'other'"), limits=other)
    assert failure is None and reported(errors) == ["'other'"]
    assert subprocess.run(["kill", "-0", str(zygote_pid)], capture_output=True).returncode != 0


def test_a_child_whose_set_up_failed_retires_its_zygote(zygote_pid):
    """Exit status 71 is a child's own set-up failing before any cell (the zygote may be what is
    broken): the child runs again in a fresh zygote. An answer exiting 71 costs itself that."""
    _, failure = cells_run(f"import sys\nsys.exit({zygote.SETUP_FAILED})")
    assert failure is not None and failure.startswith(f"exited with status {zygote.SETUP_FAILED}")
    pids = [z.proc.pid for zs in pool._IDLE.values() for z in zs if z.alive()]
    assert pids and zygote_pid not in pids
    errors, failure = cells_run(report("'then'"))
    assert failure is None and reported(errors) == ["'then'"]


# ---- grading kernels forked from a zygote of their own ---------------------------------------
needs_kernel = pytest.mark.skipif(not (installed() and sandbox.cgroups()), reason=(
    "needs the inside-vmap-sandboxed kernelspec (make setup) and a cgroup per kernel (root, or "
    "a delegated cgroup v2): kernels are forked only into one"))


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """A course's ``autograded/`` with two students' folders, and a socket folder for kernels."""
    base = tmp_path_factory.mktemp("kernels")
    for student in ("s1", "s2"):
        (base / "autograded" / student / "a1").mkdir(parents=True)
        (base / "autograded" / student / "a1" / "a1.ipynb").write_text(f"{student}'s answers")
    (base / "sockets").mkdir()
    return base


def kernel_run(course, *cells, student="s1", fork=True, **execute):
    """Each cell's printed text (or error) after BoundedExecute ran them in ``student``'s folder."""
    import nbformat
    from traitlets.config import Config

    from grader.judge import execute as ex
    from grader.judge import kernel
    c = Config()
    c.KernelManager.transport, c.KernelManager.ip = "ipc", str(course / "sockets" / "kernel")
    c.Execute.timeout = 30
    c.Execute.extra_arguments = ["--IPKernelApp.log_level=ERROR"]
    c.BoundedExecute.fork_kernels = fork
    for name, value in execute.items():
        setattr(c.Execute, name, value)
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in cells])
    folder = course / "autograded" / student / "a1"
    out, _ = ex.BoundedExecute(config=c, kernel_name=kernel.NAME).preprocess(
        nb, {"metadata": {"path": str(folder)}})
    return ["".join(o.get("text", "") or f"{o.get('ename')}: {o.get('evalue')}"
                    for o in cell.outputs) for cell in out.cells]


FORKED = "import os, sys\nprint('jax' in sys.modules and 'ipykernel' in sys.modules)"


def _kernel_zygotes() -> list[int]:
    return [z.proc.pid for k, zs in pool._IDLE.items() if k[0] == "kernel" for z in zs
            if z.alive()]


@needs_kernel
def test_a_forked_kernel_sees_its_own_folder_and_sockets_only(course):
    seen = kernel_run(course, FORKED, "print(sorted(os.listdir('../..')), os.listdir('..'), "
                                      "sorted(os.listdir('.')), open('a1.ipynb').read())",
                      f"print(os.listdir({str(course / 'sockets')!r}))",
                      "open('planted', 'w')")
    assert seen[0] == "True\n", "not forked: " + seen[0]
    assert seen[1] == "['s1'] ['a1'] ['a1.ipynb'] s1's answers\n"
    (own,) = eval(seen[2])                      # its own socket folder, no other kernel's
    assert own.startswith("k-")
    assert "Read-only file system" in seen[3]
    assert sorted(os.listdir(course / "sockets")) == []      # removed once the kernel ended
    assert kernel_run(course, "print(open('a1.ipynb').read())", student="s2") == [
        "s2's answers\n"]


@needs_kernel
def test_no_way_out_of_a_forked_kernel_works(course):
    from tests.fixtures.attacks import ESCALATIONS
    seen = kernel_run(course, FORKED, ESCALATIONS + f"print(escalations({sandbox.kits()!r}))")
    assert seen[0] == "True\n"
    escaped = eval(seen[1])
    assert set(escaped) == {"capability", "user namespace", "cgroupfs", "remount", "ptrace",
                            "root writable", "sibling"}
    assert not any(escaped.values()), escaped


@needs_kernel
def test_nothing_a_forked_kernel_starts_outlives_it(course):
    mark = f"inside-vmap-kernel-outlive-{os.getpid()}"
    seen = kernel_run(course, FORKED, "import subprocess\n"
                      f"subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)', "
                      f"{mark!r}], start_new_session=True)\nprint('started')")
    assert seen == ["True\n", "started\n"]
    assert subprocess.run(["pgrep", "-f", mark], capture_output=True).stdout.split() == []


@needs_kernel
@pytest.mark.parametrize("harm, replaced", [
    ("os.kill(os.getppid(), signal.SIGKILL)", True),
    ("os.kill(os.getppid(), signal.SIGSTOP)", True),
    ("os.kill(-1, signal.SIGKILL)", True),
    ("os.killpg(0, signal.SIGKILL)", False),          # its own process group only
    ("resource.prlimit(os.getppid(), resource.RLIMIT_NOFILE, (16, 16))", True),
    ("os.setpriority(os.PRIO_PROCESS, os.getppid(), 19)", False),   # refused
    ("open(f'/proc/{os.getppid()}/oom_score_adj', 'w').write('1000')", True),
    ("open(f'/proc/{os.getppid()}/coredump_filter', 'w').write('0x7f')", True),
], ids=["kill", "stop", "kill all", "kill group", "rlimit", "nice", "oom score", "core dump"])
def test_what_a_kernel_does_to_its_zygote_costs_only_itself(course, harm, replaced):
    """A kernel shares its zygote's pid namespace, so it can name it: a zygote found dead,
    stopped or changed is replaced before it forks the next kernel, which is graded as usual."""
    kernel_run(course, FORKED)
    before = _kernel_zygotes()
    try:
        kernel_run(course, "import os, resource, signal\n" + harm, "print('after')")
    except Exception:
        pass                                   # this submission may fail: it is its own doing
    assert kernel_run(course, FORKED, "print(open('a1.ipynb').read())", student="s2") == [
        "True\n", "s2's answers\n"]
    assert bool(set(before) - set(_kernel_zygotes())) == replaced


@needs_kernel
def test_an_interrupt_reaches_a_forked_kernel(course):
    seen = kernel_run(course, FORKED, "import time\ntime.sleep(60)", "print('went on')",
                      timeout=3, interrupt_on_timeout=True)
    assert seen[0] == "True\n" and "KeyboardInterrupt" in seen[1] and seen[2] == "went on\n"


@needs_kernel
def test_without_a_cgroup_or_when_told_a_kernel_gets_a_box_of_its_own(course, monkeypatch):
    assert kernel_run(course, FORKED, fork=False)[0] == "False\n"
    monkeypatch.setattr(sandbox, "cgroups", lambda: False)
    assert kernel_run(course, FORKED)[0] == "False\n"


@needs_kernel
def test_nothing_that_names_a_student_passes_through_the_zygote(course, monkeypatch):
    """A forked kernel starts as a copy of its zygote's memory: what names a student (its
    folders, its connection and key) goes to the kernel's stdin, never through the zygote (the
    fifth red-team round found an earlier student's folder in a later kernel's memory)."""
    sent, real = [], pool.socket.send_fds

    def recording(sock, buffers, fds, *args):
        sent.extend(buffers)
        return real(sock, buffers, fds, *args)
    monkeypatch.setattr(pool.socket, "send_fds", recording)
    assert kernel_run(course, FORKED, student="s2") == ["True\n"]
    assert sent
    for message in sent:
        assert b"autograded" not in message and b"sockets" not in message, message
        assert set(json.loads(message)) == {"op", "rlimits", "tmpfs_mb"}
