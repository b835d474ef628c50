"""How autograde sizes a run (workers, warm-up), what every process of a run shares, and the one
function that grades a submission from any process."""
import os
import pathlib
import subprocess
import sys

import pytest

from grader.instructor import grading
from grader.instructor.autograde import AutogradeEach
from grader.instructor.warmup import no_warm_up

ROOT = pathlib.Path(__file__).resolve().parents[2]
CORES = os.cpu_count() or 1


def test_workers_are_started_only_where_their_start_up_pays():
    auto = AutogradeEach(jobs=0, per_worker=3)
    assert auto.jobs_for(1) == auto.jobs_for(2) == 1          # a regrade: this process, no worker
    assert auto.jobs_for(6) == min(2, CORES)
    assert auto.jobs_for(600) == CORES                      # never more than one per core
    assert AutogradeEach(jobs=5).jobs_for(1) == 5           # --jobs is obeyed as given


def test_the_warm_up_runs_only_where_it_can_pay():
    assert no_warm_up(True, True, {"a": 3, "b": 1}, 3) is None
    assert "warm_min" in no_warm_up(True, True, {"a": 2, "b": 2}, 3)
    assert no_warm_up(True, False, {"a": 40}, 3) == "--no-warm"
    assert no_warm_up(False, True, {"a": 40}, 3) == "the judge is off"


def test_every_process_of_a_run_gets_its_seed_its_cache_and_its_command_line():
    batch = AutogradeEach()
    batch.parse_command_line(["--Execute.timeout=20", "--jobs=4", "--force", "ps1"])
    cli = grading.RunSettings.command_line(batch)
    settings = grading.RunSettings(cli, 1234, "/run/cache")
    assert settings.overrides() == {"JudgeExercises": {"seed": 1234,
                                                       "compile_cache": "/run/cache"}}
    assert grading.RunSettings(seed=7).overrides() == {"JudgeExercises": {"seed": 7}}
    assert hash(settings) == hash(grading.RunSettings(cli, 1234, "/run/cache"))  # one app a run
    # A worker's Grader takes the batch's nbgrader options without parsing the batch's own.
    worker = grading.Grader()
    worker.update_config(settings.config())
    assert int(worker.config.Execute.timeout) == 20
    assert worker.config.JudgeExercises.seed == 1234
    assert not isinstance(worker, AutogradeEach) and not hasattr(worker, "jobs")


def test_autograde_never_builds_the_iri_grammar_and_still_reads_notebooks():
    code = ("import sys, grader.instructor.autograde, nbformat, jsonschema\n"
            "assert sys.modules['rfc3987_syntax'] is None\n"
            "assert 'iri' not in jsonschema.FormatChecker().checkers\n"
            f"nbformat.validate(nbformat.read({str(next(ROOT.glob('exercises/*/*.ipynb')))!r}, 4))\n")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")
def test_one_submission_is_graded_from_a_fresh_process(tmp_path):
    """What a Dask task would do: nothing of autograde's app but the course folder and the
    run's settings."""
    from tools import classroom as C
    from tools.bench import runs
    first = C.assignments(str(ROOT / "exercises"))[0]
    paths = runs.build(str(tmp_path), 1, C.some_exercises(str(tmp_path), [first]))   # the one graded
    code = ("import sys\nfrom grader.instructor.grading import RunSettings, grade_submission\n"
            f"r = grade_submission({paths.course!r}, {first!r}, 's000', RunSettings(seed=99))\n"
            "sys.exit(0 if r['success'] else r['log'] + r['error'])\n")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=str(tmp_path), env=runs.env())
    runs.full_marks(paths, "grade_submission")
    assert os.path.isdir(os.path.join(paths.course, "autograded", "s000", first))
