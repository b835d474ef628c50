"""Delegation, one answer per graded exercise: an answer that hands the work to JAX's own
implementation, to the course's own helpers, or hides what it calls, goes to a human (needs
manual grading, with the reason), never to full marks or a silent zero; every other exercise of
the same notebook is graded as usual.

The answers reach for public names only (the course's documented helpers, JAX's batching
module, Python's builtins), so renaming a private helper cannot turn these tests green: what is
caught is the act (importing the course, naming JAX's rule makers, computed names), not a name.
"""
import pathlib

import nbformat
import pytest

from grader import lessons
from grader.judge import runner, sandbox

ROOT = pathlib.Path(__file__).resolve().parents[2]
NOTEBOOKS = {"l1": ROOT / "exercises" / "01-the-rule-per-primitive" / "01-the-rule-per-primitive.ipynb",
             "l2": ROOT / "exercises" / "02-where-the-axis-goes" / "02-where-the-axis-goes.ipynb"}
FAST = sandbox.Limits(wall_s=60, cpu_s=120, memory_mb=4096)

JAX_RULE = """\
import functools
from jax._src.interpreters import batching as _b
def _jax_rule(maker):
    def rule(prim, vals, dims, **params):
        try:
            return maker(prim, vals, dims, **params)
        except TypeError:                     # newer releases take axis_data first
            return maker(prim, None, vals, dims, **params)
    return rule
"""

DELEGATES = {
    "spy": ("l1", "spy", """\
from grader import core
def spy(f, in_axes, *args):
    _, views = core.observe(f, in_axes, *args)
    return [(None, v.shape, v.shape) if a is None else (v.batch_dim, v.shape, v.val_shape)
            for v, a in zip(views, in_axes)]
"""),
    "softsign_rule": ("l1", "softsign_rule", JAX_RULE + "softsign_rule = _jax_rule(_b.vectorized_batcher)\n"),
    "scaled_diff_rule": ("l1", "scaled_diff_rule", JAX_RULE + "scaled_diff_rule = _jax_rule(_b.broadcast_batcher)\n"),
    "sumsq_rule": ("l1", "sumsq_rule", JAX_RULE + "sumsq_rule = _jax_rule(_b.reducer_batcher)\n"),
    "rowmax_rule": ("l1", "rowmax_rule", JAX_RULE + "rowmax_rule = _jax_rule(_b.vectorized_batcher)\n"),
    "which_table": ("l1", "which_table", """\
from grader import core
def which_table(module, prim):
    held = core.tables_holding(prim, module)
    return held[0] if held else None
"""),
    "table_sizes": ("l1", "table_sizes", """\
import grader.core as _c
def table_sizes(module):
    return {name: len(table) for name, table in _c.real_tables(module).items()}
"""),
    "l2_matchaxis": ("l2", "my_matchaxis", """\
from jax._src.interpreters import batching
from grader.core import matchaxis as _course
def my_matchaxis(src, dst, x, size, sum_match=False):
    return _course(src, dst, x, size, sum_match)
"""),
    "l2_choose_axes": ("l2", "choose_axes", """\
import jax.numpy as jnp
from grader.lessons import l2_where_the_axis_goes as _course
def choose_axes(layout):
    in_axes = tuple(a["batch"] for a in layout["args"])
    if layout["out"] != "free":
        return in_axes, layout["out"]
    args = [jnp.ones(tuple(7 if i == (a["batch"] or 0) % a["rank"] and a["batch"] is not None
                           else 3 for i in range(a["rank"]))) for a in layout["args"]]
    where = _course.natural(_course.FUNCTIONS[layout["fn"]], in_axes, args)
    return in_axes, (tuple(where) if layout["fn"] == "pair" else where[0])
"""),
    "l2_pairwise": ("l2", "pairwise", """\
import jax
_grid = eval("jax.vmap(jax.vmap(lambda a, b: a @ b, in_axes=(None, 0)), in_axes=(0, None))")
def pairwise(x, y, order="ij"):
    return _grid(x, y) if order == "ij" else _grid(y, x)
"""),
    "l2_score_batch": ("l2", "score_batch", """\
import jax, jax.numpy as jnp
exec("def score_batch(w, xs):\\n    return jax.vmap(lambda x: jnp.tanh(x @ w))(xs)\\n")
"""),
}


# Delegations that earn full marks when checked in the student's kernel: real threats, not
# straw men. (JAX has no rule to borrow for rowmax, and its broadcasting rule refuses
# scaled_diff's rank contract: those two only show the reading, not a working borrow.)
EARN_MARKS_IN_KERNEL = sorted(set(DELEGATES) - {"rowmax_rule", "scaled_diff_rule"})


def test_every_graded_exercise_has_a_delegating_answer_here():
    assert set(DELEGATES) == set(lessons.exercises())


@pytest.mark.parametrize("grade_id", EARN_MARKS_IN_KERNEL)
def test_the_delegation_would_earn_full_marks_where_nothing_reads_it(grade_id):
    import jax
    import jax.numpy as jnp
    import numpy as np
    from grader.lessons import l1_rule_per_primitive as L1, l2_where_the_axis_goes as L2
    namespace = {"jax": jax, "jnp": jnp, "np": np, "L1": L1, "L2": L2}
    exec(DELEGATES[grade_id][2], namespace)
    exercise = lessons.exercises()[grade_id]
    assert exercise.check(*[namespace[n] for n in exercise.needs], hidden=True, seed=7).passed


@pytest.mark.parametrize("grade_id", sorted(DELEGATES))
def test_a_delegating_answer_needs_manual_grading_and_costs_nothing_else(grade_id):
    lesson, defines, source = DELEGATES[grade_id]
    nb = nbformat.read(NOTEBOOKS[lesson], as_version=4)
    cell = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution")
                and c.cell_type == "code" and (f"def {defines}" in c.source))
    # Appended, so the cell's other answers stay (which_table and table_sizes share one cell:
    # both are then read as delegating, since they are the same code).
    shared = {g for g, ex in lessons.exercises().items() if set(ex.needs) & runner._defines(cell.source)}
    cell.source += "\n" + source
    verdicts = runner.judge(nb, FAST)
    res = verdicts[grade_id]
    assert res.manual and not res.passed, res.summary()
    assert not res.findings                      # no silent zero: a human decides
    others = {g: r.passed for g, r in verdicts.items() if g not in shared | {grade_id}}
    assert all(others.values()), {g: verdicts[g].summary() for g, ok in others.items() if not ok}


# What the red team found the reading missed, each now read or seen. (name, lesson, the answer
# cell's function, the delegating code appended to it)
VARIANTS = {
    "a name assembled from pieces": ("softsign_rule", "l1", "softsign_rule", JAX_RULE + """\
import operator
softsign_rule = _jax_rule(operator.attrgetter("vectorized" + "_batcher")(_b))
"""),
    "a name spelled backwards": ("l2_matchaxis", "l2", "my_matchaxis", """\
import operator
from jax._src.interpreters import batching as _b
_m = operator.attrgetter("sixahctam"[::-1])(_b)
def my_matchaxis(src, dst, x, size, sum_match=False):
    return _m(_b.AxisData(None, size, None, None), src, dst, x, sum_match)
"""),
    "a rule borrowed from JAX's own table": ("softsign_rule", "l1", "softsign_rule", """\
import operator
from jax import lax
from jax._src.interpreters import batching as _b
_table = operator.attrgetter("fancy_" + "primitive_" + "batchers")(_b)
def softsign_rule(prim, vals, dims, **params):
    return _table[lax.neg_p].func(prim, None, vals, dims, **params)
"""),
    "vmap moving the axis for it": ("l2_matchaxis", "l2", "my_matchaxis", """\
import jax
import jax.numpy as jnp
def my_matchaxis(src, dst, x, size, sum_match=False):
    if src is not None and dst is None:
        if sum_match:
            return x.sum(src)
        raise ValueError("mapped to unmapped")
    return jax.vmap(lambda v: v, in_axes=src, out_axes=dst, axis_size=size)(x)
"""),
    "the observers rebound through the set-up": ("l2_pairwise", "l2", "pairwise", """\
_obs = L2.kit.observe
_obs.pairwise = lambda fn, case: {}
"""),
}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_what_the_red_team_found_goes_to_a_human(variant):
    grade_id, lesson, defines, source = VARIANTS[variant]
    nb = nbformat.read(NOTEBOOKS[lesson], as_version=4)
    cell = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution")
                and c.cell_type == "code" and f"def {defines}" in c.source)
    cell.source += "\n" + source
    res = runner.judge(nb, FAST)[grade_id]
    assert res.manual and not res.passed, res.summary()


def test_reading_a_module_with_vars_is_no_delegation_where_the_exercise_reads_modules():
    nb = nbformat.read(NOTEBOOKS["l1"], as_version=4)
    cell = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution")
                and "def which_table" in c.source)
    cell.source += ("\ndef which_table(batching_module, prim):\n"
                    "    tables = vars(batching_module)\n"
                    "    for name in L1.TABLE_NAMES:\n"
                    "        table = tables.get(name)\n"
                    "        if isinstance(table, dict) and prim in table:\n"
                    "            return name\n"
                    "    return None\n")
    verdicts = runner.judge(nb, FAST)
    assert verdicts["which_table"].passed and verdicts["table_sizes"].passed
