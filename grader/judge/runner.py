"""Judge one notebook: draw cases now, observe in a sandboxed child, decide here.

Which cells count comes from a trusted `Template` (the gradebook's record of the released
notebook, or the instructor's own notebook): set-up cells run as released, answers are the
student's cells with a released answer id, graded exercises are the released grade cells. The
trusted side reads every answer for delegation before anything runs, never calls the student's
objects, and compares only plain data that came back. A child that dies is retried once per
exercise with only that exercise's answer cells, so one killing answer costs only its exercise.
"""
from __future__ import annotations

import ast
import json
import zlib
from dataclasses import dataclass

import numpy as np

from .. import lessons, wire
from ..feedback import Finding, Result, result
from . import child, delegation, elsewhere, sandbox, tamper


@dataclass(frozen=True)
class Template:
    """What the released notebook holds, by cell id: set-up sources, answer ids, grade ids."""
    setup: dict[str, str]
    answers: frozenset[str]
    graded: tuple[str, ...]
    points: dict[str, float]

    @classmethod
    def of_notebook(cls, nb) -> "Template":
        """A notebook the instructor wrote (warm-up, tests): its own metadata is the truth."""
        setup, answers, graded, points = {}, set(), [], {}
        for cell in nb["cells"]:
            m = _meta(cell)
            if "grade_id" not in m:
                continue
            if m.get("grade"):
                graded.append(m["grade_id"])
                points[m["grade_id"]] = float(m.get("points", 0))
            elif m.get("solution") and cell["cell_type"] == "code":
                answers.add(m["grade_id"])
            elif m.get("locked") and cell["cell_type"] == "code":
                setup[m["grade_id"]] = cell["source"]
        return cls(setup, frozenset(answers), tuple(graded), points)

    @classmethod
    def of_gradebook(cls, gradebook, notebook: str, assignment: str) -> "Template":
        """The gradebook's record of a released notebook, whatever the submission's metadata says."""
        nb = gradebook.find_notebook(notebook, assignment)
        points = {c.name: float(c.max_score) for c in nb.grade_cells}
        graded = set(points)
        answers = {c.name for c in nb.solution_cells} - graded
        setup = {c.name: c.source for c in nb.source_cells if c.cell_type == "code" and c.locked
                 and c.name not in graded and c.name not in answers}
        return cls(setup, frozenset(answers), tuple(sorted(graded)), points)


def _meta(cell) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {})


@dataclass(frozen=True)
class Plan:
    """The code cells the child runs, in notebook order, and which answers each exercise owns."""
    cells: tuple[dict, ...]                  # {"name", "kind": "setup"|"answer", "source"}
    owned: dict[str, tuple[str, ...]]        # grade id -> names of its answer cells

    def cells_for(self, names) -> list[dict]:
        wanted = set(names)
        return [c for c in self.cells if c["kind"] == "setup" or c["name"] in wanted]


def plan(nb, template: Template, graded) -> Plan:
    """Set-up cells as released (prepended when the student deleted them), the student's answer
    cells where they stand; an answer belongs to the next grade cell after it, and also to any
    exercise whose needed names it defines."""
    cells, seen, owned, pending = [], set(), {}, []
    for cell in nb["cells"]:
        name = _meta(cell).get("grade_id")
        if name in seen:
            continue                          # a duplicated id counts once
        if name in template.setup:
            cells.append({"name": name, "kind": "setup", "source": template.setup[name]})
        elif name in template.answers and cell["cell_type"] == "code":
            cells.append({"name": name, "kind": "answer", "source": cell["source"]})
            pending.append(name)
        elif name in graded:
            owned[name], pending = tuple(pending), []
        else:
            continue
        seen.add(name)
    missing = [{"name": n, "kind": "setup", "source": s} for n, s in template.setup.items()
               if n not in seen]
    cells = missing + cells
    known = lessons.exercises()
    for gid in graded:
        needs = set(known[gid].needs)
        extra = tuple(c["name"] for c in cells if c["kind"] == "answer"
                      and _defines(c["source"]) & needs and c["name"] not in owned.get(gid, ()))
        owned[gid] = owned.get(gid, ()) + extra
    return Plan(tuple(cells), owned)


def _defines(source: str) -> set[str]:
    """Top-level names an answer cell defines (def, class, assignment); empty if it won't parse.
    A cell too deep for the parser costs only the exercises that own it (the reading sends
    those to a human), never the notebook."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # ValueError: a null byte
        return set()
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {t.id for t in targets if isinstance(t, ast.Name)}
    return names


def _observer_path(fn) -> str:
    return f"{fn.__module__}:{fn.__qualname__}"


def _request(cells, jobs) -> str:
    known = lessons.exercises()
    return json.dumps({"cells": list(cells), "exercises": {
        gid: {"observe": _observer_path(known[gid].observe), "needs": list(known[gid].needs),
              "calls": list(known[gid].delegation.calls),
              "strict": known[gid].delegation.strict,
              "cases": [wire.plain(c) for c in cases]}
        for gid, cases in jobs.items()}})


# The most lists and dicts an answer line may hold: the largest honest answer (every exercise of
# a notebook, every case) holds a few ten thousand; parsing millions of them would cost the
# trusted process gigabytes for a line within the byte cap.
MAX_CONTAINERS = 200_000
# The longest reason a verdict gives for manual grading (it reaches the gradebook and the export).
MAX_REASON = 600


def _parse(outcome) -> dict | None:
    """The child's answer line. Student code can forge one; it can only forge observations,
    which are then compared with expectations computed here. A line that cannot be read counts
    as no answer, so the exercises are judged again one by one, and only the one whose answer
    wrote it loses."""
    for line in reversed(outcome.answer.splitlines()):
        if line.startswith(child.MARKER):
            if line.count("[") + line.count("{") > MAX_CONTAINERS:
                return None                   # no honest answer nests this much: not read
            try:
                answer = wire.loads(line[len(child.MARKER):])
            except (ValueError, TypeError, RecursionError):
                return None
            return answer if isinstance(answer, dict) else None
    return None


def _failed(name: str, reason: str) -> Result:
    return result(name, 1, [Finding("running your answer in the judge", "it finishes normally",
                                    reason, "The judge re-runs your answer cells in a fresh "
                                    "process; make them run top to bottom without the rest "
                                    "of the notebook.")])


def _entry(parsed, gid) -> dict:
    """This exercise's part of the child's answer, as plain data; anything malformed is nothing."""
    try:
        entry = parsed["results"][gid]
    except (KeyError, TypeError):
        return {"observed": []}
    if not isinstance(entry, dict) or not isinstance(entry.get("observed", entry.get("missing")),
                                                     list):
        return {"observed": []}
    return entry


def _verdict(exercise, cases, entry) -> Result:
    if "missing" in entry:
        return result(exercise.name, 1, [Finding(
            "your answer cells", f"they define {', '.join(map(str, entry['missing']))}",
            "not defined",
            "Keep the names given in the exercise; only code in answer cells is graded.")])
    # The child saw the course's code, JAX's tables or its own watch changed by the student's
    # code: nothing it observed after that can be trusted, so a human looks.
    tampered = tamper.reason(entry.get("tampered"))
    if tampered:
        return result(exercise.name, len(cases), [], manual=tampered)
    # Only the calls this exercise watches can have been seen: anything else came from the
    # student's side of the pipe, and is not read (nor copied into the gradebook).
    tripped = entry.get("tripped")
    seen = sorted({t for t in tripped if isinstance(t, str)} & set(exercise.delegation.calls)) \
        if isinstance(tripped, list) else []
    if seen:
        return result(exercise.name, len(cases), [], manual=(
            f"it calls {', '.join(s.replace(':', '.') for s in seen)} itself, the implementation "
            f"this exercise asks you to write"))
    return exercise.verdict(cases, entry["observed"])


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
          cache: sandbox.CompileCache | None = None, budget: sandbox.Budget | None = None,
          template: Template | None = None, forked: bool = True) -> dict[str, Result]:
    """``{grade_id: Result}`` for every released grade cell of ``nb`` a lesson declares (its
    children forked from a zygote where one works, unless ``forked`` is false)."""
    template = template or Template.of_notebook(nb)
    known = lessons.exercises()
    graded = [g for g in template.graded if g in known]
    if not graded:
        return {}
    rng = rng or np.random.default_rng()
    # Drawn in one fixed order, whatever order the template lists them in: the warm-up's
    # template (the notebook's order) and autograde's (the gradebook's) must draw the same.
    cases = {gid: known[gid].cases(rng, True) for gid in sorted(graded)}
    the_plan = plan(nb, template, graded)
    sources = {c["name"]: c["source"] for c in the_plan.cells if c["kind"] == "answer"}
    flags = {gid: delegation.reasons([sources[n] for n in the_plan.owned[gid]],
                                     known[gid].delegation) for gid in graded}
    if use_bwrap is None:
        use_bwrap = sandbox.available()
    budget = budget or sandbox.Budget()

    def attempt(gids, cells):
        out = sandbox.run("grader.judge.child", _request(cells, {g: cases[g] for g in gids}),
                          limits, use_bwrap, cache, budget, forked)
        return out, (_parse(out) if out.failure is None else None)

    # What the reading sent to a human is not run: nothing the child did could change that.
    verdicts = {g: result(known[g].name, len(cases[g]), [],
                          manual="; ".join(flags[g])[:MAX_REASON])
                for g in graded if flags[g]}
    observed = [g for g in graded if not flags[g]]
    if not observed:
        return verdicts
    every = [n for g in observed for n in the_plan.owned[g]]
    out, parsed = attempt(observed, the_plan.cells_for(every))
    run = {c["name"] for c in the_plan.cells}
    if parsed is not None:
        verdicts.update({g: _verdict(known[g], cases[g], _entry(parsed, g)) for g in observed})
        return elsewhere.explain(verdicts, nb, run, _defines)
    for gid in observed:                     # isolate the exercise that brought the child down
        ex = known[gid]
        one, parsed_one = attempt([gid], the_plan.cells_for(the_plan.owned[gid]))
        verdicts[gid] = (_verdict(ex, cases[gid], _entry(parsed_one, gid)) if parsed_one else
                         _failed(ex.name, one.failure or "the judge's child gave no answer"))
    return elsewhere.explain({g: verdicts[g] for g in graded}, nb, run, _defines)
