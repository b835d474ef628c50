"""Runs in the sandbox, beside the student's code: execute the set-up and answer cells, observe the
student's objects on the cases it is given, and write what it saw as plain data.

It holds only the lessons' kits (`grader.judge.kit_tree`): no expected value, reference, case
generator or comparison is importable here, so nothing the student's code does here can look an
answer up; at most it can forge observations, which the trusted process then compares with
answers it computes itself. It also watches for JAX's own implementation of what an exercise
asks being called straight from an answer cell (`tripwires`), and for the course's and JAX's
modules changing under the observers (`tamper`), and reports both (the trusted process decides).
"""
from __future__ import annotations

import importlib
import json
import os
import sys

from .. import wire
from . import tamper, tripwires

MARKER = "@@inside-vmap-judge@@"
ANSWER_FILE = "<answer cell {}>"


def run_cells(cells, namespace) -> list[str]:
    """Execute code cells in order; a failing cell is reported, later cells still run."""
    errors = []
    for cell in cells:
        filename = (ANSWER_FILE if cell["kind"] == "answer" else "<set-up cell {}>").format(
            cell["name"])
        try:
            exec(compile(cell["source"], filename, "exec"), namespace)
        except Exception as err:  # the student's cell failing is data for the verdict
            errors.append(f"{type(err).__name__}: {err}"[:300])
    return errors


def _resolve(path: str):
    """An observer named ``module:qualname``, from a lesson's kit and nowhere else."""
    module, _, name = path.partition(":")
    if not (module.startswith("grader.lessons.") and ".kit" in module):
        raise ValueError(f"not a kit observer: {path}")
    obj = importlib.import_module(module)
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


def observe(request) -> dict:
    """Observe every requested exercise on its cases; returns plain data per grade id."""
    exercises = request["exercises"]
    # Observers are found before any answer runs: rebinding a kit's names afterwards changes
    # nothing the child calls.
    observers = {gid: _resolve(job["observe"]) for gid, job in exercises.items()}
    wires = tripwires.install((spec for job in exercises.values() for spec in job["calls"]),
                              ANSWER_FILE.partition("{")[0])
    try:
        return _observe_all(request, exercises, observers, wires, Guard(wires))
    finally:
        wires.remove()


class Guard:
    """What the course's modules, JAX's and the watch were before any cell ran; an exercise
    observed once anything differs (the first to see it, and every later one) is tampered."""

    def __init__(self, wires):
        self.wires, self.before, self.seen = wires, tamper.take(), []

    def check(self) -> list[str]:
        found = tamper.changes(self.before, tamper.take()) + self.wires.broken()
        self.seen = sorted(set(self.seen) | set(found))
        return self.seen


def _observe_all(request, exercises, observers, wires, guard) -> dict:
    namespace = {"__name__": "__main__"}
    cell_errors = run_cells(request["cells"], namespace)
    results = {}
    for grade_id, job in exercises.items():
        missing = [n for n in job["needs"] if n not in namespace]
        if missing:
            results[grade_id] = {"missing": missing}
            continue
        objs = [namespace[n] for n in job["needs"]]
        tripped = {spec for o in objs for spec in wires.is_one(o, job["calls"])}
        guard.check()
        with wires.watching(job.get("strict", False)) as hits:
            observed = [wire.observe_safely(observers[grade_id], objs, wire.unplain(case))
                        for case in job["cases"]]
            tripped |= hits & set(job["calls"])
        results[grade_id] = {"observed": observed, "tripped": sorted(tripped),
                             "tampered": guard.check()}
    return {"cell_errors": cell_errors, "results": results}


def _forget_editable_installs() -> None:
    """An editable install's import hook maps ``grader`` to the repository, answer key and all;
    the child's ``grader`` is the kit tree on its path, so the hook is dropped before any answer
    runs. (Inside the sandbox the repository is not mounted at all.)"""
    sys.meta_path[:] = [f for f in sys.meta_path
                        if not getattr(f, "__module__", "").startswith("__editable__")]


def main() -> None:
    _forget_editable_installs()
    request = json.loads(sys.stdin.read())
    # The answer goes to its own pipe (sandbox's answer fd), apart from anything student code
    # prints, which goes nowhere: the judge grades behaviour, not output.
    fd = os.environ.get("INSIDE_VMAP_ANSWER_FD")
    answer_out = os.fdopen(int(fd), "w") if fd else sys.stdout
    sys.stdout = open(os.devnull, "w")
    answer = observe(request)
    answer_out.write(MARKER + wire.dumps(answer) + "\n")
    answer_out.flush()


if __name__ == "__main__":
    main()
    # The answer is flushed; tearing JAX and the interpreter down costs ~0.3 s and keeps
    # nothing (nor runs what an answer registered with atexit).
    os._exit(0)
