"""Reading answers for delegation: what hands the work on is named, honest code is left alone."""
import pytest

from grader.exercise import Delegation
from grader.judge import runner
from grader.judge.delegation import TOO_DEEP, reasons

MATCHAXIS = Delegation(names=("matchaxis",))
HONEST = '''\
import jax.numpy as jnp
def my_matchaxis(src, dst, x, size, sum_match=False):
    """Like JAX's matchaxis, written out."""
    # JAX's batching.matchaxis does the same
    if src == dst:
        return x
    raise ValueError("mapped output but matchaxis was asked for None")
'''


def test_honest_code_with_the_name_in_comments_docstrings_and_messages_passes():
    assert reasons([HONEST], MATCHAXIS) == []


@pytest.mark.parametrize("source, words", [
    ("from jax._src.interpreters import batching\nf = batching.matchaxis", "uses `matchaxis`"),
    ("from jax._src.interpreters.batching import matchaxis as m", "imports `matchaxis`"),
    ("import operator\nf = operator.attrgetter('matchaxis')", "names `matchaxis` in a string"),
    ("f = getattr(batching, 'matchaxis')", "names `matchaxis` in a string"),
    ("import pydoc\nf = pydoc.locate('jax._src.interpreters.batching.matchaxis')", "names `matchaxis`"),
    ("import grader.core\n", "course's own package"),
    ("from grader.lessons import l2_where_the_axis_goes as L\n", "course's own package"),
    ("f = eval('1 + 1')", "`eval`"),
    ("exec('x = 1')", "`exec`"),
    ("m = __import__('os')", "`__import__`"),
    ("import importlib\n", "`importlib`"),
    ("f = getattr(object, 'match' + 'axis')", "computed attribute name"),
    ("g = globals()['x']", "`globals`"),
    ("d = (lambda: 0).__globals__", "`.__globals__`"),
    ("import sys\nm = sys.modules['jax']", "`.modules`"),
])
def test_each_way_of_handing_the_work_on_is_named(source, words):
    found = reasons([source], MATCHAXIS)
    assert any(words in r for r in found), found


def test_computed_getattr_is_allowed_where_the_exercise_is_reading_modules():
    source = "def f(m, names):\n    return [getattr(m, n, None) for n in names]\n"
    assert reasons([source], Delegation(dynamic=True)) == []
    assert reasons([source], Delegation()) != []


def test_code_that_does_not_parse_is_left_to_the_judge():
    assert reasons(["def broken(:\n"], MATCHAXIS) == []


def test_a_null_byte_is_left_to_the_judge_on_every_python():
    assert reasons(["x = 1\x00"], MATCHAXIS) == []


SOFTSIGN = Delegation(names=("vectorized_batcher",))


@pytest.mark.parametrize("source, words", [
    # getattr as a value: whoever calls it may pass any name
    ("_g = getattr\nt = _g(L1.batching, n)", "uses `getattr` other than"),
    ("import functools\nt = functools.reduce(getattr, ['a', 'b'], L1)", "uses `getattr` other than"),
    ("def f(m, g=getattr):\n    return g(m, 'x')", "uses `getattr` other than"),
    ("t = getattr(*[L1.batching, 'x'])", "computed attribute name"),
    ("t = [f(L1, 'x') for f in (getattr,)]", "uses `getattr` other than"),
    ("import builtins\n", "`builtins`"),
    ("t = L1.kit.getattr(L1, 'x')", "`.getattr`"),
    # unittest.mock, however imported
    ("from unittest import mock\nmock.patch.object(L1.kit, 'x', 1).start()", "`unittest.mock`"),
    ("from unittest.mock import patch\n", "`unittest.mock`"),
    ("import unittest.mock as m\n", "`unittest.mock`"),
    ("import unittest\nunittest.mock.patch('a.b', 1).start()", "`mock`"),
    ("import mock\n", "`mock`"),
    # a hiding module reached through another module, or imported from one
    ("i = L1.kit.observe._jax.inspect", "reaches `inspect` through another module"),
    ("from jax._src import api_util\nm = api_util.inspect.getmembers(L1)", "`inspect`"),
    ("from jax._src.api_util import inspect\n", "api_util.inspect`"),
    ("x = getattr(L1.kit, 'gc')", "reads `gc` with `getattr`"),
    ("import sys\nsys.monitoring.use_tool_id(3, 'me')", "`.monitoring`"),
    ("import sys\nsys.settrace(None)", "`.settrace`"),
    ("import sys\nsys.setprofile(None)", "`.setprofile`"),
    ("import threading\nthreading.settrace(print)", "`.settrace`"),
    ("from sys import monitoring\n", "`monitoring`"),
    # a subscript store or del on what the cell does not own
    ("L1.kit.observe.__dict__['f'] = 1", "changes `L1.kit.observe.__dict__['f']`"),
    ("f(L1)['is_batch_tracer'] = lambda x: True", "changes `f(L1)['is_batch_tracer']`"),
    ("from jax._src.interpreters import batching as b\nb.primitive_batchers[p] = r",
     "changes `b.primitive_batchers[p]`"),
    ("t = L1.batching.primitive_batchers\nt[p] = r", "changes `t[p]`"),
    ("t = getattr(L1.batching, 'primitive_batchers')\nt[p] = r", "changes `t[p]`"),
    ("del L1.batching.primitive_batchers[p]", "changes `L1.batching.primitive_batchers[p]`"),
    ("L1.table[k], x = 1, 2", "changes `L1.table[k]`"),
    ("L1.batching.primitive_batchers.update({p: r})", "with `.update()`"),
    ("L1.batching.primitive_batchers.pop(p)", "with `.pop()`"),
    ("import operator\noperator.setitem(L1.t, k, v)", "`.setitem`"),
    ("L1.t.__setitem__(k, v)", "`.__setitem__`"),
    # the originals behind wrappers and partials
    ("o = [c.cell_contents for c in f.__closure__]", "`.cell_contents`"),
    ("o = f.__defaults__", "`.__defaults__`"),
    ("o = f.__kwdefaults__", "`.__kwdefaults__`"),
    ("o = f.__code__.co_consts", "`.__code__`"),
    ("o = x.co_consts", "`.co_consts`"),
    ("o = x.getclosurevars(f).nonlocals", "`.getclosurevars`"),
    ("o = L1.batching.fancy_primitive_batchers[p].func", "`.func` of something it looked up"),
    ("o = next(iter(L1.tables)).keywords", "`.keywords` of something it looked up"),
    # third round: a dotted path, or an attribute, taken from a string at run time
    ("import pydoc\no = pydoc.locate('jax.' + 'lax')", "`pydoc`"),
    ("from pydoc import locate\no = locate(p)", "`pydoc`"),
    ("o = L1.pydoc.locate(p)", "`pydoc`"),
    ("o = locate(p)", "`locate`"),
    ("import string\no = string.Formatter().get_field('0.__class__', [f], {})", "`.get_field`"),
    ("import functools\nfunctools.update_wrapper(L1.kit, ns, assigned=('f',), updated=())",
     "`.update_wrapper`"),
    # ninth round: a frame's builtins and globals, from a traceback, a generator or a coroutine
    ("try:\n    raise LookupError\nexcept LookupError as e:\n    b = e.__traceback__\n",
     "`.__traceback__`"),
    ("import sys\nb = sys.exc_info()[2].tb_frame", "`.tb_frame`"),
    ("b = t.tb_next", "`.tb_next`"),
    ("g = f.f_builtins['get' + 'attr']", "`.f_builtins`"),
    ("g = f.f_globals", "`.f_globals`"),
    ("g = f.f_locals", "`.f_locals`"),
    ("g = f.f_back", "`.f_back`"),
    ("c = f.f_code", "`.f_code`"),
    ("g = (x for x in ()).gi_frame.f_builtins", "`.gi_frame`"),
    ("async def c():\n    pass\ng = c().cr_frame", "`.cr_frame`"),
    ("async def a():\n    yield\ng = a().ag_frame", "`.ag_frame`"),
    ("g = x.gi_yieldfrom", "`.gi_yieldfrom`"),
    ("g = x.cr_await", "`.cr_await`"),
    ("g = x.ag_await", "`.ag_await`"),
    ("g = f.__builtins__", "`.__builtins__`"),
    ("g = getattr(e, '__trace' + 'back__')", "computed attribute name"),
    ("g = getattr(e, 'tb_frame')", "names `tb_frame` in a string"),
    # thirteenth round: names no attribute shows (a star import), the course's modules by a
    # string key, an object loaded from a "module:attr" string
    ("from sys import *\nw = modules['x']", "`import *`"),
    ("from os.path import *", "`import *`"),
    ("import sys\nw = sys.exc_info and d['grader.judge.box.tripwires']", "course's own package"),
    ("k = 'grader'\nw = d[k]", "course's own package"),
    ("from importlib.metadata import EntryPoint", "`importlib.metadata`"),
    ("e = ep.EntryPoint('n', 'jax._src.interpreters.batching:matchaxis', 'g').load()",
     "`.EntryPoint`"),
    ("e = entry_points(group='x')", "`entry_points`"),
])
def test_each_way_of_hiding_or_patching_is_named(source, words):
    found = reasons([source], SOFTSIGN)
    assert any(words in r for r in found), found


@pytest.mark.parametrize("source", [
    "def f(x, names):\n    out = {}\n    for n in names:\n        out[n] = getattr(x, 'shape')\n    return out\n",
    "report = []\ndef f(xs):\n    report[:] = [x.shape for x in xs]\n    del report[0]\n    return report\n",
    "def rule(prim, vals, dims, **params):\n    params.pop('axes', None)\n    cache = {}\n    cache.update(params)\n"
    "    return prim.bind(*vals, **cache), dims[0]\n",
    "import jax\njax.config.update('jax_enable_x64', True)\n",
    "from jax import config\nconfig.update('jax_enable_x64', False)\n",     # JAX's docs' spelling
    "from jax import config as c\nc.update('jax_enable_x64', False)\n",
    "def f(e):\n    try:\n        return g()\n    except ValueError as err:\n        return err.args[0]\n",
    "import functools\np = functools.partial(max, 1)\nq = p.func\n",
    "class A:\n    def __init__(self):\n        self.table = {}\n        self.table['x'] = 1\n",
])
def test_honest_stores_and_calls_are_no_patch(source):
    assert reasons([source], SOFTSIGN) == []


def test_a_written_out_getattr_is_no_hiding():
    assert reasons(["n = getattr(L1, 'TABLE_NAMES', ())"], SOFTSIGN) == []


DEEP = {"a long sum": "_total = " + "+".join(["1"] * 1000),
        "unary minus": "x = " + "-" * 200_000 + "1",
        "nested lambdas": "f = " + "lambda: " * 1000 + "1",
        "a conditional chain": "x = " + "1 if y else " * 2000 + "1"}


@pytest.mark.parametrize("shape", sorted(DEEP))
def test_code_too_deep_to_read_needs_a_human_and_raises_nothing(shape):
    assert reasons(["def ok(x):\n    return x\n", DEEP[shape]], MATCHAXIS) == [TOO_DEEP]


def test_deep_but_readable_code_is_read_as_usual():
    nested = "x = " + "f(" * 150 + ")" * 150 + "\ny = " + "[" * 150 + "]" * 150
    assert reasons([nested], MATCHAXIS) == []
    assert reasons([nested + "\nz = eval('1')"], MATCHAXIS) != []


@pytest.mark.parametrize("shape", sorted(DEEP))
def test_the_plan_reads_a_deep_cell_without_raising(shape):
    assert runner._defines(DEEP[shape]) <= {"_total", "x", "f"}
    assert runner._defines("x = 1\x00") == set()


# Third round: every answer cell runs in one namespace, so each exercise is read against what it
# reaches of the other answer cells too. A name bound in the spy's cell, in every form Python
# binds one, and used by the moments rule: the rule is read as naming JAX's rule maker.
RULE = ("def moments_rule(prim, vals, dims, **params):\n"
        "    return api_boundary({use})(prim, None, vals, dims, **params)\n")
BINDINGS = {
    "assignment": ("VB = B.vectorized_batcher", "VB"),
    "a tuple target": ("VB, _x = B.vectorized_batcher, 1", "VB"),
    "a starred target": ("*_r, VB = [1, B.vectorized_batcher]", "VB"),
    "annotated": ("VB: object = B.vectorized_batcher", "VB"),
    "augmented": ("VB = []\nVB += [B.vectorized_batcher]", "VB[0]"),
    "a for loop": ("for VB in [B.vectorized_batcher]:\n    pass", "VB"),
    "with ... as": ("import contextlib\nwith contextlib.nullcontext(B.vectorized_batcher) as VB:\n"
                    "    pass", "VB"),
    "a walrus": ("if (VB := B.vectorized_batcher):\n    pass", "VB"),
    "import as": ("from jax._src.interpreters.batching import vectorized_batcher as VB", "VB"),
    "except as": ("try:\n    raise ValueError(B.vectorized_batcher)\nexcept ValueError as VB:\n"
                  "    _keep = VB", "_keep.args[0]"),
    "a match capture": ("match B.vectorized_batcher:\n    case VB:\n        pass", "VB"),
    "global in a function": ("def _f():\n    global VB\n    VB = B.vectorized_batcher\n_f()",
                             "VB"),
    "a dict a helper fills": ("H = {}\ndef _fill(d):\n    d['vb'] = B.vectorized_batcher\n"
                              "_fill(H)", "H['vb']"),
    "a class attribute": ("class K:\n    vb = B.vectorized_batcher", "K.vb"),
    "a helper function": ("def helper():\n    return B.vectorized_batcher", "helper()"),
}


def _notebook_with(spy_extra: str, rule: str):
    import os

    import nbformat

    from tools import classroom as C
    nb = nbformat.read(os.path.join(C.ROOT, "exercises", "01-the-rule-per-primitive",
                                    "01-the-rule-per-primitive.ipynb"), as_version=4)
    for cell in nb.cells:
        if "def spy(" in cell.source and cell.metadata.get("nbgrader", {}).get("solution"):
            cell.source += "\n" + spy_extra + "\n"
        elif "def moments_rule(" in cell.source and \
                cell.metadata.get("nbgrader", {}).get("solution"):
            cell.source = rule
    return nb


def reading(nb) -> dict:
    """``{grade id: reasons}`` as the judge reads ``nb`` before anything runs."""
    from grader import lessons
    known = lessons.exercises()
    template = runner.Template.of_notebook(nb)
    graded = [g for g in template.graded if g in known]
    return runner.readings(runner.plan(nb, template, graded), graded, known)


@pytest.mark.parametrize("form", sorted(BINDINGS))
def test_a_name_bound_in_another_answer_cell_is_read_against_the_exercise_using_it(form):
    bind, use = BINDINGS[form]
    found = reading(_notebook_with(bind, "from jax._src.traceback_util import api_boundary\n" +
                                   RULE.format(use=use)))
    assert any("vectorized_batcher" in r and "(in spy_answer" in r
               for r in found["moments_rule"]), found["moments_rule"]
    assert {g: r for g, r in found.items() if r and g != "moments_rule"} == {}


@pytest.mark.parametrize("target", ["moments_rule, _other = {rule}, 0",
                                    "(moments_rule, *_rest) = ({rule}, 1)",
                                    "for moments_rule in [{rule}]:\n    pass",
                                    "if (moments_rule := {rule}):\n    pass"])
def test_an_answer_defined_in_another_exercise_s_cell_by_any_binding_is_that_exercise_s(target):
    maker = "lambda prim, vals, dims, **p: B.vectorized_batcher(prim, None, vals, dims, **p)"
    nb = _notebook_with(target.format(rule=maker), "pass\n")
    assert any("vectorized_batcher" in r for r in reading(nb)["moments_rule"])


def test_what_another_cell_binds_but_the_exercise_never_uses_is_not_read_against_it():
    nb = _notebook_with("_mine = B.vectorized_batcher", (
        "def moments_rule(prim, vals, dims, **params):\n"
        "    (x,), (d,) = vals, dims\n    return prim.bind(x, **params), d\n"))
    assert reading(nb) == {g: [] for g in reading(nb)}


def test_a_dynamic_exercise_s_helper_used_elsewhere_is_read_by_the_user_s_rules():
    nb = _notebook_with("def _look(m, n):\n    return getattr(m, n)\n", (
        "def moments_rule(prim, vals, dims, **params):\n"
        "    f = _look(B, 'vectorized' + '_batcher')\n"
        "    return f(prim, None, vals, dims, **params)\n"))
    assert any("computed attribute name" in r for r in reading(nb)["moments_rule"])


# ---- the student's own names ---------------------------------------------------------------------
JACOBIAN = Delegation(names=("jacfwd", "jacrev", "jacobian", "_std_basis", "batching"))


@pytest.mark.parametrize("source", [
    "def vmap_jacobian(f, x):\n    jacobian = jax.vmap(f)(x)\n    return jacobian\n",
    "def vmap_jacobian(f, x):\n    for jacobian in [jax.vmap(f)(x)]:\n        return jacobian\n",
    "def vmap_jacobian(f, x, jacobian=None):\n    return jacobian\n",
    "def vmap_jacobian(f, x):\n    if (jacobian := jax.vmap(f)(x)) is not None:\n        return jacobian\n",
])
def test_a_plain_variable_sharing_a_forbidden_name_is_the_students_own(source):
    assert reasons([source], JACOBIAN) == []


@pytest.mark.parametrize("source", [
    # names a star import may have bound, made to look like the cell's own
    "from jax import *\nif 0:\n    jacfwd = None\nj = jacfwd(f)(x)\n",
    "from jax import *\ndef vmap_jacobian(f, x, jacfwd=jacfwd):\n    return jacfwd(f)(x)\n",
    "from jax import *\nj = [jacfwd for jacfwd in [jacfwd]][0]\n",
    "from jax import *\ndef vmap_jacobian(f, x):\n    global jacfwd\n    jacfwd = jacfwd\n"
    "    return jacfwd(f)(x)\n",
    "from jax._src.api import *\n@jacfwd\ndef g(x):\n    return x\n",
    # the module path of a from-import names it too
    "from jax._src.interpreters.batching import fancy_primitive_batchers\n",
    "def _std_basis(x):\n    return jnp.eye(x.size)\n"
    "def vmap_jacobian(f, x):\n    return jax.vmap(f)(_std_basis(x))\n",
    "_std_basis = lambda x: jnp.eye(x.size)\n"
    "def vmap_jacobian(f, x):\n    return jax.vmap(f)(_std_basis(x))\n",
    "class jacobian:\n    pass\nj = jacobian()\n",
    "jacobian = jax.jacobian\n",
    "from jax import jacfwd as mine\n",
    "jacobian = getattr(jax, 'jacrev')\n",
])
def test_code_bearing_a_forbidden_name_or_reaching_it_is_still_read_as_delegation(source):
    assert reasons([source], JACOBIAN) != []


PLANS = Delegation(names=("cond_plan", "cond_program"))


def test_calling_ones_own_answer_is_a_self_test_not_a_delegation():
    source = "def cond_plan(case):\n    return {}\nprint(cond_plan({'B': 2}))\n"
    assert reasons([source], PLANS) == ["it uses `cond_plan`, the implementation this exercise "
                                        "asks you to write"]      # read without the answers
    assert reasons([source], PLANS, answers={"cond_plan"}) == []
    # the course's helper of that name is the course's, answer or not
    assert reasons(["p = L3.cond_plan\n", "y = cond_program(1)\n"], PLANS,
                   answers={"cond_plan"}) != []


@pytest.mark.parametrize("grade_id, source", [
    # JAX's rule table, imported by the module path of a from-import (red team, round 4)
    ("l2_where_it_lands", "from jax._src.interpreters.batching import fancy_primitive_batchers as t\n"),
    ("l2_where_it_lands", "import jax\nt = jax._src.interpreters.batching.primitive_batchers\n"),
    # names a star import brought in, then made to look like the cell's own by a dead store
    ("l4_vmap_jacobian", "from jax.experimental.sparse import *\nif 0:\n    jacfwd = jacrev = None\n"
                         "def vmap_jacobian(f, x):\n    return jacrev(f)(x)\n"),
    # a class pattern reads attributes named by bare strings (``kwd_attrs``; red team, round 5)
    ("l2_where_it_lands", "import jax\nmatch jax:\n    case object(_src=object(interpreters=i)):\n"
                          "        match i:\n            case object(batching=object("
                          "fancy_primitive_batchers=t)):\n                pass\n"),
    ("l3_cond_plan", "import sys\nmatch sys:\n    case object(monitoring=m):\n"
                     "        m.register_callback(4, m.events.PY_START, None)\n"),
    ("l4_vmap_jacobian", "import jax\ndef vmap_jacobian(f, x):\n    match jax:\n"
                         "        case object(jacrev=rev):\n            return rev(f)(x)\n"),
    # a Formatter subclass's format_field is handed the object a computed field names (round 6)
    ("l4_vmap_jacobian", "import string, jax\nclass _F(string.Formatter):\n"
                         "    def format_field(self, value, spec):\n        return value\n"
                         "def vmap_jacobian(f, x):\n"
                         "    return _F().get_field('0.' + 'jac' + 'rev', (jax,), {})[0](f)(x)\n"),
    ("l4_vmap_jacobian", "from string import Formatter as _B\nimport jax\nclass _F(_B):\n"
                         "    pass\n"),
    # a console that compiles and runs the string it is given (round 7)
    ("l4_vmap_jacobian", "import jax\nfrom _pyrepl.console import InteractiveColoredConsole as _C\n"
                         "_C({}).runsource('pass', jax.__file__, 'single')\n"),
    # importlib's machinery reached through the path importer cache (round 8)
    ("l2_where_it_lands", "import sys\n_f = list(sys.path_importer_cache.values())[0]\n"),
    # getattr taken from a traceback's frame's builtins, names built by + (round 9)
    ("l2_where_it_lands", "import jax\ntry:\n    raise LookupError\nexcept LookupError as _e:\n"
                          "    _b = _e.__traceback__.tb_frame.f_builtins\n_ga = _b['get' + 'attr']\n"
                          "_t = _ga(_ga(jax._src.interpreters, 'batch' + 'ing'), 'fancy_' + 'x')\n"),
    ("l4_vmap_jacobian", "import jax\ntry:\n    raise LookupError\nexcept LookupError as _e:\n"
                         "    _b = _e.__traceback__.tb_frame.f_builtins\n_ga = _b['get' + 'attr']\n"
                         "def vmap_jacobian(f, x):\n    return _ga(jax, 'jac' + 'rev')(f)(x)\n"),
])
def test_the_red_teams_readings_are_flagged_by_the_exercises_own_rules(grade_id, source):
    from grader import lessons
    assert reasons([source], lessons.exercises()[grade_id].delegation) != []


# Thirteenth round: a module reached through an unpacking or a loop was taken for the cell's own.
@pytest.mark.parametrize("source", [
    "a, b = L1, 2\na.kit = None\n",
    "(a, b), c = (L1, L2), 0\nb.kit = None\n",
    "a, *rest = 0, L1\nrest[0].kit = None\n",
    "for m in (L1, L2):\n    m.kit = None\n",
    "for name, m in vars(L1).items():\n    m.kit = None\n",
    "for m in L1.tables:\n    m.clear()\n",
    "[m.update(x=1) for m in (L1,)]\n",
])
def test_a_module_unpacked_or_looped_over_is_still_not_the_cells_own(source):
    assert any("code it does not own" in r for r in reasons([source], SOFTSIGN)), source


@pytest.mark.parametrize("source", [
    "for i in range(3):\n    d = {}\n    d[i] = i\n",
    "a, b = [], {}\na.append(1)\nb['k'] = 2\n",
    "rows = [[0, 0], [0, 0]]\nfor row in rows:\n    row[0] = 1\n",
    "for n, v in zip([1], [2]):\n    out = {}\n    out[n] = v\n",
])
def test_the_cells_own_containers_unpacked_or_looped_over_are_its_own(source):
    assert reasons([source], SOFTSIGN) == [], source
