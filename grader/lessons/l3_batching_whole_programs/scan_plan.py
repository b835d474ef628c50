"""Exercise 2: ``scan_plan(spec)``: predict which carries and ys of a ``lax.scan`` vmap batches,
and which unbatched initial carries it broadcasts, without running JAX."""
from __future__ import annotations

from dataclasses import replace

from ...exercise import Delegating, Exercise, fresh_cases
from ...feedback import Finding
from .kit import observe
from .plans import NO_JAX, batched_closure, chain, form_finding, where
from .programs import jax_scan_plan

VISIBLE = (
    {"B": 5, "xs": True, "const": False,
     "carries": [{"init": False, "reads": [0], "x": True, "k": False},
                 {"init": False, "reads": [1], "x": False, "k": False}],
     "ys": [{"reads": [1], "x": False}]},
    {"B": 4, "xs": False, "const": True,
     "carries": [{"init": False, "reads": [1], "x": False, "k": False},
                 {"init": False, "reads": [1], "x": False, "k": True},
                 {"init": True, "reads": [], "x": False, "k": False}],
     "ys": [{"reads": [2], "x": True}]},
)


def _carry(rng, n: int) -> dict:
    return {"init": bool(rng.random() < 0.25),
            "reads": sorted(int(j) for j in rng.choice(n, size=min(n, int(rng.integers(0, 3))),
                                                       replace=False)),
            "x": bool(rng.random() < 0.3), "k": bool(rng.random() < 0.3)}


def _draw(rng) -> dict:
    n = int(rng.integers(2, 5))
    ys = [{"reads": sorted(int(j) for j in rng.choice(n, size=min(n, int(rng.integers(0, 2))),
                                                      replace=False)),
           "x": bool(rng.random() < 0.3)} for _ in range(int(rng.integers(1, 3)))]
    return {"B": int(rng.choice([4, 5, 6, 7])), "xs": bool(rng.random() < 0.5),
            "const": bool(rng.random() < 0.5), "carries": [_carry(rng, n) for _ in range(n)],
            "ys": ys}


def _interesting(case) -> bool:
    """A case whose answer needs the fixpoint: some carry is batched only through another."""
    inputs = {"x": case["xs"], "k": case["const"]}
    on = batched_closure(case["carries"], inputs)
    direct = [c["init"] or any(c[k] and b for k, b in inputs.items()) for c in case["carries"]]
    return on != direct and not all(on)


def cases(rng, hidden: bool) -> list[dict]:
    if not hidden:
        return [dict(c) for c in VISIBLE]
    return fresh_cases(lambda i: (lambda c: c if i % 2 or _interesting(c) else None)(_draw(rng)),
                       VISIBLE, 6)


def expect(case) -> dict:
    return jax_scan_plan(case)


def _keys(case) -> dict:
    n = len(case["carries"])
    return {"carry": ("bool", n), "ys": ("bool", len(case["ys"])), "broadcast": ("int", None)}


def _reads(spec) -> str:
    parts = [f"c{j}" for j in spec["reads"]] + (["x"] if spec.get("x") else []) + \
        (["k"] if spec.get("k") else [])
    return ", ".join(parts) or "nothing"


def compare(case, exp, got) -> Finding | None:
    form = form_finding(case, got, _keys(case))
    if form:
        return form
    mine = got["answer"]
    if mine == exp:
        return None
    inputs = {"x": case["xs"], "k": case["const"]}
    if mine["carry"] != exp["carry"]:
        i = next(j for j, (a, b) in enumerate(zip(exp["carry"], mine["carry"])) if a != b)
        spec = case["carries"][i]
        if exp["carry"][i]:
            hint = (f"carry c{i} reads {_reads(spec)}, and it becomes batched through "
                    f"{chain(case['carries'], i, inputs)}: once a carry comes out of the body "
                    f"batched it must go in batched, so the fixpoint adds it.")
        else:
            hint = (f"carry c{i} starts unbatched and its update reads {_reads(spec)}: nothing "
                    f"batched ever reaches it, so the fixpoint leaves it a single unbatched value.")
    elif mine["ys"] != exp["ys"]:
        i = next(j for j, (a, b) in enumerate(zip(exp["ys"], mine["ys"])) if a != b)
        spec = case["ys"][i]
        hint = (f"y{i} reads {_reads(spec)} (the carries as they enter the body); it is batched "
                f"exactly when one of those is batched{', and x is' if case['xs'] else ''}: "
                f"{'batched' if exp['ys'][i] else 'unbatched'}.")
    else:
        hint = (f"the carries that start unbatched but end batched are broadcast to the full "
                f"batch before the scan: {exp['broadcast']} (a carry batched from the start is "
                f"not; an unbatched one that stays unbatched is not).")
    return Finding(where(case), str(exp), str(mine), hint)


# A delegating answer, which the judge must send to a human (tests/lessons/test_contract.py): a
# real threat: it earns full marks where nothing reads it.
DELEGATING = Delegating("""\
from grader.lessons.l3_batching_whole_programs import programs as _jax_did
def scan_plan(spec):
    return _jax_did.jax_scan_plan(spec)
""")

SCAN_PLAN = Exercise("l3_scan_plan", 3, ("scan_plan",), observe.plan, cases, expect, compare,
                     name="check_scan_plan", delegation=replace(NO_JAX, examples=(DELEGATING,)),
                     failure_hint="scan_plan(spec) should return a dict: carry, ys, broadcast.")
check_scan_plan = SCAN_PLAN.checker()

__all__ = ["SCAN_PLAN", "check_scan_plan"]
