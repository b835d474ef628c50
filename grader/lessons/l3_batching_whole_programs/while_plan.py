"""Exercise 3: ``while_plan(spec)``: predict whether a vmapped ``lax.while_loop``'s predicate is
batched, which carries are, how often the batched body runs and how long each example is held."""
from __future__ import annotations

from dataclasses import replace

from ...exercise import Delegating, Exercise, fresh_cases
from ...feedback import Finding
from .kit import observe
from .plans import NO_JAX, batched_closure, chain, form_finding, where
from .programs import jax_while_plan

VISIBLE = (
    {"B": 4, "limit": True, "limits": [2, 5, 1, 3], "const": False, "pred_reads": [],
     "carries": [{"init": False, "reads": [0], "k": False}]},
    {"B": 5, "limit": False, "limits": [4], "const": True, "pred_reads": [],
     "carries": [{"init": False, "reads": [0], "k": True}, {"init": False, "reads": [1], "k": False}]},
)


def _draw(rng, limit: bool) -> dict:
    n, size = int(rng.integers(1, 4)), int(rng.choice([4, 5, 6, 7]))
    carries = [{"init": bool(rng.random() < 0.25),
                "reads": sorted(int(j) for j in rng.choice(n, size=min(n, int(rng.integers(0, 3))),
                                                           replace=False)),
                "k": bool(rng.random() < 0.3)} for _ in range(n)]
    limits = [int(v) for v in rng.integers(0, 7, size=size)] if limit else [int(rng.integers(1, 7))]
    reads = sorted(int(j) for j in rng.choice(n, size=min(n, int(rng.integers(0, 2))),
                                              replace=False))
    return {"B": size, "limit": limit, "limits": limits, "const": bool(rng.random() < 0.5),
            "pred_reads": reads, "carries": carries}


def cases(rng, hidden: bool) -> list[dict]:
    if not hidden:
        return [dict(c) for c in VISIBLE]
    return fresh_cases(lambda i: _draw(rng, limit=i % 3 == 0), VISIBLE, 6)


def expect(case) -> dict:
    return jax_while_plan(case)


def _keys(case) -> dict:
    return {"pred_batched": "bool", "carry": ("bool", 1 + len(case["carries"])), "trips": "int",
            "held": ("int", case["B"])}


def _pred_hint(case) -> str:
    inputs = {"k": case["const"]}
    on = batched_closure(case["carries"], inputs)
    if case["limit"]:
        return "the predicate i < limit reads the limit, which is batched: the predicate is batched."
    read = [j for j in case["pred_reads"] if on[j]]
    if read:
        return (f"the predicate reads c{read[0]}, which is batched "
                f"({chain(case['carries'], read[0], inputs)}): the predicate is batched.")
    return ("the predicate reads the counter, the unbatched limit and "
            f"{', '.join(f'c{j}' for j in case['pred_reads']) or 'no carry'}, none of them batched "
            "once the fixpoint is done: the predicate is not batched.")


def compare(case, exp, got) -> Finding | None:
    form = form_finding(case, got, _keys(case))
    if form:
        return form
    mine = got["answer"]
    if mine == exp:
        return None
    if mine["pred_batched"] != exp["pred_batched"]:
        hint = _pred_hint(case)
    elif mine["carry"] != exp["carry"]:
        i = next(j for j, (a, b) in enumerate(zip(exp["carry"], mine["carry"])) if a != b)
        what = "the counter i" if i == 0 else f"carry c{i - 1}"
        if exp["pred_batched"]:
            hint = (f"the predicate is batched, so the rule makes EVERY carry batched ({what} "
                    f"too, even if nothing batched reaches it): one loop runs for all examples "
                    f"and each carry must hold every example's value.")
        elif i == 0:
            hint = "the counter starts at an unbatched 0 and adds 1: with an unbatched predicate it stays unbatched."
        else:
            inputs = {"k": case["const"]}
            hint = (f"with an unbatched predicate only the fixpoint decides: {what} "
                    + (f"becomes batched through {chain(case['carries'], i - 1, inputs)}."
                       if exp["carry"][i] else "never meets a batched value, so it stays unbatched."))
    elif mine["trips"] != exp["trips"]:
        hint = (f"the batched loop runs while ANY example is still running: as often as the "
                f"slowest example needs, max({case['limits']}) = {exp['trips']}."
                if case["limit"] else
                f"the predicate is the same for every example: the loop runs {exp['trips']} "
                f"times, as it would for one example.")
    else:
        hint = (f"an example is held (its body runs, and the select the loop's lowering adds "
                f"keeps its old carry) on every run after its own last one: trips minus its own "
                f"count, {exp['held']}.")
    return Finding(where(case), str(exp), str(mine), hint)


# A delegating answer, which the judge must send to a human (tests/lessons/test_contract.py): a
# real threat: it earns full marks where nothing reads it.
DELEGATING = Delegating("""\
from grader.lessons.l3_batching_whole_programs import programs as _jax_did
def while_plan(spec):
    return _jax_did.jax_while_plan(spec)
""")

WHILE_PLAN = Exercise("l3_while_plan", 3, ("while_plan",), observe.plan, cases, expect, compare,
                      name="check_while_plan", delegation=replace(NO_JAX, examples=(DELEGATING,)),
                      failure_hint="while_plan(spec) should return a dict: pred_batched, carry, "
                                   "trips, held.")
check_while_plan = WHILE_PLAN.checker()

__all__ = ["WHILE_PLAN", "check_while_plan"]
