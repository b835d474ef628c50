"""`make bench` (tools/bench): its measuring code runs end to end on one
student and prints what docs/performance.md quotes. No timing is asserted here; timings come from
`make bench`. The run grades the first assignment only: what is measured is the bench's code, and
every assignment's grading is tests/pipeline/test_class.py's; the students' instant checks of
every assignment are timed on their own below."""
import os
import re
import types

import pytest

from tools import bench
from tools import classroom as C
from tools.bench import cluster, runs, steps

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")]
# The last line as docs/performance.md quotes it.
LAST_LINE = re.compile(r"^speedup vs stock nbgrader: N=\d+ \d+\.\d\d(, N=\d+ \d+\.\d\d)*$")


def test_bench_times_each_size_against_stock_and_ends_with_the_speedups(tmp_path):
    lines = []
    first = C.assignments(os.path.join(C.ROOT, "exercises"))[0]
    report = bench.bench(1, 1, 0, str(tmp_path), echo=lines.append, verify=True, sizes=(1,),
                         exercises=C.some_exercises(str(tmp_path), [first]))
    out = "\n".join(lines)
    assert LAST_LINE.match(lines[-1]), out
    assert lines[-1].startswith("speedup vs stock nbgrader: N=1 ")
    assert set(report["speedup"]) == {1} and all(x > 0 for x in report["speedup"].values())
    for label in ("stock nbgrader", "make autograde", "serial run (--jobs 1)",
                  "N=1: same scores and, byte for byte, the same grade-cell outputs (feedback) "
                  "as the serial run: yes", "without the warm-up (--no-warm)", "kernel start",
                  "judge (01-the-rule-per-primitive.ipynb), warm cache", "load "):
        assert label in out, out
    assert report["identical_to_serial"], out
    # the visible checks of the graded assignment were timed
    assert {"L1.check_spy", "L1.check_prefix_rule"} <= set(report["checks"]), out


def test_every_visible_check_of_every_assignment_is_timed():
    """What `make bench` prints last, for the whole of exercises/: every visible check of every
    graded exercise, a first call and the median of the later ones."""
    found = steps.check_latency(types.SimpleNamespace(exercises=os.path.join(C.ROOT, "exercises")))
    assert {"L1.check_spy", "L1.check_prefix_rule"} <= set(found), found
    assert len(found) >= 7, found
    assert {name.split(".")[0] for name in found} == {
        f"L{i + 1}" for i in range(len(C.assignments(os.path.join(C.ROOT, "exercises"))))}, found
    assert all(first > 0 and later > 0 for first, later in found.values()), found


def test_a_run_differing_from_the_serial_one_is_found():
    serial = {("score", "a", "s000", "g"): 1.0, ("outputs", "a", "s000", "g"): "ok",
              ("score", "a", "s001", "g"): 1.0, ("outputs", "a", "s001", "g"): "ok"}
    same = {("score", "a", s, "g"): 1.0 for s in ("s000", "s005")} | \
        {("outputs", "a", s, "g"): "ok" for s in ("s000", "s005")}
    assert runs.differences(same, serial) == []
    changed = same | {("outputs", "a", "s005", "g"): "other"}
    assert runs.differences(changed, serial) == [(("outputs", "a", "s005", "g"), "ok", "other")]
    lost = {k: v for k, v in same.items() if k[2] != "s005" or k[0] != "score"}
    assert runs.differences(lost, serial)[0][2] == "not graded"


def test_the_bench_column_gives_the_speedup_per_added_worker():
    lines = []
    cluster.table({1: {"submissions": 40, "grading_s": 160.0, "setup_s": 6.0,
                       "per_minute": 15.0, "same": True},
                   2: {"submissions": 40, "grading_s": 100.0, "setup_s": 6.0,
                       "per_minute": 24.0, "same": True}}, echo=lines.append)
    assert lines[-1] == "  1 -> 2 workers: throughput x1.60 (x1.60 per added worker)"
    assert any(line.split()[:2] == ["2", "40"] and line.endswith("yes") for line in lines)
