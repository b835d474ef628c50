"""`make bench`'s distributed column (tools/bench/cluster.py) end to end on one
student: a fresh `dask scheduler` and worker, the run timed from its own closing line, its
scores and feedback compared with a local run's, on the first assignment (the column's code is what
is tested; every assignment's grading is tests/pipeline/test_class.py's). No timing is asserted."""
import os
import secrets

import pytest

from tools import classroom as C
from tools.bench import cluster as bench_cluster
from tools.bench import runs

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")]


def test_one_worker_s_throughput_is_measured_on_a_class_graded_as_locally(tmp_path):
    first = C.assignments(os.path.join(C.ROOT, "exercises"))[0]
    paths = runs.build(str(tmp_path / "class"), 1, C.some_exercises(str(tmp_path), [first]))
    seed = secrets.randbelow(2 ** 63)
    runs.run_course(paths, 1, seed)
    local = runs.results(paths)
    lines = []
    found = bench_cluster.measure(paths, seed, local, counts=(1,), echo=lines.append)
    n = len(C.assignments(paths.exercises))         # one student: one submission per assignment
    assert set(found) == {1} and found[1]["submissions"] == n, lines
    assert found[1]["same"] and found[1]["per_minute"] > 0 and found[1]["setup_s"] >= 0, lines
    assert lines[0].startswith(f"bench: 1 Dask worker(s): {n} submissions graded in "), lines
