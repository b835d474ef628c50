"""The judge started ahead of the kernel gives the verdicts it gives after it, and a submission that
fails meanwhile leaves no judge running."""
import pathlib
import sys
import threading

import nbformat
import pytest
from traitlets.config import Config

from grader.judge import ahead, sandbox
from grader.judge.preprocessor import JudgeExercises

ROOT = pathlib.Path(__file__).resolve().parents[2]
FIRST = "01-the-rule-per-primitive"
SOURCE = ROOT / "exercises" / FIRST / f"{FIRST}.ipynb"
SLEEP = "import time\ntime.sleep(600)\n"
NAMES = {"assignment": FIRST, "notebook": FIRST}

pytestmark = pytest.mark.filterwarnings("ignore::grader.judge.sandbox.SandboxUnavailable")


def graded_outputs(nb) -> dict:
    return {c.metadata.nbgrader["grade_id"]: c.outputs for c in nb.cells
            if c.metadata.get("nbgrader", {}).get("grade")}


def test_verdicts_judged_ahead_are_those_judged_after():
    config = Config({"JudgeExercises": {"seed": 20261201}})
    resources = {"nbgrader": dict(NAMES)}
    nb = nbformat.read(SOURCE, as_version=4)
    nb, resources = ahead.JudgeAhead(config=config).preprocess(nb, resources)
    assert "judging" in resources["inside_vmap"]
    for cell in nb.cells:                 # what the kernel does meanwhile is not judged
        if cell.cell_type == "code":
            cell.outputs = []
    nb, resources = JudgeExercises(config=config).preprocess(nb, resources)
    assert "judging" not in resources["inside_vmap"]
    alone, _ = JudgeExercises(config=config).preprocess(nbformat.read(SOURCE, as_version=4),
                                                        {"nbgrader": dict(NAMES)})
    assert graded_outputs(nb) == graded_outputs(alone)
    assert all(o[0]["output_type"] == "stream" for o in graded_outputs(nb).values())


def test_off_it_leaves_the_judging_to_judge_exercises():
    config = Config({"JudgeAhead": {"enabled": False}})
    nb, resources = ahead.JudgeAhead(config=config).preprocess(
        nbformat.read(SOURCE, as_version=4), {"nbgrader": dict(NAMES)})
    assert "judging" not in resources.get("inside_vmap", {})


def test_a_cancelled_budget_kills_its_child_and_starts_no_other():
    budget = sandbox.Budget(900)
    limits = sandbox.Limits(wall_s=600, cpu_s=30, memory_mb=512)
    out = {}
    runner = threading.Thread(target=lambda: out.update(first=sandbox.run_argv(
        [sys.executable, "-c", SLEEP], "", limits, budget=budget)))
    runner.start()
    while budget._stop is None and runner.is_alive():   # until the child is running
        runner.join(0.05)
    budget.cancel()
    runner.join()                    # the sleeper was killed: it would sleep ten minutes
    assert out["first"].failure.startswith("cancelled")
    assert budget.left() == 0
    second = sandbox.run_argv([sys.executable, "-c", "print(1)"], "", limits, budget=budget)
    assert second.failure == budget.spent()        # never started


def test_cancel_pending_stops_a_judge_whose_submission_failed(monkeypatch):
    started = threading.Event()
    stopped = threading.Event()

    def slow_judge(self, nb, names, template, budget=None):
        budget.running(stopped.set)  # a child that runs until stopped
        started.set()
        stopped.wait(60)
        return template, {}
    monkeypatch.setattr(JudgeExercises, "judge", slow_judge)
    monkeypatch.setattr(JudgeExercises, "template", lambda self, names: None)
    _, resources = ahead.JudgeAhead().preprocess(nbformat.read(SOURCE, as_version=4),
                                                 {"nbgrader": dict(NAMES)})
    assert started.wait(60)
    assert ahead.cancel_pending() == 1     # the kernel failed: nobody reads these verdicts
    assert stopped.is_set()
    resources["inside_vmap"]["judging"].result(60)


def test_the_judge_ahead_and_the_kernel_draw_on_one_budget(monkeypatch):
    """The budget JudgeAhead starts with is the one in the submission's resources, where the
    kernel (BoundedExecute) and JudgeExercises find it: one clock per submission."""
    seen = []

    def judge(self, nb, names, template, budget=None):
        seen.append(budget)
        return template, {}
    monkeypatch.setattr(JudgeExercises, "judge", judge)
    monkeypatch.setattr(JudgeExercises, "template", lambda self, names: None)
    config = Config({"JudgeExercises": {"budget_seconds": 77}})
    _, resources = ahead.JudgeAhead(config=config).preprocess(
        nbformat.read(SOURCE, as_version=4), {"nbgrader": dict(NAMES)})
    resources["inside_vmap"]["judging"].result(60)
    budget = resources["inside_vmap"]["budget"]
    assert seen == [budget] and budget.seconds == 77
    assert sandbox.submission_budget(resources, 1) is budget
    # Without the judge ahead, JudgeExercises draws on the budget the kernel made.
    config = Config({"JudgeAhead": {"enabled": False}})
    made = {"nbgrader": dict(NAMES), "inside_vmap": {"budget": sandbox.Budget(5)}}
    JudgeExercises(config=config).preprocess(nbformat.read(SOURCE, as_version=4), made)
    assert seen[-1] is made["inside_vmap"]["budget"]
