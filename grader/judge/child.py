"""Runs in the sandbox: execute setup and answer cells, observe the student's objects, print JSON.

Reads one request from stdin and writes one line of JSON to stdout, behind a marker so whatever
the student prints cannot be mistaken for the answer. Only plain data leaves this process.
"""
from __future__ import annotations

import base64
import contextlib
import importlib
import io
import json
import sys

MARKER = "@@inside-vmap-judge@@"


def plain(value):
    """Turn an observation into JSON-safe plain data; anything else is refused."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, bytes):
        return {"__bytes__": base64.b64encode(value).decode()}
    if isinstance(value, (list, tuple)):
        return {"__tuple__": [plain(v) for v in value]} if isinstance(value, tuple) else \
            [plain(v) for v in value]
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {"__dict__": {k: plain(v) for k, v in value.items()}}
    raise TypeError(f"observation is not plain data: {type(value).__name__}")


def unplain(value):
    """The inverse of `plain`, run in the trusted process on what came back."""
    if isinstance(value, list):
        return [unplain(v) for v in value]
    if isinstance(value, dict):
        if "__bytes__" in value:
            return base64.b64decode(value["__bytes__"])
        if "__tuple__" in value:
            return tuple(unplain(v) for v in value["__tuple__"])
        if "__dict__" in value:
            return {k: unplain(v) for k, v in value["__dict__"].items()}
    return value


def run_cells(cells, namespace) -> list[str]:
    """Execute code cells in order; a failing cell is reported, later cells still run."""
    errors = []
    for code in cells:
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                exec(compile(code, "<answer cell>", "exec"), namespace)
        except Exception as err:  # the student's cell failing is data for the verdict
            errors.append(f"{type(err).__name__}: {err}"[:300])
    return errors


def observe(request) -> dict:
    """Observe every requested exercise on its cases; returns plain data per grade id."""
    namespace = {"__name__": "__main__"}
    cell_errors = run_cells(request["cells"], namespace)
    results = {}
    for grade_id, job in request["exercises"].items():
        module = importlib.import_module(job["module"])
        exercise = module.EXERCISES[grade_id]
        missing = [n for n in exercise.needs if n not in namespace]
        if missing:
            results[grade_id] = {"missing": missing}
            continue
        objs = [namespace[n] for n in exercise.needs]
        observed = []
        for case in job["cases"]:
            got = exercise.observe_safely(objs, unplain(case))
            observed.append(got.to_plain() if hasattr(got, "to_plain") else got)
        results[grade_id] = {"observed": [plain(o) for o in observed]}
    return {"cell_errors": cell_errors, "results": results}


def main() -> None:
    request = json.loads(sys.stdin.read())
    real_stdout = sys.stdout
    sys.stdout = io.StringIO()      # nothing the student prints reaches the parent
    answer = observe(request)
    real_stdout.write(MARKER + json.dumps(answer) + "\n")
    real_stdout.flush()


if __name__ == "__main__":
    main()
