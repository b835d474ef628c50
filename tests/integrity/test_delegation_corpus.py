"""Delegation, the red teams' corpus (each exercise's own delegating answers are declared beside it
and judged by tests/lessons/test_contract.py): an answer that hands the work to JAX's own
implementation, to the course's own helpers, or hides what it calls, goes to a human (needs
manual grading, with the reason), never to full marks or a silent zero; every other exercise of
the same notebook is graded as usual.

The answers reach for public names only (the course's documented helpers, JAX's batching
module, Python's builtins), so renaming a private helper cannot turn these tests green: what is
caught is the act (importing the course, naming JAX's rule makers, computed names), not a name.
"""
import nbformat
import pytest

from grader import lessons
from grader.judge import runner, sandbox
from grader.lessons.l1_rule_per_primitive import rule_cases
from tests.lessons import contract

# The exercise notebook of each lesson, found by its grade cells (tests/lessons/contract.py).
_ONE_EACH = {f"l{contract.lesson_of(ex)[1:].split('_')[0]}": g
             for g, ex in reversed(lessons.exercises().items())}
NOTEBOOKS = {lesson: contract.notebook_of(g) for lesson, g in _ONE_EACH.items()}
FAST = sandbox.Limits(wall_s=60, cpu_s=120, memory_mb=4096)
JAX_RULE = rule_cases.JAX_RULE


def declared(grade_id: str) -> str:
    """The delegating answer ``grade_id`` declares (grader/exercise.py's Delegating)."""
    return lessons.exercises()[grade_id].delegation.examples[0].source


# What the red team found the reading missed, each now read or seen. (name, lesson, the answer
# cell's function, the delegating code appended to it)
VARIANTS = {
    "a name assembled from pieces": ("moments_rule", "l1", "moments_rule", JAX_RULE + """\
import operator
moments_rule = _jax_rule(operator.attrgetter("reducer" + "_batcher")(_b))
"""),
    "a name spelled backwards": ("l2_where_it_lands", "l2", "where_it_lands", """\
import operator
_v = operator.attrgetter("pamv"[::-1])(jax)
def where_it_lands(program, in_dims):
    return _v(lambda *xs: 0.0)
"""),
    "a rule borrowed from JAX's own table": ("moments_rule", "l1", "moments_rule", """\
import operator
from jax import lax
from jax._src.interpreters import batching as _b
_table = operator.attrgetter("fancy_" + "primitive_" + "batchers")(_b)
def moments_rule(prim, vals, dims, **params):
    return _table[lax.reduce_sum_p].func(prim, None, vals, dims, axes=(params["axis"],))
"""),
    "vmap answering for it": ("l2_where_it_lands", "l2", "where_it_lands",
                              declared("l2_where_it_lands").replace("jax.vmap(", "(jax.vmap)(")),
    "the observers rebound through the set-up": ("l2_widened", "l2", "widened", """\
_obs = L2.kit.observe
_obs.widened = lambda fn, case: []
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
    return [[None if a is None else a % x.ndim] for x, a in zip(args, in_axes)]
"""
BORROWED_SUM = """
def moments_rule(prim, vals, dims, **params):
    return _rule(prim, None, vals, dims, axes=(params["axis"],))
"""
SECOND_ROUND = {
    # getattr as a value: aliased, passed on, a default
    "getattr aliased": ("moments_rule", "l1", "moments_rule", """\
from jax import lax
_g = getattr
_tables = [_g(L1.batching, n) for n in L1.TABLE_NAMES if hasattr(L1.batching, n)]
_rule = next(t[lax.reduce_sum_p] for t in _tables if isinstance(t, dict) and lax.reduce_sum_p in t).func
""" + BORROWED_SUM),
    "getattr passed to reduce": ("moments_rule", "l1", "moments_rule", """\
import functools
from jax import lax
_t = functools.reduce(getattr, ["batching", L1.TABLE_NAMES[0]], L1)
def moments_rule(prim, vals, dims, *, axis):
    return _t[lax.reduce_sum_p](prim, None, vals, dims, axes=(axis,))
"""),
    "getattr as a default argument": ("l2_where_it_lands", "l2", "where_it_lands", """\
def where_it_lands(program, in_dims, _look=getattr):
    return _look(jax, "pamv"[::-1])(lambda *xs: 0.0)
"""),
    # unittest.mock, however it is reached
    "mock.patch.object on the kit": ("spy", "l1", "spy", """\
from unittest import mock
mock.patch.object(L1.kit.observe, "vmap_depth", lambda: 1).start()
""" + SPY_BODY),
    "mock.patch by dotted path": ("stack2_rule", "l1", "stack2_rule", """\
import unittest.mock
import jax.numpy as jnp
unittest.mock.patch("grader.kit.jaxprs.flow", lambda closed: {"eqns": [], "outs": ()}).start()
def stack2_rule(prim, vals, dims, *, axis):
    (x, y), (dx, dy) = vals, dims
    return jnp.stack([jnp.moveaxis(x, dx, 0), jnp.moveaxis(y, dy, 0)], axis=axis + 1), 0
"""),
    "patch imported by name": ("l2_widened", "l2", "widened", """\
from unittest.mock import patch as _p
_p.object(L2.kit.observe, "widened", lambda fn, case: []).start()
"""),
    # a module that can call code unnamed, reached as another module's attribute
    "inspect through the kit": ("moments_rule", "l1", "moments_rule", """\
from jax import lax
_ins = L1.kit.observe._jax.inspect
_rule = [v for n, v in _ins.getmembers(L1.batching)
         if isinstance(v, dict) and lax.reduce_sum_p in v][0][lax.reduce_sum_p].func
""" + BORROWED_SUM),
    "inspect imported from JAX": ("l2_cheap_where", "l2", "cheap_where", """\
from jax._src.api_util import inspect as _i
_where = _i.unwrap(jnp.where)                 # past whatever wraps where to watch it
"""),
    "the judge's call watching switched off": ("l2_where_it_lands", "l2", "where_it_lands", """\
import sys, threading
for _tool in range(6):
    sys.monitoring.set_events(_tool, 0)
sys.settrace(None)
threading.setprofile(None)
"""),
    # a subscript store, or del, or a mutating call, on what the cell does not own
    "a kit helper replaced through its __dict__": ("spy", "l1", "spy", """\
_g = getattr
_g(L1.kit.observe, "__di" + "ct__")["vmap_depth"] = lambda: 1
""" + SPY_BODY),
    "the course's table written into": ("l2_widened", "l2", "widened", """\
L2.OPS["concat"] = L2.OPS["mul"]
"""),
    "the course's table emptied through an alias": ("l2_widened", "l2", "widened", """\
_f = L2.kit.OPS
for _k in list(_f):
    del _f[_k]
"""),
    "the course's table updated": ("l2_widened", "l2", "widened", """\
L2.OPS.update(concat=L2.OPS["mul"])
"""),
    "a call's result written into": ("moments_rule", "l1", "moments_rule", """\
(lambda m: m)(L1.REFERENCES)["moments"] = lambda x, axis: [x, x]
"""),
    # the originals behind wrappers and partials
    "a wrapper's closure read": ("l2_where_it_lands", "l2", "where_it_lands", """\
_cells = jax.vmap.__closure__ or ()
_orig = [c.cell_contents for c in _cells if callable(c.cell_contents)]
_v = _orig[0] if _orig else jax.vmap
"""),
    "a wrapper's free variables listed": ("l2_where_it_lands", "l2", "where_it_lands", """\
from jax._src import api_util
_w = dict(api_util.inspect.getmembers(jax))["pamv"[::-1]]
_v = api_util.inspect.getclosurevars(_w).nonlocals.get("fun", _w)
"""),
    "a wrapper's defaults read": ("l2_where_it_lands", "l2", "where_it_lands", """\
_v = ([d for d in (jax.vmap.__defaults__ or ()) if callable(d)]
      + [d for d in (jax.vmap.__kwdefaults__ or {}).values() if callable(d)] or [jax.vmap])[0]
"""),
    "a partial's function taken from a table": ("moments_rule", "l1", "moments_rule", """\
from jax import lax
_rule = L1.batching.primitive_batchers[lax.reduce_sum_p].func
def moments_rule(prim, vals, dims, *, axis):
    return _rule(prim, None, vals, dims, axes=(axis,))
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


@pytest.mark.parametrize("lesson, grade_id, defines", [("l1", "moments_rule", "moments_rule"),
                                                       ("l2", "l2_widened", "widened")])
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


# The third red team's class: all answer cells share one namespace, so JAX's rule makers named in
# another exercise's cell (the spy's, the prefix rule's) and used by the rules, or the rules themselves
# defined there by a tuple target, loop or walrus (their own cells emptied: None). (name: {the
# function whose answer cell gets code appended: that code}, the exercises that must go to a
# human)
THROUGH = "from jax._src.traceback_util import api_boundary as _through\n"
THIRD_ROUND = {
    "aliases in the spy's cell, called through api_boundary": ({
        "spy": "RB, BB = B.reducer_batcher, B.broadcast_batcher\n",
        "moments_rule": THROUGH + "def moments_rule(prim, vals, dims, *, axis):\n"
                        "    return _through(RB)(prim, None, vals, dims, axes=(axis,))\n",
        "stack2_rule": THROUGH + "def stack2_rule(prim, vals, dims, **params):\n"
                       "    return _through(BB)(prim, None, vals, dims, **params)\n",
    }, {"moments_rule", "stack2_rule"}),
    "the rules defined in the spy's cell by a tuple target": ({
        "spy": JAX_RULE + "moments_rule, stack2_rule = (_jax_rule(_b.reducer_batcher),\n"
                          "                             _jax_rule(_b.broadcast_batcher))\n",
        "moments_rule": None, "stack2_rule": None,
    }, {"moments_rule", "stack2_rule"}),
    "a rule bound by a loop and a walrus in another cell": ({
        "spy": JAX_RULE + "for moments_rule in [_jax_rule(_b.reducer_batcher)]:\n    pass\n"
                          "if (stack2_rule := _jax_rule(_b.broadcast_batcher)):\n    pass\n",
        "moments_rule": None, "stack2_rule": None,
    }, {"moments_rule", "stack2_rule"}),
    # (No exercise reads modules now, so the helper's own cell is flagged for itself too; the rule,
    # whose cell names nothing it may not, is read by what it uses of the prefix cell.)
    "a helper of the prefix cell fetching by a computed name": ({
        "prefix_rule": "def _look(m, n):\n    return getattr(m, n)\n",
        "moments_rule": JAX_RULE + "moments_rule = _jax_rule(_look(_b, 'reducer' + "
                                   "'_batcher'))\n",
    }, {"moments_rule", "prefix_rule"}),
    "a table a helper in the spy's cell fills": ({
        "spy": "H = {}\ndef _fill(d):\n    d['rb'] = B.broadcast_batcher\n_fill(H)\n",
        "stack2_rule": "def stack2_rule(prim, vals, dims, **params):\n"
                       "    return H['rb'](prim, None, vals, dims, **params)\n",
    }, {"stack2_rule"}),
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
    if "prefix_rule" in appended and "moments_rule" in culprits:
        assert "(in prefix_answer, whose code this answer uses)" in verdicts["moments_rule"].manual
