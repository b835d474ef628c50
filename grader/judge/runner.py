"""Judge one notebook: draw cases now, observe in a sandboxed child, decide here.

Which cells count comes from a trusted `Template` (the gradebook's record of the released
notebook, or the instructor's own notebook): set-up cells run as released, answers are the
student's cells with a released answer id, graded exercises are the released grade cells. The
trusted side reads every answer for delegation before anything runs (each exercise against its
own cells and what it reaches of the others', `reach`), never calls the student's objects, and
compares only plain data that came back (`session`, `decide`). What a run decided stands; an
exercise it did not (the child died, hung or was stopped first) is judged again alone, with only
the answer cells it runs, so one killing answer costs only its exercise.
"""
from __future__ import annotations

import zlib
from dataclasses import dataclass, field

import numpy as np
from nbgrader.utils import is_grade, is_locked, is_solution

from .. import lessons
from ..feedback import Result
from . import cellmeta, decide, delegation, elsewhere, reach, sandbox, session
from . import forked as zygotes
from .vocabulary import TOO_LARGE

MAX_REASON = decide.MAX_REASON


@dataclass(frozen=True)
class Template:
    """What the released notebook holds, by cell id: set-up sources, answer ids, grade ids."""
    setup: dict[str, str]
    answers: frozenset[str]
    graded: tuple[str, ...]
    points: dict[str, float]

    @classmethod
    def of_notebook(cls, nb) -> Template:
        """A notebook the instructor wrote (warm-up, tests): its own metadata is the truth."""
        setup, answers, graded, points = {}, set(), [], {}
        for cell in nb["cells"]:
            gid = cellmeta.grade_id(cell)
            if gid is None:
                continue
            if is_grade(cell):
                graded.append(gid)
                points[gid] = cellmeta.points(cell)
            elif is_solution(cell) and cell["cell_type"] == "code":
                answers.add(gid)
            elif is_locked(cell) and cell["cell_type"] == "code":
                setup[gid] = cell["source"]
        return cls(setup, frozenset(answers), tuple(graded), points)

    @classmethod
    def of_gradebook(cls, gradebook, notebook: str, assignment: str) -> Template:
        """The gradebook's record of a released notebook, whatever the submission's metadata says."""
        nb = gradebook.find_notebook(notebook, assignment)
        points = {c.name: float(c.max_score) for c in nb.grade_cells}
        graded = set(points)
        answers = {c.name for c in nb.solution_cells} - graded
        setup = {c.name: c.source for c in nb.source_cells if c.cell_type == "code" and c.locked
                 and c.name not in graded and c.name not in answers}
        return cls(setup, frozenset(answers), tuple(sorted(graded)), points)


@dataclass(frozen=True)
class Plan:
    """The code cells the child runs, in notebook order; which answer cells each exercise owns
    (it runs them, and they are read in full: the cells before its grade cell, and those binding
    a name it needs), and what it reaches of the other answer cells (`reach`: those statements
    are read against its rules too, and JAX's calls while their cells run count as its)."""
    cells: tuple[dict, ...]                  # {"name", "kind": "setup"|"answer", "source"}
    owned: dict[str, tuple[str, ...]]        # grade id -> names of its answer cells
    reached: dict[str, dict[str, list[int]]] = field(default_factory=dict)   # cell -> statements

    def watched(self, gid) -> set[str]:
        """The answer cells whose run counts as this exercise's (for the strict watch)."""
        return set(self.owned[gid]) | set(self.reached.get(gid, {}))

    def cells_for(self, names) -> list[dict]:
        wanted = set(names)
        return [c for c in self.cells if c["kind"] == "setup" or c["name"] in wanted]


def plan(nb, template: Template, graded) -> Plan:
    """Set-up cells as released (prepended when the student deleted them), the student's answer
    cells where they stand; an answer belongs to the next grade cell after it, and also to any
    exercise whose needed names it binds (in any form). A cell an exercise only reaches is read
    against it but not run for it alone: a helper its answer needs belongs in its own cells."""
    cells, before = _cells(nb, template, graded)
    own, reached = _read_across(cells, before, graded)
    return Plan(tuple(cells), own, reached)


def _cells(nb, template: Template, graded) -> tuple[list[dict], dict]:
    """The cells the child runs, and each grade cell's answer cells above it."""
    cells, seen, before, pending = [], set(), {}, []
    for cell in nb["cells"]:
        name = cellmeta.grade_id(cell)
        if name in seen:
            continue                          # a duplicated id counts once
        if name in template.setup:
            cells.append({"name": name, "kind": "setup", "source": template.setup[name]})
        elif name in template.answers and cell["cell_type"] == "code":
            cells.append({"name": name, "kind": "answer", "source": cell["source"]})
            pending.append(name)
        elif name in graded:
            before[name], pending = tuple(pending), []
        else:
            continue
        seen.add(name)
    missing = [{"name": n, "kind": "setup", "source": s} for n, s in template.setup.items()
               if n not in seen]
    return missing + cells, before


def _read_across(cells, before, graded) -> tuple[dict, dict]:
    """Each exercise's own cells (those above its grade cell and those binding a name it
    needs) and what it reaches of the other answer cells (`reach`)."""
    known = lessons.exercises()
    facts = {c["name"]: reach.statements(c["source"]) for c in cells if c["kind"] == "answer"}
    readable = {n: f for n, f in facts.items() if f is not None}
    defines = {n: {b for s in f for b in s.bound} for n, f in readable.items()}
    own, reached = {}, {}
    for gid in graded:
        needs = set(known[gid].needs)
        extra = tuple(n for n in facts if defines.get(n, set()) & needs
                      and n not in before.get(gid, ()))
        own[gid] = before.get(gid, ()) + extra
        others = {n: f for n, f in readable.items() if n not in own[gid]}
        reached[gid] = reach.reach([readable.get(n, []) for n in own[gid]], others, needs)
    return own, reached


def oversized(nb, template: Template, graded, most: int) -> str:
    """Why the answer cells the judge would read are too large to read (more than ``most``
    syntax-tree nodes together, `reach.size`), or ''. Counting is linear and stops at the
    limit: only what is under it is read, so the reading's work is bounded, not just its bytes."""
    cells, _ = _cells(nb, template, graded)
    count = reach.size([c["source"] for c in cells if c["kind"] == "answer"], most)
    return TOO_LARGE.format(most=most) if count > most else ""


def _defines(source: str) -> set[str]:
    """Top-level names an answer cell binds, in every form Python binds them (`reach.bound`);
    empty if it won't parse. A cell too deep for the parser costs only the exercises that own
    it (the reading sends those to a human), never the notebook."""
    return {n for s in reach.statements(source) or () for n in s.bound} - {reach.ANY}


def _job(exercise) -> dict:
    """What the child needs to observe an exercise (its cases come one at a time, later)."""
    fn = exercise.observe
    return {"observe": f"{fn.__module__}:{fn.__qualname__}", "needs": list(exercise.needs),
            "calls": list(exercise.delegation.calls), "strict": exercise.delegation.strict,
            "within": exercise.delegation.within}


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


def readings(the_plan, graded, known) -> dict[str, list[str]]:
    """``{grade id: reasons}``: each exercise's answer cells (and the statements of other answer
    cells its code reaches) read against its rules before anything runs (`delegation`)."""
    sources = {c["name"]: c["source"] for c in the_plan.cells if c["kind"] == "answer"}
    answers = {name for gid in graded for name in known[gid].needs}
    return {gid: delegation.reasons(
        [sources[n] for n in the_plan.owned[gid]], known[gid].delegation,
        [(n, sources[n], idx) for n, idx in the_plan.reached[gid].items()], answers)
        for gid in graded}


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
    # Too large to read: sent to a human unread and unrun, costing only this submission the
    # time to count (the reading below is linear, but not free, and runs before any budget).
    over = oversized(nb, template, graded, limits.answer_nodes)
    if over:
        return {g: decide.manual(known[g], cases[g], over) for g in graded}
    the_plan = plan(nb, template, graded)
    flags = readings(the_plan, graded, known)
    if use_bwrap is None:
        use_bwrap = sandbox.available()
    runs = _Runs(the_plan, cases, limits, (use_bwrap, cache, budget or sandbox.Budget(), forked))
    # What the reading sent to a human is not run: nothing the child did could change that.
    verdicts = {g: decide.manual(known[g], cases[g], "; ".join(flags[g]))
                for g in graded if flags[g]}
    observed = [g for g in graded if not flags[g]]
    if observed:
        verdicts.update(runs.judge(observed))
    run = {c["name"] for c in the_plan.cells}        # a helper outside them is not defined there
    return elsewhere.explain({g: verdicts[g] for g in graded}, nb, run, _defines)


class _Runs:
    """The judge's children for one notebook: one run for the exercises, and when it ends before
    deciding them all, runs again for those it did not decide."""

    def __init__(self, the_plan: Plan, cases, limits: sandbox.Limits, how: tuple):
        self.plan, self.cases, self.limits, self.how = the_plan, cases, limits, how
        self.known = lessons.exercises()

    def attempt(self, gids):
        """One child for ``gids``: its outcome, the session, and what it decided of each."""
        known, cases = self.known, self.cases
        cells = self.plan.cells_for([n for g in gids for n in self.plan.owned[g]])
        talk = session.Session(cells, {g: (_job(known[g]), cases[g]) for g in gids},
                               lambda g, seen: known[g].verdict(cases[g], seen),
                               self.limits.case_kb * 2 ** 10)
        use_bwrap, cache, budget, forked = self.how
        out = zygotes.judge_child("", self.limits, use_bwrap, cache, budget, forked, talk)
        return out, talk, {g: decide.settle(known[g], cases[g], talk, self.plan.watched(g))
                           for g in gids}

    def judge(self, gids) -> dict[str, Result]:
        out, talk, settled = self.attempt(gids)
        done = {g: r for g, r in settled.items() if r is not None}
        left = [g for g in gids if g not in done]
        if not left:
            return done
        blamed, known = self._blamed(talk, left)
        # It timed out while one case, or one cell, had most of its time: that answer's own
        # doing, and it would take as long again alone (an endless loop costs one child's time).
        hung = known and out.kind is sandbox.End.TIMED_OUT and \
            talk.stuck(self.limits.wall_s / 2) is not None
        for gid in blamed:
            done[gid] = decide.failed(self.known[gid].name, out) if hung else \
                self._alone(gid)
        rest = [g for g in left if g not in blamed]
        if rest:                  # what had not run yet, or ran and was cut short: together
            done.update(self.judge(rest))
        return done

    def _blamed(self, talk, left) -> tuple[list[str], bool]:
        """The exercises that were running when the run ended (the trusted side's account):
        the one being observed, or those running the cell that was, and True; else all, and
        False (nothing to go by)."""
        running = talk.running
        if running and running[0] == "case" and running[1] in left:
            return [running[1]], True
        if running and running[0] == "cell":
            owners = [g for g in left if running[1] in self.plan.owned[g]]
            if owners:
                return owners, True
        return list(left), False

    def _alone(self, gid) -> Result:
        """Judged again alone, so that an answer that brought the child down costs only its
        own exercise."""
        one, _, settled = self.attempt([gid])
        return settled[gid] or decide.failed(self.known[gid].name, one)
