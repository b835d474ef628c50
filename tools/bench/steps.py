"""What `make bench` prints below its speedups: where one submission's time goes, each step
timed on its own, and how long every exercise's visible check takes as a student calls it."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time

from tools import classroom as C

from .runs import env, submitted_notebooks

# ---- where make autograde's time goes --------------------------------------------------------------------
KERNEL = textwrap.dedent("""\
    import asyncio, json, os, sys, tempfile, time
    from jupyter_client.manager import AsyncKernelManager
    name, forked = sys.argv[1], sys.argv[2:] == ["forked"]

    async def main():
        Manager, extra, group = AsyncKernelManager, [], None
        if forked:    # as BoundedExecute starts it: limits, a cgroup, from the zygote (the 2nd)
            from grader.judge import cgroup, channels, kernel, sandbox
            Manager = channels.BoundedKernelManager
            group = cgroup.Group.create(2048, 256, "inside-vmap-bench")
            spec = {"confine": {"rlimits": {}, "cgroup": group.procs_files()},
                    "kits": sandbox.kits()}
            extra = [kernel.LIMITS_ARG + "=" + json.dumps(spec)]
        ipc = tempfile.mkdtemp(prefix="inside-vmap-bench-")
        course = tempfile.mkdtemp(prefix="inside-vmap-bench-course-")
        for round in range(2 if forked else 1):
            cwd = os.path.join(course, "autograded", f"s{round}", "a")
            os.makedirs(cwd)
            t0 = time.monotonic()
            km = Manager(kernel_name=name, transport="ipc",
                         ip=os.path.join(tempfile.mkdtemp(dir=ipc), "kernel"))
            km.fork_kernel = forked
            await km.start_kernel(cwd=cwd, extra_arguments=extra)
            kc = km.client()
            kc.start_channels()
            await kc.wait_for_ready(60)
            t1 = time.monotonic()
            await kc.execute_interactive(
                "import jax, jax.numpy as jnp; jnp.ones(3).block_until_ready()", timeout=60,
                output_hook=lambda msg: None)
            t2 = time.monotonic()
            kc.stop_channels()
            await km.shutdown_kernel()
            t3 = time.monotonic()
        if group is not None:
            group.remove()
        print("@@", f"{t1 - t0:.3f} {t2 - t1:.3f} {t3 - t2:.3f}")

    asyncio.run(main())
    """)


def breakdown(paths: C.Paths) -> list[tuple[str, float]]:
    """Seconds of the main steps of grading one submission, each measured on its own."""
    out = []
    for what, code in (("python + import nbgrader (stock, per run)", "import nbgrader.apps"),
                       ("python + import autograde (per worker)",
                        "import grader.instructor.autograde")):
        t0 = time.monotonic()
        subprocess.run([sys.executable, "-c", code], env=env(), check=True, cwd=C.ROOT)
        out.append((what, time.monotonic() - t0))
    from grader.judge import sandbox
    kinds = [("inside-vmap", []), ("inside-vmap-sandboxed", [])]
    if sandbox.available() and sandbox.cgroups():      # where make autograde forks its kernels
        kinds.append(("inside-vmap-sandboxed", ["forked"]))
    for name, how in kinds:
        p = subprocess.run([sys.executable, "-c", KERNEL, name, *how], env=env(),
                           capture_output=True, text=True, cwd=C.ROOT)
        found = [x for x in p.stdout.splitlines() if x.startswith("@@ ")]
        what = f"{name}, forked from its zygote" if how else name
        if p.returncode == 0 and found:
            start, imp, stop = map(float, found[-1].split()[1:])
            out += [(f"kernel start ({what})", start), ("import jax in it", imp),
                    ("kernel shutdown", stop)]
        else:
            out.append((f"kernel {what}: could not time it ({p.stderr.strip()[-80:]})", 0.0))
    for path in submitted_notebooks(paths)[:len(C.assignments(paths.exercises))]:
        out += _judge_times(paths, path)
    return out


def _judge_times(paths: C.Paths, path: str) -> list[tuple[str, float]]:
    """One submitted notebook judged (trusted side and child) with no cache, then with a warm one;
    the warm-up before them also pays what a process pays on its first judge of an assignment."""
    import nbformat

    from grader.judge import runner, sandbox, warm
    nb, name = nbformat.read(path, as_version=4), os.path.basename(path)
    assignment = os.path.basename(os.path.dirname(path))
    key = runner.case_key(assignment, os.path.splitext(name)[0])
    seed, boxed = 1, sandbox.available()
    if not boxed:
        t0 = time.monotonic()
        runner.judge(nb, use_bwrap=boxed, rng=runner.cases_rng(seed, key))
        return [(f"judge ({name}), unboxed", time.monotonic() - t0)]
    with tempfile.TemporaryDirectory() as cache:
        t0 = time.monotonic()    # first: what this process pays once per assignment, too
        warm.warm({key: os.path.join(paths.exercises, assignment, name)}, seed, cache,
                  sandbox.Limits(), boxed)
        first = time.monotonic() - t0
        t0 = time.monotonic()
        runner.judge(nb, use_bwrap=boxed, rng=runner.cases_rng(seed, key))
        cold = time.monotonic() - t0
        t0 = time.monotonic()
        runner.judge(nb, use_bwrap=boxed, rng=runner.cases_rng(seed, key),
                     cache=sandbox.CompileCache(cache))
        hot = time.monotonic() - t0
    return [(f"warm-up of {name} (first in a process)", first),
            (f"judge ({name}), no cache", cold),
            (f"judge ({name}), warm cache", hot)]


# ---- the students' instant checks -------------------------------------------------------------
CHECKS = textwrap.dedent("""\
    import contextlib, io, json, re, statistics, sys, time
    import jax
    import nbformat
    out = {}
    for path in sys.argv[1:]:
        nb = nbformat.read(path, as_version=4)
        ns = {"__name__": "__main__"}
        for cell in nb.cells:
            if cell.cell_type != "code":
                continue
            meta = cell.metadata.get("nbgrader", {})
            src = cell.source.split("### BEGIN HIDDEN TESTS")[0]
            src = "\\n".join(l for l in src.split("\\n") if "SOLUTION" not in l)
            if meta.get("grade"):
                for call in re.findall(r"show\\(((?:\\w+\\.)?check_\\w+\\(.*\\))\\)", src):
                    code = compile(call, "<check>", "eval")
                    times = []
                    for _ in range(6):
                        t0 = time.perf_counter()
                        with contextlib.redirect_stdout(io.StringIO()):
                            eval(code, ns)
                        times.append(time.perf_counter() - t0)
                    out[call.split("(")[0]] = (times[0], statistics.median(times[1:]))
            else:
                with contextlib.redirect_stdout(io.StringIO()), \\
                        contextlib.redirect_stderr(io.StringIO()):
                    try:
                        exec(compile(src, "<cell>", "exec"), ns)
                    except Exception:
                        pass
    print(json.dumps(out))
    """)


def check_latency(paths: C.Paths) -> dict[str, tuple[float, float]]:
    """``{check: (first call s, median of 5 later calls s)}`` on the instructor's solutions, in a
    fresh process per assignment after ``import jax`` (as in a student's kernel)."""
    found = {}
    for a in C.assignments(paths.exercises):
        nbs = [os.path.join(paths.exercises, a, n) for n in C.source_notebooks(paths.exercises, a)]
        p = subprocess.run([sys.executable, "-c", CHECKS] + nbs, env=env(), cwd=C.ROOT,
                           capture_output=True, text=True)
        if p.returncode != 0:
            raise RuntimeError(p.stderr[-2000:])
        found.update(json.loads(p.stdout.strip().splitlines()[-1]))
    return found
