"""`make bench` (grader/instructor/bench.py): its measuring code runs end to end on one student and
prints what the README quotes. No timing is asserted here; timings come from `make bench`."""
import pytest

from grader.instructor import bench

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")]


def test_bench_runs_on_one_student_and_ends_with_the_speedup(tmp_path):
    lines = []
    report = bench.bench(1, 1, 2, str(tmp_path), echo=lines.append, verify=True)
    out = "\n".join(lines)
    assert bench.LAST_LINE.match(lines[-1]), out
    assert report["speedup"] > 0
    for label in ("(a) bare nbclient execution", "(b) stock nbgrader autograde",
                  "(c) make autograde, --jobs 2", "judge child", "kernel start",
                  "same feedback (grade-cell outputs, byte for byte): yes",
                  "(c) --no-warm, no shared cache", "warm cache"):
        assert label in out, out
    assert report["identical_to_serial"], out
    # every visible check of every graded exercise was timed
    assert {"L1.check_spy", "L1.check_rowmax_rule"} <= set(report["checks"]), out
    assert len(report["checks"]) >= 10, out
