"""``python -m tools.bench [--n 16] [--sizes 1,8] [--repeat 1] [--jobs 0] [--cluster 1,2] [--keep DIR]``

How much faster the course grades than stock nbgrader, measured in one run on classes of fully
solved submissions built from the real assignments (every student hands in every assignment):
one student (N=1, two submissions: a regrade), N=8, and the class of ``--n`` students. For each
size, on the same submissions and each ``--repeat`` times (median):

* stock: ``nbgrader autograde A --force`` for every assignment with nbgrader's defaults (no course
  plugins, no judge, no sandbox), serial as nbgrader is;
* course: ``python -m grader.instructor autograde --force`` (``make autograde``) with the course's
  configuration and every integrity check on: the sandboxed, limited kernel, the judge, the
  status file; its own choice of workers and warm-up (``--jobs`` overrides the workers).

Then: whether every run gave the scores and, byte for byte, the grade-cell outputs (the feedback)
of a serial run (``--jobs 1``) on the same seed; the course once more without the warm compilation
cache (every simulated student hands in the instructor's solutions, the cache's best case); the
N=8 class on 1 and 2 Dask workers here (``--cluster``, `cluster`); where one submission's time
goes; and how long each visible check takes a student (`steps`). The load average is
printed beside every timing. The last line is
``speedup vs stock nbgrader: N=1 X.XX, N=8 X.XX, N=16 X.XX`` (stock's time over the course's).

Development tooling, not part of the installed ``grader`` package: it runs from a checkout
(``make bench``), on top of `tools.classroom`'s simulated class.
"""
from __future__ import annotations

import argparse
import os
import secrets
import shutil
import statistics
import tempfile

from tools import classroom as C

from . import runs as B
from .cluster import column
from .steps import breakdown, check_latency


# ---- the whole benchmark ----------------------------------------------------------------------
def bench(n: int, repeat: int, jobs: int, work: str, echo=print, verify: bool = True,
          checks: bool = True, sizes=(1, 8), cluster=(), exercises: str | None = None) -> dict:
    """``exercises``: a folder of some of the assignments (`C.some_exercises`) instead of all of
    exercises/ (the test of the bench's own code grades one)."""
    sizes = sorted({s for s in sizes if 0 < s < n} | {n})
    echo(f"bench: building a class of {n} solved submissions in {work} (load {B.load()})")
    whole = B.build(os.path.join(work, "class"), n, exercises)
    per = len(C.assignments(whole.exercises))
    classes = {s: B.first_students(whole, s, os.path.join(work, f"n{s}")) for s in sizes}
    stocks = {s: B.stock_course(p) for s, p in classes.items()}
    seed = secrets.randbelow(2 ** 63)     # one for every run: the serial one must match
    times = {s: {"stock": [], "course": []} for s in sizes}
    how, seen = {}, {}
    for r in range(repeat):
        for s in sizes:
            before = B.load()
            times[s]["stock"].append(B.run_stock(classes[s], stocks[s]))
            took, how[s] = B.run_course(classes[s], jobs, seed)
            times[s]["course"].append(took)
            seen[s] = B.results(classes[s])
            echo(f"bench: run {r + 1}/{repeat}, N={s} ({s * per} submissions): stock "
                 f"{times[s]['stock'][-1]:.1f} s, make autograde {took:.1f} s ({how[s]}); load "
                 f"{before} -> {B.load()}")
    report = {"n": n, "sizes": {}, "repeat": repeat, "speedup": {}}
    echo(f"\nmedian of {repeat}, seconds for the whole run (start-up included), "
         f"{os.cpu_count()} cores, {per} assignments per student:")
    echo(f"  {'':<8}{'submissions':>12}{'stock nbgrader':>16}{'make autograde':>16}"
         f"{'speedup':>9}  how")
    for s in sizes:
        stock, course = (statistics.median(times[s][k]) for k in ("stock", "course"))
        report["sizes"][s] = {"submissions": s * per, "stock": stock, "course": course,
                              "how": how[s]}
        report["speedup"][s] = stock / course
        echo(f"  {'N=' + str(s):<8}{s * per:>12}{stock:>14.1f} s{course:>14.1f} s"
             f"{stock / course:>9.2f}  {how[s]}")
    if verify:
        _verify(classes, seen, seed, sizes, jobs, report, echo)
    if cluster:     # the distributed column: N Dask workers here (tools/bench/cluster.py)
        mid = sizes[len(sizes) // 2]      # the verified class: a few minutes, not the whole N's
        report["cluster"] = column(classes[mid], seed, seen[mid], cluster, echo)
    echo(f"\nwhere one submission's time goes (each step measured on its own; load {B.load()}):")
    for what, sec in breakdown(classes[sizes[0]]):
        echo(f"  {what:<52} {sec:6.2f} s")
    if checks:
        lat = check_latency(classes[sizes[0]])
        report["checks"] = lat
        echo("\nstudents' instant checks (instructor solutions; first call, median of 5 later):")
        for name, (first, later) in lat.items():
            ok = "ok" if first <= 0.5 and later <= 0.05 else "SLOW"
            echo(f"  {name:<36} {first * 1000:7.0f} ms  {later * 1000:6.1f} ms  {ok}")
    echo(f"bench: done (load {B.load()})")
    echo("speedup vs stock nbgrader: " + ", ".join(
        f"N={s} {report['speedup'][s]:.2f}" for s in sizes))
    return report


def _verify(classes, seen, seed, sizes, jobs, report, echo) -> None:
    """Every run against one serial run (the middle size, or the only one) on the same seed;
    then that class once more without the warm cache."""
    s = sizes[len(sizes) // 2]
    serial_s, _ = B.run_course(classes[s], 1, seed)
    serial = B.results(classes[s])
    echo(f"\nserial run (--jobs 1), N={s}: {serial_s:.1f} s (load {B.load()})")
    found = {size: B.differences(seen[size], serial) for size in sizes}
    report["identical_to_serial"] = not any(found.values())
    for size in sizes:
        echo(f"  N={size}: same scores and, byte for byte, the same grade-cell outputs (feedback) "
             f"as the serial run: {'yes' if not found[size] else 'NO'}")
        for key, ref, got in found[size][:3]:
            echo(f"    differs: {key}: serial {str(ref)[:300]!r} / this run {str(got)[:300]!r}")
    cold_s, how = B.run_course(classes[s], jobs, seed, ["--no-warm"])
    stock = report["sizes"][s]["stock"]
    report["sizes"][s]["course_no_warm"] = cold_s
    echo(f"  N={s} without the warm-up (--no-warm): {cold_s:.1f} s ({how}), speedup "
         f"{stock / cold_s:.2f}: the bound for answers unlike the solutions (load {B.load()})")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.bench",
                                     description=__doc__.splitlines()[2])
    parser.add_argument("--n", type=int, default=16, help="students in the class (default 16)")
    parser.add_argument("--sizes", default="1,8",
                        help="smaller classes timed too, comma-separated (default 1,8)")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each, median (default 1)")
    parser.add_argument("--jobs", type=int, default=0,
                        help="make autograde's --jobs (default 0: its own choice)")
    parser.add_argument("--keep", metavar="DIR", help="build in DIR and keep it")
    parser.add_argument("--no-verify", action="store_true", help="skip the serial comparison")
    parser.add_argument("--cluster", default="1,2", help="Dask workers of the distributed column, "
                        "comma-separated (default 1,2; empty: no column)")
    args = parser.parse_args(argv)
    sizes = [int(x) for x in args.sizes.split(",") if x.strip()]
    work = args.keep or tempfile.mkdtemp(prefix="inside-vmap-bench-")
    try:
        bench(args.n, args.repeat, args.jobs, work, verify=not args.no_verify, sizes=sizes,
              cluster=[int(x) for x in args.cluster.split(",") if x.strip()])
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0
