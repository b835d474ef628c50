"""Lesson 3's assignment through the real judge (grader.judge.runner: the sandboxed child, the
trusted comparison): the instructor's solutions earn every point, the released stubs none, and
the pattern-matching student, whose answers pass visible cases, no more than the stubs."""
import math

import jax
import jax.numpy as jnp
import pytest
from jax import lax

pytest.importorskip("nbgrader", reason="grading needs the instructor tools (JAX 0.4.38's venv has none)")

from grader.judge import sandbox
from grader.lessons import l3_batching_whole_programs as L3
from grader.lessons.l3_batching_whole_programs import cond_plan, map_or_vmap, scan_plan, while_plan

from .. import judged
from . import answers as A

ASSIGNMENT = "03-batching-whole-programs"
FAST = sandbox.Limits(wall_s=120, cpu_s=240, memory_mb=4096)
EXERCISES = {"cond_plan": cond_plan.COND_PLAN, "scan_plan": scan_plan.SCAN_PLAN,
             "while_plan": while_plan.WHILE_PLAN, "run_batched": map_or_vmap.MAP_OR_VMAP}
GRADED = {ex.grade_id for ex in EXERCISES.values()}


def learnt(visible, right) -> dict:
    """The visible specs' answers, as a student copies them from the visible checks' output."""
    return {repr(sorted(spec.items())): right(spec) for spec in visible}


# What the pattern-matching student hands in: each visible spec's answer by heart and, for the rest,
# a rule of thumb (exercises 1-3); the one chunk a visible case needed (exercise 4).
MATCHING = {
    "cond_plan": f'''\
LEARNT = {learnt(cond_plan.VISIBLE, A.cond_plan)!r}

def cond_plan(spec):
    """Kept unless the predicate is batched, nothing widened, outputs batched if anything is."""
    if repr(sorted(spec.items())) in LEARNT:
        return LEARNT[repr(sorted(spec.items()))]
    return {{"kept": not spec["pred"], "widened": [],
             "out_batched": [spec["pred"] or any(spec["operands"])] * len(spec["true"])}}
''',
    "scan_plan": f'''\
LEARNT = {learnt(scan_plan.VISIBLE, A.scan_plan)!r}

def scan_plan(spec):
    """One pass over the body, no fixpoint: a carry is batched if its own inputs are."""
    if repr(sorted(spec.items())) in LEARNT:
        return LEARNT[repr(sorted(spec.items()))]
    carry = [c["init"] or (c["x"] and spec["xs"]) or (c["k"] and spec["const"])
             for c in spec["carries"]]
    ys = [any(carry[j] for j in y["reads"]) or (y["x"] and spec["xs"]) for y in spec["ys"]]
    return {{"carry": carry, "ys": ys,
             "broadcast": [i for i, c in enumerate(spec["carries"]) if carry[i] and not c["init"]]}}
''',
    "while_plan": f'''\
LEARNT = {learnt(while_plan.VISIBLE, A.while_plan)!r}

def while_plan(spec):
    """A scan's carries, the slowest example's trips, and no example ever held."""
    if repr(sorted(spec.items())) in LEARNT:
        return LEARNT[repr(sorted(spec.items()))]
    carry = [spec["limit"]] + [c["init"] or (c["k"] and spec["const"]) for c in spec["carries"]]
    return {{"pred_batched": spec["limit"], "carry": carry, "trips": max(spec["limits"]),
             "held": [0] * spec["B"]}}
''',
    "run_batched": '''\
def run_batched(f, xs, limit):
    """The chunk the one visible case that needed a chunk took, learnt by heart."""
    return lax.map(f, xs, batch_size=min(xs.shape[0], 6))
''',
}


def test_each_pattern_matching_answer_passes_a_visible_case():
    for name, code in MATCHING.items():
        namespace = {"jax": jax, "jnp": jnp, "lax": lax, "math": math, "L3": L3}
        exec(code, namespace)
        res = EXERCISES[name].check(namespace[name])
        assert res.failed < res.cases, (name, res.summary())


@pytest.fixture(scope="module")
def verdicts():
    return judged.verdicts(ASSIGNMENT, MATCHING, FAST)


def test_the_instructor_solutions_earn_every_point(verdicts):
    judged.assert_solved_earns_every_point(verdicts["solved"], GRADED)


def test_the_released_stubs_earn_nothing(verdicts):
    judged.assert_earns_nothing(verdicts["blank"], GRADED)


def test_the_pattern_matching_student_earns_no_more_than_a_blank(verdicts):
    judged.assert_matcher_earns_no_more_than_a_blank(verdicts["matching"], GRADED)
