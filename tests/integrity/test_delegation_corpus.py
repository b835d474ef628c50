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
             "l2": ROOT / "exercises" / "02-where-the-axis-goes" / "02-where-the-axis-goes.ipynb",
             "l3": ROOT / "exercises" / "03-batching-whole-programs" / "03-batching-whole-programs.ipynb",
             "l4": ROOT / "exercises" / "04-vmap-meets-autodiff" / "04-vmap-meets-autodiff.ipynb"}
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
import jax
from grader.lessons.l1_rule_per_primitive.spy import _peeled
def spy(f, in_axes, *args):
    report = []
    def watched(*xs):
        report[:] = [_peeled(x) for x in xs]
        return f(*xs)
    jax.vmap(watched, in_axes=in_axes)(*args)
    return report
"""),
    "moments_rule": ("l1", "moments_rule", JAX_RULE + "moments_rule = _jax_rule(_b.reducer_batcher)\n"),
    "stack2_rule": ("l1", "stack2_rule", JAX_RULE + "stack2_rule = _jax_rule(_b.broadcast_batcher)\n"),
    "prefix_rule": ("l1", "prefix_rule", """\
from jax._src.lax import parallel as _parallel
def prefix_rule(prim, axis_data, vals, dims, *, axis_name):
    return _parallel._batched_reduction_collective(prim, prim, None, axis_data, vals, dims,
                                                   axes=(axis_name,), axis_index_groups=None)
"""),
    "l2_where_it_lands": ("l2", "where_it_lands", """\
import jax
def where_it_lands(program, in_dims):
    seen = {}
    def probe(*xs):
        values = dict(zip([n for n, _ in program["inputs"]], xs))
        for out, op, *args in program["steps"]:
            fn, n = L2.OPS[op]
            values[out] = fn(*(values[a] for a in args[:n]), *args[n:])
            seen[out] = getattr(values[out], "batch_dim", None)
        return 0.0
    structs = [jax.ShapeDtypeStruct(s if in_dims[n] is None else
                                    s[:in_dims[n]] + (7,) + s[in_dims[n]:], jnp.float32)
               for n, s in program["inputs"]]
    jax.eval_shape(jax.vmap(probe, in_axes=tuple(in_dims[n] for n, _ in program["inputs"])),
                   *structs)
    return {k: (None if v is None else int(v)) for k, v in seen.items()}
"""),
    "l2_widened": ("l2", "widened", """\
from grader.lessons.l2_where_the_axis_goes.widened import widenings as _widenings
def widened(jaxpr, in_axes, size):
    graph = L2.kit.observe.graph(jaxpr)
    return {path[0]: deps for path, _, deps in _widenings(graph, [in_axes], [size])}
"""),
    "l2_cheap_where": ("l2", "cheap_where", """\
import grader.lessons.l2_where_the_axis_goes.kit.programs as _course
def cheap_where(pred, x, y):
    p = pred.astype(x.dtype)
    return x * p + y * (1 - p)
"""),
    # Lesson 3's predictions: JAX traced on the spec (the course's own tracer of it) answers them.
    "l3_cond_plan": ("l3", "cond_plan", """\
from grader.lessons.l3_batching_whole_programs import programs as _jax_did
def cond_plan(spec):
    return _jax_did.jax_cond_plan(spec)
"""),
    "l3_scan_plan": ("l3", "scan_plan", """\
from grader.lessons.l3_batching_whole_programs import programs as _jax_did
def scan_plan(spec):
    return _jax_did.jax_scan_plan(spec)
"""),
    "l3_while_plan": ("l3", "while_plan", """\
from grader.lessons.l3_batching_whole_programs import programs as _jax_did
def while_plan(spec):
    return _jax_did.jax_while_plan(spec)
"""),
    "l3_map_or_vmap": ("l3", "run_batched", """\
import jax
from jax import lax
from grader.lessons.l3_batching_whole_programs import map_or_vmap as _course
def run_batched(f, xs, limit):
    b = _course.chunk({"B": xs.shape[0], "d": xs.shape[1], "limit": limit})
    return jax.vmap(f)(xs) if b == xs.shape[0] else lax.map(f, xs, batch_size=b)
"""),
    # Lesson 4: JAX's own jacobians for the jacobian; for the others JAX has nothing to borrow,
    # so the honest answer hidden from the reading (exec) stands for any hidden code.
    "l4_per_example_grads": ("l4", "per_example_grads", """\
import jax
exec("def per_example_grads(loss, params, batch, axes):\\n"
     "    return jax.vmap(jax.grad(loss), in_axes=(None, axes))(params, batch)\\n")
"""),
    "l4_clipped_scale": ("l4", "clipped_scale", """\
import jax, jax.numpy as jnp
exec("clipped_scale = jax.custom_vjp(lambda w, x: w * x)\\n"
     "clipped_scale.defvjp(lambda w, x: (w * x, (w, x)), lambda r, g: (jnp.sum(jnp.clip(g, -1, 1)"
     " * r[1], axis=tuple(range(r[1].ndim - r[0].ndim))), jnp.clip(g, -1, 1) * r[0]))\\n")
"""),
    "l4_floored_cummax": ("l4", "floored_cummax", """\
import jax, jax.numpy as jnp
exec("floored_cummax = jax.custom_batching.custom_vmap(lambda x, floor: L4.running_max(x, floor))\\n"
     "floored_cummax.def_vmap(lambda n, b, x, f: (floored_cummax(x if b[0] else jnp.broadcast_to("
     "x, (n,) + x.shape), f if b[1] else jnp.broadcast_to(f, (n,) + f.shape)), True))\\n")
"""),
    "l4_vmap_jacobian": ("l4", "vmap_jacobian", """\
import jax
def vmap_jacobian(f, x):
    tall = x.shape[0] < jax.eval_shape(f, x).shape[0]
    return (jax.jacfwd if tall else jax.jacrev)(f)(x)
"""),
}


# Delegations that earn full marks when checked in the student's kernel: real threats, not
# straw men. (JAX has no rule that batches moments, stack2 or prefix right, cheap_where has
# nothing of the course's to borrow, and the course computes the spy's answer from the case, never
# from tracers, so it holds nothing a spy could borrow: those five only show the reading, not a
# working borrow.)
EARN_MARKS_IN_KERNEL = sorted(set(DELEGATES) - {"spy", "moments_rule", "stack2_rule",
                                                 "prefix_rule", "l2_cheap_where"})


def test_every_graded_exercise_has_a_delegating_answer_here():
    assert set(DELEGATES) == set(lessons.exercises())


@pytest.mark.parametrize("grade_id", EARN_MARKS_IN_KERNEL)
def test_the_delegation_would_earn_full_marks_where_nothing_reads_it(grade_id):
    import jax
    import jax.numpy as jnp
    import numpy as np

    from grader.lessons import l1_rule_per_primitive as L1
    from grader.lessons import l2_where_the_axis_goes as L2
    from grader.lessons import l3_batching_whole_programs as L3
    from grader.lessons import l4_vmap_meets_autodiff as L4
    namespace = {"jax": jax, "jnp": jnp, "np": np, "L1": L1, "L2": L2, "L3": L3, "L4": L4}
    exec(DELEGATES[grade_id][2], namespace)
    exercise = lessons.exercises()[grade_id]
    assert exercise.check(*[namespace[n] for n in exercise.needs], hidden=True, seed=7).passed


@pytest.mark.parametrize("grade_id", sorted(DELEGATES))
def test_a_delegating_answer_needs_manual_grading_and_costs_nothing_else(grade_id):
    lesson, defines, source = DELEGATES[grade_id]
    nb = nbformat.read(NOTEBOOKS[lesson], as_version=4)
    cell = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution")
                and c.cell_type == "code" and (f"def {defines}" in c.source))
    # Appended, so the cell's other answers stay (where a cell defines several answers,
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
                              DELEGATES["l2_where_it_lands"][2].replace("jax.vmap(", "(jax.vmap)(")),
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
