"""The judge re-grades answers outside the kernel and survives answers that crash, hang or cheat."""
import pathlib

import nbformat
import pytest

from grader.judge import runner, sandbox

ROOT = pathlib.Path(__file__).resolve().parents[2]
SOURCE = ROOT / "exercises" / "01-the-rule-per-primitive" / "01-the-rule-per-primitive.ipynb"
FAST = sandbox.Limits(wall_s=30, cpu_s=60, memory_mb=4096)

pytestmark = pytest.mark.skipif(not SOURCE.exists(), reason="lesson 1 exercises not present")


def answers(nb):
    return [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution")
            and c.cell_type == "code"]


def replace_answer(nb, defines, new_source):
    """Replace the answer cell that defines ``defines`` with ``new_source``."""
    for cell in answers(nb):
        if f"def {defines}" in cell.source or f"{defines} =" in cell.source:
            cell.source = new_source
            return nb
    raise AssertionError(f"no answer cell defines {defines}")


@pytest.fixture
def solved():
    return nbformat.read(SOURCE, as_version=4)


def test_the_instructor_solution_passes_everything(solved):
    verdicts = runner.judge(solved, FAST)
    assert verdicts and all(r.passed for r in verdicts.values()), {
        g: r.summary() for g, r in verdicts.items() if not r.passed}


def test_an_answer_that_kills_its_process_costs_only_its_exercise(solved):
    replace_answer(solved, "spy", "import os\nos._exit(1)")
    verdicts = runner.judge(solved, FAST)
    assert not verdicts["spy"].passed
    assert "exited" in verdicts["spy"].findings[0].got or "status" in verdicts["spy"].findings[0].got
    assert all(r.passed for g, r in verdicts.items() if g != "spy")


def test_an_answer_that_hangs_ignoring_sigint_times_out_alone(solved):
    replace_answer(solved, "spy", "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n"
                                  "while True:\n    pass")
    verdicts = runner.judge(solved, sandbox.Limits(wall_s=8, cpu_s=60, memory_mb=4096))
    assert not verdicts["spy"].passed and "timed out" in verdicts["spy"].findings[0].got
    assert verdicts["which_table"].passed


def test_patching_the_grader_inside_the_child_earns_nothing(solved):
    cheat = ("import grader.exercise as E\n"
             "E.Exercise.verdict = lambda self, cases, observed: None\n"
             "import grader.rule_per_primitive as L1\n"
             "for ex in L1.EXERCISES.values():\n"
             "    object.__setattr__(ex, 'compare', lambda *a: None)\n"
             "def spy(f, in_axes, *args):\n    return 'anything'\n")
    replace_answer(solved, "spy", cheat)
    verdicts = runner.judge(solved, FAST)
    assert not verdicts["spy"].passed


def test_missing_names_are_reported_by_name(solved):
    replace_answer(solved, "spy", "pass")
    finding = runner.judge(solved, FAST)["spy"].findings[0]
    assert "spy" in finding.expected and finding.got == "not defined"


@pytest.mark.skipif(not sandbox.available(), reason="bubblewrap not available")
def test_the_sandbox_hides_the_course_and_the_network():
    probe = ("import os, socket, json\n"
             f"seen = os.path.exists({str(ROOT / 'exercises')!r})\n"
             "try:\n    socket.create_connection(('127.0.0.1', 22), timeout=1); net = True\n"
             "except OSError:\n    net = False\n"
             "print(json.dumps([seen, net]))\n")
    out = sandbox.run("this_module_does_not_exist", "", FAST)
    assert out.failure  # a child that fails is reported, not raised
    import subprocess, sys
    proc = subprocess.run(sandbox.bwrap_prefix() + [sys.executable, "-c", probe],
                          capture_output=True, text=True, env=sandbox.child_env(), timeout=60)
    assert proc.stdout.strip() == "[false, false]"
