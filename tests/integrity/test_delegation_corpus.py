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


# The second red team's routes, as classes: each spelled several ways, none by a private name.
# All read as honest before but the closure and the partial, which also name JAX's objects: they
# show the second line (what a wrapper or a partial hides). (name: grade id, lesson, the answer
# cell's function, the code appended to it)
SPY_BODY = """
def spy(f, in_axes, *args):
    f(*args)                          # no vmap at all: the patched helper says it was batched
    return [(None, tuple(x.shape), tuple(x.shape)) if a is None else
            (a % x.ndim, tuple(x.shape[:a % x.ndim] + x.shape[a % x.ndim + 1:]), tuple(x.shape))
            for x, a in zip(args, in_axes)]
"""
BORROWED_NEG = """
def softsign_rule(prim, vals, dims, **params):
    return _rule(prim, None, vals, dims, **params)
"""
SECOND_ROUND = {
    # getattr as a value: aliased, passed on, a default
    "getattr aliased": ("softsign_rule", "l1", "softsign_rule", """\
from jax import lax
_g = getattr
_tables = [_g(L1.batching, n) for n in L1.TABLE_NAMES if hasattr(L1.batching, n)]
_rule = next(t[lax.neg_p] for t in _tables if isinstance(t, dict) and lax.neg_p in t).func
""" + BORROWED_NEG),
    "getattr passed to reduce": ("sumsq_rule", "l1", "sumsq_rule", """\
import functools
from jax import lax
_t = functools.reduce(getattr, ["batching", L1.TABLE_NAMES[0]], L1)
def sumsq_rule(prim, vals, dims, *, axes):
    return _t[lax.reduce_sum_p](prim, None, vals, dims, axes=axes)
"""),
    "getattr as a default argument": ("l2_matchaxis", "l2", "my_matchaxis", """\
from jax._src.interpreters import batching as _b
def my_matchaxis(src, dst, x, size, sum_match=False, _look=getattr):
    return _look(_b, "sixahctam"[::-1])(_b.AxisData(None, size, None, None), src, dst, x, sum_match)
"""),
    # unittest.mock, however it is reached
    "mock.patch.object on the kit": ("spy", "l1", "spy", """\
from unittest import mock
mock.patch.object(L1.kit.observe, "vmap_report", lambda *a, **k: None).start()
""" + SPY_BODY),
    "mock.patch by dotted path": ("rowmax_rule", "l1", "rowmax_rule", """\
import unittest.mock
import jax.numpy as jnp
unittest.mock.patch("grader.kit.jaxprs.flow", lambda closed: {"eqns": [], "outs": ()}).start()
def rowmax_rule(prim, vals, dims, **params):
    (x,), (d,) = vals, dims
    return jnp.max(jnp.moveaxis(x, d, 0), axis=-1), 0
"""),
    "patch imported by name": ("l2_pairwise", "l2", "pairwise", """\
from unittest.mock import patch as _p
_p.object(L2.kit.observe, "pairwise", lambda fn, case: {}).start()
"""),
    # a module that can call code unnamed, reached as another module's attribute
    "inspect through the kit": ("softsign_rule", "l1", "softsign_rule", """\
from jax import lax
_ins = L1.kit.observe._jax.inspect
_rule = [v for n, v in _ins.getmembers(L1.batching)
         if isinstance(v, dict) and lax.neg_p in v][0][lax.neg_p].func
""" + BORROWED_NEG),
    "inspect imported from JAX": ("l2_pairwise", "l2", "pairwise", """\
from jax._src.api_util import inspect as _i
_vmap = _i.unwrap(jax.vmap)                 # past whatever wraps vmap to watch it
"""),
    "the judge's call watching switched off": ("l2_score_batch", "l2", "score_batch", """\
import sys, threading
for _tool in range(6):
    sys.monitoring.set_events(_tool, 0)
sys.settrace(None)
threading.setprofile(None)
"""),
    # a subscript store, or del, or a mutating call, on what the cell does not own
    "a kit helper replaced through its __dict__": ("spy", "l1", "spy", """\
_g = getattr
_g(_g(L1.kit.observe, "_jax"), "__di" + "ct__")["is_batch_tracer"] = lambda x: True
""" + SPY_BODY),
    "the course's table written into": ("l2_choose_axes", "l2", "choose_axes", """\
L2.FUNCTIONS["mv"] = L2.FUNCTIONS["scale"]
"""),
    "the course's table emptied through an alias": ("l2_choose_axes", "l2", "choose_axes", """\
_f = L2.kit.FUNCTIONS
for _k in list(_f):
    del _f[_k]
"""),
    "the course's table updated": ("l2_choose_axes", "l2", "choose_axes", """\
L2.FUNCTIONS.update(mv=L2.FUNCTIONS["scale"])
"""),
    "a call's result written into": ("softsign_rule", "l1", "softsign_rule", """\
(lambda m: m)(L1.REFERENCES)["softsign"] = lambda x: x
"""),
    # the originals behind wrappers and partials
    "a wrapper's closure read": ("l2_matchaxis", "l2", "my_matchaxis", """\
from jax._src.interpreters import batching as _b
_cells = _b.matchaxis.__closure__ or ()
_orig = [c.cell_contents for c in _cells if callable(c.cell_contents)]
_m = _orig[0] if _orig else _b.matchaxis
def my_matchaxis(src, dst, x, size, sum_match=False):
    return _m(_b.AxisData(None, size, None, None), src, dst, x, sum_match)
"""),
    "a wrapper's free variables listed": ("l2_matchaxis", "l2", "my_matchaxis", """\
from jax._src.interpreters import batching as _b
from jax._src import api_util
_w = dict(api_util.inspect.getmembers(_b))["sixahctam"[::-1]]
_m = api_util.inspect.getclosurevars(_w).nonlocals.get("original", _w)
def my_matchaxis(src, dst, x, size, sum_match=False):
    return _m(_b.AxisData(None, size, None, None), src, dst, x, sum_match)
"""),
    "a wrapper's defaults read": ("l2_pairwise", "l2", "pairwise", """\
_v = ([d for d in (jax.vmap.__defaults__ or ()) if callable(d)]
      + [d for d in (jax.vmap.__kwdefaults__ or {}).values() if callable(d)] or [jax.vmap])[0]
"""),
    "a partial's function taken from a table": ("sumsq_rule", "l1", "sumsq_rule", """\
from jax import lax
_rule = L1.batching.primitive_batchers[lax.reduce_sum_p].func
def sumsq_rule(prim, vals, dims, *, axes):
    return _rule(prim, None, vals, dims, axes=axes)
"""),
}


@pytest.mark.parametrize("variant", sorted(SECOND_ROUND))
def test_what_the_second_red_team_found_goes_to_a_human_and_costs_nothing_else(variant):
    grade_id, lesson, defines, source = SECOND_ROUND[variant]
    nb = nbformat.read(NOTEBOOKS[lesson], as_version=4)
    cell = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution")
                and c.cell_type == "code" and f"def {defines}" in c.source)
    cell.source += "\n" + source
    verdicts = runner.judge(nb, FAST)
    assert verdicts[grade_id].manual and not verdicts[grade_id].passed, verdicts[grade_id].summary()
    others = {g: r.passed for g, r in verdicts.items() if g != grade_id}
    assert all(others.values()), {g: verdicts[g].summary() for g, ok in others.items() if not ok}


@pytest.mark.parametrize("lesson, grade_id, defines", [("l1", "softsign_rule", "softsign_rule"),
                                                       ("l2", "l2_pairwise", "pairwise")])
def test_an_answer_too_deep_to_read_needs_a_human_and_the_others_keep_their_marks(
        lesson, grade_id, defines):
    nb = nbformat.read(NOTEBOOKS[lesson], as_version=4)
    cell = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution")
                and c.cell_type == "code" and f"def {defines}" in c.source)
    cell.source = "_total = " + "+".join(["1"] * 1000) + "\n" + cell.source
    verdicts = runner.judge(nb, FAST)
    assert verdicts[grade_id].manual and "too deeply" in verdicts[grade_id].manual
    others = {g: r.passed for g, r in verdicts.items() if g != grade_id}
    assert others and all(others.values()), {g: verdicts[g].summary() for g in others}

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


# The third red team's class: all answer cells share one namespace, so JAX's rule makers named in
# another exercise's cell (the spy's, the tables') and used by the rules, or the rules themselves
# defined there by a tuple target, loop or walrus (their own cells emptied: None). (name: {the
# function whose answer cell gets code appended: that code}, the exercises that must go to a
# human)
THROUGH = "from jax._src.traceback_util import api_boundary as _through\n"
THIRD_ROUND = {
    "aliases in the spy's cell, called through api_boundary": ({
        "spy": "VB, RB = B.vectorized_batcher, B.reducer_batcher\n",
        "softsign_rule": THROUGH + "def softsign_rule(prim, vals, dims, **params):\n"
                         "    return _through(VB)(prim, None, vals, dims, **params)\n",
        "sumsq_rule": THROUGH + "def sumsq_rule(prim, vals, dims, *, axes):\n"
                      "    return _through(RB)(prim, None, vals, dims, axes=axes)\n",
    }, {"softsign_rule", "sumsq_rule"}),
    "the rules defined in the spy's cell by a tuple target": ({
        "spy": JAX_RULE + "softsign_rule, sumsq_rule = (_jax_rule(_b.vectorized_batcher),\n"
                          "                             _jax_rule(_b.reducer_batcher))\n",
        "softsign_rule": None, "sumsq_rule": None,
    }, {"softsign_rule", "sumsq_rule"}),
    "a rule bound by a loop and a walrus in another cell": ({
        "spy": JAX_RULE + "for softsign_rule in [_jax_rule(_b.vectorized_batcher)]:\n    pass\n"
                          "if (sumsq_rule := _jax_rule(_b.reducer_batcher)):\n    pass\n",
        "softsign_rule": None, "sumsq_rule": None,
    }, {"softsign_rule", "sumsq_rule"}),
    "a helper of the tables cell fetching by a computed name": ({
        "which_table": "def _look(m, n):\n    return getattr(m, n)\n",
        "softsign_rule": JAX_RULE + "softsign_rule = _jax_rule(_look(_b, 'vectorized' + "
                                    "'_batcher'))\n",
    }, {"softsign_rule"}),
    "a table a helper in the spy's cell fills": ({
        "spy": "H = {}\ndef _fill(d):\n    d['rb'] = B.reducer_batcher\n_fill(H)\n",
        "sumsq_rule": "def sumsq_rule(prim, vals, dims, *, axes):\n"
                      "    return H['rb'](prim, None, vals, dims, axes=axes)\n",
    }, {"sumsq_rule"}),
}


@pytest.mark.parametrize("variant", sorted(THIRD_ROUND))
def test_a_delegation_through_another_exercise_s_cell_goes_to_a_human_and_costs_nothing_else(
        variant):
    appended, culprits = THIRD_ROUND[variant]
    nb = nbformat.read(NOTEBOOKS["l1"], as_version=4)
    cells = {d: next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution")
                     and c.cell_type == "code" and f"def {d}" in c.source) for d in appended}
    for defines, source in appended.items():
        if source is None:
            cells[defines].source = "# moved above\n"
        else:
            cells[defines].source += "\n" + source
    verdicts = runner.judge(nb, FAST)
    assert {g for g, r in verdicts.items() if r.manual} == culprits, \
        {g: r.summary() for g, r in verdicts.items()}
    assert all(verdicts[g].passed for g in verdicts if g not in culprits)
