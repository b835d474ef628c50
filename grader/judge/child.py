"""Runs in the sandbox, beside the student's code: execute the set-up and answer cells, observe the
student's objects on the cases it is given, and write what it saw as plain data.

It holds only the lessons' kits (`grader.judge.kit_tree`): no expected value, reference, case
generator or comparison is importable here, so nothing the student's code does here can look an
answer up; at most it can forge observations, which the trusted process then compares with
answers it computes itself. It also watches for JAX's own implementation of what an exercise
asks being called straight from an answer cell, and reports it (the trusted process decides).
"""
from __future__ import annotations

import contextlib
import importlib
import json
import os
import sys

from .. import wire

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


def _target(spec: str):
    module, _, attr = spec.partition(":")
    return importlib.import_module(module), attr


class Tripwires:
    """JAX callables an answer must not hand its work to: each is replaced, before any cell
    runs, by a wrapper that notes a call made straight from an answer cell (and, while a strict
    exercise is observed, any call at all). The originals are kept here only, not on the
    wrappers, so an answer cannot read its way past them."""

    def __init__(self, specs):
        self.originals, self.wrappers, self.hits, self.strict = {}, {}, set(), False
        for spec in sorted(set(specs)):
            try:
                module, attr = _target(spec)
                original = getattr(module, attr)
            except (ImportError, AttributeError):
                continue                       # not in this release: nothing to watch
            self.originals[spec] = original
            self.wrappers[spec] = self._wrap(spec, original)
            setattr(module, attr, self.wrappers[spec])

    def _wrap(self, spec, original):
        def watched(*args, **kwargs):
            caller = sys._getframe(1).f_code.co_filename
            if self.strict or caller.startswith(ANSWER_FILE.partition("{")[0]):
                self.hits.add(spec)
            return original(*args, **kwargs)
        watched.__name__ = getattr(original, "__name__", "watched")
        return watched

    def is_one(self, obj, specs) -> list[str]:
        """The specs ``obj`` is (or wraps, through partials and bound methods)."""
        seen = []
        for _ in range(8):
            for spec in specs:
                if spec in self.originals and (obj is self.originals[spec] or
                                               obj is self.wrappers[spec]):
                    seen.append(spec)
            obj = getattr(obj, "func", None) or getattr(obj, "__func__", None)
            if obj is None:
                break
        return seen

    @contextlib.contextmanager
    def watching(self, strict: bool = False):
        self.hits.clear()
        self.strict = strict
        try:
            yield self.hits
        finally:
            self.strict = False

    def remove(self) -> None:
        for spec, original in self.originals.items():
            module, attr = _target(spec)
            setattr(module, attr, original)


def observe(request) -> dict:
    """Observe every requested exercise on its cases; returns plain data per grade id."""
    exercises = request["exercises"]
    # Observers are found before any answer runs: rebinding a kit's names afterwards changes
    # nothing the child calls.
    observers = {gid: _resolve(job["observe"]) for gid, job in exercises.items()}
    wires = Tripwires(spec for job in exercises.values() for spec in job["calls"])
    try:
        return _observe_all(request, exercises, observers, wires)
    finally:
        wires.remove()


def _observe_all(request, exercises, observers, wires) -> dict:
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
        with wires.watching(job.get("strict", False)) as hits:
            observed = [wire.observe_safely(observers[grade_id], objs, wire.unplain(case))
                        for case in job["cases"]]
            tripped |= hits & set(job["calls"])
        results[grade_id] = {"observed": observed, "tripped": sorted(tripped)}
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
