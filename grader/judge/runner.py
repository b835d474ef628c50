"""Judge one notebook: draw cases now, observe in a sandboxed child, decide here.

The trusted side never calls the student's objects or compares anything they produced: it only
reads plain data back. A child that dies is retried once per exercise with only that exercise's
answer cells, so one killing answer costs only its own exercise.
"""
from __future__ import annotations

import ast
import json
import zlib

import numpy as np

from ..feedback import Finding, Result, result
from . import child, sandbox
from .registry import exercises


def _meta(cell) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {})


def _is_setup(cell) -> bool:
    m = _meta(cell)
    return cell["cell_type"] == "code" and m.get("locked") and not m.get("grade") \
        and not m.get("solution")


def _answers_by_exercise(nb, graded) -> dict[str, list[str]]:
    """Answer cells since the previous grade cell belong to the next grade cell."""
    owned, pending = {}, []
    for cell in nb["cells"]:
        m = _meta(cell)
        if cell["cell_type"] == "code" and m.get("solution"):
            pending.append(cell["source"])
        elif m.get("grade") and m.get("grade_id") in graded:
            owned[m["grade_id"]], pending = pending, []
    return owned


def _defines(source: str) -> set[str]:
    """Top-level names an answer cell defines (def, class, assignment); empty if it won't parse."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {t.id for t in targets if isinstance(t, ast.Name)}
    return names


def _own_answers(nb, gid, owned, needs) -> list[str]:
    """The answer cells since the previous grade cell, plus any answer cell defining a needed name."""
    defining = [c["source"] for c in nb["cells"] if _meta(c).get("solution")
                and c["cell_type"] == "code" and _defines(c["source"]) & set(needs)]
    return owned.get(gid, []) + [s for s in defining if s not in owned.get(gid, [])]


def _request(cells, jobs) -> str:
    return json.dumps({"cells": cells, "exercises": {
        gid: {"module": mod, "cases": [child.plain(c) for c in cases]}
        for gid, (mod, cases) in jobs.items()}})


def _parse(outcome) -> dict | None:
    """The child's answer line. Student code can print a look-alike; it can only forge
    observations, which are then compared with expectations computed here."""
    for line in reversed(outcome.stdout.splitlines()):
        if line.startswith(child.MARKER):
            try:
                return json.loads(line[len(child.MARKER):])
            except ValueError:
                return {}
    return None


def _failed(name: str, reason: str) -> Result:
    return result(name, 1, [Finding("running your answer in the judge", "it finishes normally",
                                    reason, "The judge re-runs your answer cells in a fresh "
                                    "process; make them run top to bottom without the rest "
                                    "of the notebook.")])


def _entry(parsed, gid) -> dict:
    """This exercise's part of the child's answer; whatever else came back counts as nothing."""
    results = parsed.get("results") if isinstance(parsed, dict) else None
    entry = results.get(gid) if isinstance(results, dict) else None
    if not (isinstance(entry, dict) and isinstance(entry.get("observed", entry.get("missing")),
                                                    list)):
        return {"observed": []}
    return entry


def _verdict(exercise, cases, entry) -> Result:
    if "missing" in entry:
        return result(exercise.name, 1, [Finding(
            "your answer cells", f"they define {', '.join(entry['missing'])}", "not defined",
            "Keep the names given in the exercise; only code in answer cells is graded.")])
    try:
        observed = [child.unplain(o) for o in entry["observed"]]
    except Exception:  # forged or corrupted data: nothing usable came back
        observed = []
    return exercise.verdict(cases, observed)


def case_key(assignment: str, notebook: str) -> str:
    """Which cases a notebook gets under a seed: one draw per assignment and notebook name
    (``notebook`` without ``.ipynb``, as nbgrader names it). Grading and ``warm`` both key by it."""
    return f"{assignment}/{notebook}"


def cases_rng(seed: int | None, key: str) -> np.random.Generator:
    """Where hidden cases come from: fresh entropy without a seed; with one, the same cases for
    every notebook judged under ``key`` (a class shares its cases, and ``warm`` compiles them)."""
    if seed is None or seed < 0:
        return np.random.default_rng()
    return np.random.default_rng([seed, zlib.crc32(key.encode())])


def judge(nb, limits=sandbox.Limits(), use_bwrap=None, rng=None,
          cache: sandbox.CompileCache | None = None) -> dict[str, Result]:
    """``{grade_id: Result}`` for every grade cell of ``nb`` that a lesson module judges."""
    known = exercises()
    graded = [_meta(c)["grade_id"] for c in nb["cells"] if _meta(c).get("grade")
              and _meta(c).get("grade_id") in known]
    if not graded:
        return {}
    rng = rng or np.random.default_rng()
    cases = {gid: known[gid][1].cases(rng, True) for gid in graded}
    setup = [c["source"] for c in nb["cells"] if _is_setup(c)]
    answers = _answers_by_exercise(nb, set(graded))
    if use_bwrap is None:
        use_bwrap = sandbox.available()

    def attempt(gids, cells):
        jobs = {g: (known[g][0], cases[g]) for g in gids}
        out = sandbox.run("grader.judge.child", _request(cells, jobs), limits, use_bwrap, cache)
        return out, (_parse(out) if out.failure is None else None)

    all_answers = [src for g in graded for src in answers.get(g, [])]
    out, parsed = attempt(graded, _in_order(nb, setup, all_answers))
    if parsed is not None:
        return {g: _verdict(known[g][1], cases[g], _entry(parsed, g)) for g in graded}
    verdicts = {}
    for gid in graded:                       # isolate the exercise that brought the child down
        ex = known[gid][1]
        own = _own_answers(nb, gid, answers, ex.needs)
        one, parsed_one = attempt([gid], _in_order(nb, setup, own))
        verdicts[gid] = (_verdict(ex, cases[gid], _entry(parsed_one, gid)) if parsed_one
                         else _failed(ex.name, one.failure or "the judge's child gave no answer"))
    return verdicts


def _in_order(nb, setup, answers) -> list[str]:
    """Setup and chosen answer cells in notebook order (answers may rely on earlier setup)."""
    wanted = set(setup) | set(answers)
    return [c["source"] for c in nb["cells"] if c["cell_type"] == "code" and c["source"] in wanted]
