"""Exercise 1: ``cond_plan(spec)``: predict what vmap makes of a ``lax.cond`` (kept or select_n,
which operands are widened to the batch, which outputs are batched), without running JAX."""
from __future__ import annotations

from dataclasses import replace

from ...exercise import Delegating, Exercise, fresh_cases
from ...feedback import Finding
from .kit import observe
from .plans import NO_JAX, form_finding, where
from .programs import jax_cond_plan

VISIBLE = (
    {"B": 5, "pred": False, "operands": [True, False], "true": [[0, 1]], "false": [[1]]},
    {"B": 5, "pred": True, "operands": [True, False], "true": [[0, 1]], "false": [[1]]},
    {"B": 4, "pred": False, "operands": [False, True, False], "true": [[0], [1]],
     "false": [[2], []]},
)


def _outputs(rng, n_ops: int, n_out: int) -> list[list[int]]:
    return [sorted(int(j) for j in rng.choice(n_ops, size=min(n_ops, int(rng.integers(0, 3))),
                                              replace=False)) for _ in range(n_out)]


def _draw(rng, pred: bool) -> dict:
    n_ops, n_out = int(rng.integers(2, 5)), int(rng.integers(1, 4))
    ops = [bool(rng.random() < 0.5) for _ in range(n_ops)]
    return {"B": int(rng.choice([4, 5, 6, 7, 8])), "pred": pred, "operands": ops,
            "true": _outputs(rng, n_ops, n_out), "false": _outputs(rng, n_ops, n_out)}


def cases(rng, hidden: bool) -> list[dict]:
    if not hidden:
        return [dict(c) for c in VISIBLE]
    return fresh_cases(lambda i: _batched(_draw(rng, pred=i % 2 == 1)), VISIBLE, 6)


def _batched(case: dict) -> dict | None:
    """A case with something batched (else there is nothing for vmap to do): drawn again."""
    return case if case["pred"] or any(case["operands"]) else None


def expect(case) -> dict:
    return jax_cond_plan(case)


KEYS = {"kept": "bool", "widened": ("int", None), "out_batched": ("bool", None)}


def _reads(case, i) -> str:
    t, f = case["true"][i], case["false"][i]
    return f"output {i} reads operands {t} in the true branch and {f} in the false branch"


def _out_hint(case, want, mine) -> str:
    i = next(k for k, (a, b) in enumerate(zip(want, mine)) if a != b)
    if case["pred"]:
        return (f"the predicate is batched, so every output comes out of a select_n over the "
                f"batch, batched, output {i} too, whatever it reads.")
    batched = [j for j in case["true"][i] + case["false"][i] if case["operands"][j]]
    if want[i]:
        return (f"{_reads(case, i)}; operand {batched[0]} is batched, and an output is batched "
                f"when any branch makes it batched (the other branch's is broadcast to agree).")
    return (f"{_reads(case, i)}, none of them batched: with an unbatched predicate the cond "
            f"passes unbatched operands through as they are, so output {i} stays unbatched.")


def compare(case, exp, got) -> Finding | None:
    form = form_finding(case, got, KEYS)
    if form:
        return form
    mine = got["answer"]
    if len(mine["out_batched"]) != len(exp["out_batched"]):
        return Finding(where(case), f"{len(exp['out_batched'])} entries in out_batched",
                       str(mine["out_batched"]), "One entry per output of the branches.")
    if mine == exp:
        return None
    shown = f"{exp}", f"{mine}"
    if mine["kept"] != exp["kept"]:
        hint = ("the predicate is batched: examples may take different branches, and one cond "
                "cannot do both, so the rule runs both branches on every example and select_n "
                "picks each one's result: no cond is left." if case["pred"] else
                "the predicate is not batched: every example takes the same branch, so the rule "
                "binds the cond again with batched branches; the cond stays.")
    elif sorted(mine["widened"]) != exp["widened"]:
        unbatched = [j for j, b in enumerate(case["operands"]) if not b]
        hint = (f"with a batched predicate the rule puts every operand through bdim_at_front "
                f"with the batch size: each unbatched one ({unbatched}) is broadcast to the full "
                f"batch, whether a branch reads it or not." if case["pred"] else
                "with an unbatched predicate no operand is widened before the cond: an "
                "unbatched operand goes in as it is (inside these branches, which add and take "
                "sin or cos elementwise, it meets the batch through the elementwise rules' "
                "size-1 axis).")
    else:
        hint = _out_hint(case, exp["out_batched"], mine["out_batched"])
    return Finding(where(case), shown[0], shown[1], hint)


# A delegating answer, which the judge must send to a human (tests/lessons/test_contract.py): a
# real threat: it earns full marks where nothing reads it.
DELEGATING = Delegating("""\
from grader.lessons.l3_batching_whole_programs import programs as _jax_did
def cond_plan(spec):
    return _jax_did.jax_cond_plan(spec)
""")

COND_PLAN = Exercise("l3_cond_plan", 3, ("cond_plan",), observe.plan, cases, expect, compare,
                     name="check_cond_plan", delegation=replace(NO_JAX, examples=(DELEGATING,)),
                     failure_hint="cond_plan(spec) should return a dict: kept, widened, "
                                  "out_batched.")
check_cond_plan = COND_PLAN.checker()

__all__ = ["COND_PLAN", "check_cond_plan", "VISIBLE_CONDS"]
VISIBLE_CONDS = VISIBLE
