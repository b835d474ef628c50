"""The child's own defences, apart from the reading of the answer (which would refuse most of these
spellings before anything runs): each attack below is run by the child itself, in a process of
its own, and must come back tampered or tripped; the instructor's answers trip nothing."""
import os
import sys

import nbformat
import numpy as np
import pytest

from grader import lessons
from grader.judge import runner
from grader.judge.box import tamper
from tests.fixtures import judging
from tests.fixtures.attacks import DECOY_SPY_RUN
from tools import classroom as C

pytestmark = pytest.mark.filterwarnings("ignore::grader.judge.sandbox.SandboxUnavailable")

L1, L2 = "01-the-rule-per-primitive", "02-where-the-axis-goes"
KNOWN = lessons.exercises()


def source(assignment):
    return nbformat.read(os.path.join(C.ROOT, "exercises", assignment, assignment + ".ipynb"),
                         as_version=4)


def request(assignment, gids=None, answers=None):
    """The child's cells and cases for the instructor's notebook, the answer cell defining each
    name in ``answers`` replaced (set-up cells as released), for ``gids`` (every exercise if
    None), and the cells each exercise runs."""
    nb = source(assignment)
    template = runner.Template.of_notebook(nb)
    graded = [g for g in template.graded if g in KNOWN and (gids is None or g in gids)]
    plan = runner.plan(nb, template, graded)
    cells = [dict(c) for c in plan.cells_for([n for g in graded for n in plan.owned[g]])]
    for cell in cells:
        for name, code in (answers or {}).items():
            if cell["kind"] == "answer" and f"def {name}(" in cell["source"]:
                cell["source"] = code
    cases = {g: KNOWN[g].cases(np.random.default_rng(0), True)[:3] for g in graded}
    return cells, cases, plan.owned


def run_child(asked) -> dict:
    """The child as the sandbox runs it (without the box): a process of its own."""
    cells, cases, owned = asked
    found, _, _ = judging.run(cells, cases, owned, in_process=False)
    return found


@pytest.mark.parametrize("assignment", [L1, L2])
def test_the_instructors_answers_trip_nothing(assignment):
    got = run_child(request(assignment))
    assert set(got) == {g for g in runner.Template.of_notebook(source(assignment)).graded
                        if g in KNOWN}
    assert {g: (r["tripped"], r["tampered"]) for g, r in got.items()} == \
        {g: ([], []) for g in got}
    assert all(len(r["observed"]) == 3 for r in got.values())


PATCH_IS_BATCH_TRACER = [
    # a store into the module's dict, names assembled so no reading sees them
    'getattr(getattr(L1.kit.observe, "_jax"), "__di" + "ct__")["is_batch_tracer"] = '
    'lambda x: True\n',
    'from unittest import mock\n'
    'mock.patch.object(L1.kit.observe._jax, "is_batch_tracer", lambda x: True).start()\n',
    # the function kept, its code swapped for one that always says yes
    'L1.kit.observe._jax.is_batch_tracer.__code__ = (lambda x: True).__code__\n',
]
# A spy that runs no vmap at all: only a patched kit can believe it.


@pytest.mark.parametrize("patch", PATCH_IS_BATCH_TRACER, ids=["dict", "mock", "code"])
def test_a_patched_kit_helper_makes_the_exercise_tampered(patch):
    got = run_child(request(L1, ["spy", "moments_rule"], {"spy": patch + "\n" + DECOY_SPY_RUN}))
    for gid in ("spy", "moments_rule"):           # the first to see it, and every later one
        assert "grader.core._jax.is_batch_tracer" in " ".join(got[gid]["tampered"]), got[gid]
    assert "it changed the course's grader.core._jax.is_batch_tracer" in \
        tamper.reason(got["spy"]["tampered"])


def test_a_patch_made_while_observed_is_seen_by_that_exercise_not_the_earlier_ones():
    rule = ("def moments_rule(prim, vals, dims, **params):\n"
            "    import grader.core.jaxprs as J\n"
            "    J.__dict__['flow'] = lambda closed: {}\n"
            "    raise NotImplementedError\n")
    gids = ["spy", "moments_rule", "stack2_rule"]
    got = run_child(request(L1, gids, {"moments_rule": rule}))
    order = [g for g in runner.Template.of_notebook(source(L1)).graded if g in gids]
    first = order.index("moments_rule")
    assert first > 0 and all(got[g]["tampered"] == [] for g in order[:first])
    assert all("grader.core.jaxprs.flow" in got[g]["tampered"] for g in order[first:])


PATCH_FLOW = [
    'from unittest import mock\nimport grader.core.jaxprs as _jp\n_real = _jp.flow\n'
    'mock.patch.object(_jp, "flow", lambda closed: _real(closed)).start()\n',
    # defaults and closures: the function object stays, what it runs with does not
    'import grader.core.jaxprs as _jp\n'
    'for _f in list(vars(_jp).values()):\n'
    '    if getattr(_f, "__module__", "") == _jp.__name__ and getattr(_f, "__defaults__", 0):\n'
    '        _f.__defaults__ = tuple(list(_f.__defaults__))\n',
]


@pytest.mark.parametrize("patch", PATCH_FLOW, ids=["mock-flow", "defaults"])
def test_patching_the_kits_jaxpr_reading_is_seen(patch):
    got = run_child(request(L1, ["stack2_rule"], {"stack2_rule": patch + (
        "def stack2_rule(prim, vals, dims, **params):\n    raise NotImplementedError\n")}))
    assert any(t.startswith("grader.core.jaxprs.") for t in got["stack2_rule"]["tampered"])


def test_overwriting_one_of_jaxs_rules_is_seen():
    got = run_child(request(L1, ["moments_rule"], {"moments_rule": (
        "from jax import lax\n"
        "for _t in [getattr(L1.batching, n) for n in L1.TABLE_NAMES if hasattr(L1.batching, n)]:\n"
        "    if isinstance(_t, dict) and lax.neg_p in _t:\n"
        "        _t[lax.exp_p] = _t[lax.neg_p]\n"
        "def moments_rule(prim, vals, dims, **params):\n    raise NotImplementedError\n")}))
    assert any(t.endswith("[exp]") for t in got["moments_rule"]["tampered"]), got


# JAX's own rule makers reached through its tables' partials, which hold the original function.
TABLE_PARTIAL = """
from jax import lax
_tables = [getattr(L1.batching, n) for n in L1.TABLE_NAMES if hasattr(L1.batching, n)]
_neg_rule = next(t[lax.neg_p] for t in _tables if isinstance(t, dict) and lax.neg_p in t).func
def moments_rule(prim, vals, dims, **params):
    return _neg_rule(prim, None, vals, dims, **params)
"""


def test_a_rule_maker_read_out_of_a_tables_partial_is_seen():
    got = run_child(request(L1, ["moments_rule"], {"moments_rule": TABLE_PARTIAL}))
    assert got["moments_rule"]["tripped"] == [
        "jax._src.interpreters.batching:vectorized_batcher"]


VMAP_BY_CLOSURE = [
    # the watch's wrapper (3.11) hands out the original by its closure; 3.12+ has no wrapper
    'import jax\n_w = getattr(jax, "pamv"[::-1])\n'
    '_m = ([c.cell_contents for c in (_w.__closure__ or ()) if callable(c.cell_contents)\n'
    '       and getattr(c.cell_contents, "__name__", "") == _w.__name__] or [_w])[0]\n',
    'import inspect, jax\n'
    '_w = dict(inspect.getmembers(jax))["pamv"[::-1]]\n'
    '_m = inspect.getclosurevars(_w).nonlocals.get("original", _w)\n',
]
MY_LANDS = ("import jax.numpy as jnp\n"
            "def where_it_lands(program, in_dims):\n"
            "    _m(lambda x: x)(jnp.ones(3))\n"
            "    return {}\n")
VMAP = "jax._src.api:vmap"


@pytest.mark.parametrize("route", VMAP_BY_CLOSURE, ids=["closure", "getclosurevars"])
def test_vmap_read_out_of_the_watch_is_still_seen(route):
    got = run_child(request(L2, ["l2_where_it_lands"], {"where_it_lands": route + MY_LANDS}))
    assert VMAP in got["l2_where_it_lands"]["tripped"], got


# Third round: the call made through plain Python standing between the answer and JAX's rule
# maker (the watch once looked at the immediate caller only), and a copy of a watched function's
# code (then matchaxis's, now vmap's: the strict exercise's).
THROUGH_A_WRAPPER = [
    "import functools\nfrom jax._src.interpreters import batching as _b\n"
    "_call = functools.singledispatch(_b.vectorized_batcher)\n",
    "from unittest import mock\nfrom jax._src.interpreters import batching as _b\n"
    "_call = mock.Mock(side_effect=_b.vectorized_batcher)\n",
]


@pytest.mark.parametrize("route", THROUGH_A_WRAPPER, ids=["singledispatch", "mock-side-effect"])
def test_a_rule_maker_called_through_a_wrapper_is_seen(route):
    answer = route + ("def moments_rule(prim, vals, dims, **params):\n"
                      "    return _call(prim, None, vals, dims, **params)\n")
    got = run_child(request(L1, ["moments_rule"], {"moments_rule": answer}))
    assert got["moments_rule"]["tripped"] == [
        "jax._src.interpreters.batching:vectorized_batcher"], got


VMAP_COPY = (
    "import types, jax\n"
    "_o = jax.vmap.__wrapped__         # past JAX's own api_boundary wrapper\n"
    "_m = types.FunctionType(_o.__code__.replace(co_name='m'), _o.__globals__, 'm',\n"
    "                        _o.__defaults__, _o.__closure__)\n"
    "_m.__kwdefaults__ = _o.__kwdefaults__\n")


@pytest.mark.skipif(not hasattr(sys, "monitoring"), reason="3.11 watches by wrapper")
def test_a_copy_of_vmap_s_code_is_seen_in_strict_mode():
    got = run_child(request(L2, ["l2_where_it_lands"], {"where_it_lands": VMAP_COPY + MY_LANDS}))
    assert VMAP in got["l2_where_it_lands"]["tripped"], got


SWITCH_OFF = [
    "for _t in range(6):\n    if sys.monitoring.get_tool(_t):\n        sys.monitoring.free_tool_id(_t)\n",
    "for _t in range(6):\n    if sys.monitoring.get_tool(_t):\n"
    "        sys.monitoring.register_callback(_t, sys.monitoring.events.PY_START, None)\n",
    "import jax\nfor _t in range(6):\n"
    "    if sys.monitoring.get_tool(_t):\n"
    "        sys.monitoring.set_local_events(_t, jax.vmap.__wrapped__.__code__, 0)\n",
]


@pytest.mark.skipif(not hasattr(sys, "monitoring"), reason="sys.monitoring is Python 3.12+")
@pytest.mark.parametrize("off", SWITCH_OFF, ids=["free-the-tool", "drop-the-callback",
                                                 "clear-the-events"])
def test_switching_the_watch_off_makes_the_exercise_tampered(off):
    answer = ("import sys\n" + off + "import jax\n_m = jax.vmap\n" + MY_LANDS)
    got = run_child(request(L2, ["l2_where_it_lands"], {"where_it_lands": answer}))
    assert got["l2_where_it_lands"]["tampered"] == [tamper.MONITOR]
    assert "switched off the judge's watch on JAX's functions" in \
        tamper.reason(got["l2_where_it_lands"]["tampered"])


# Code nothing read before it ran: a module the answer writes and imports, strings compiled at run
# time by a helper the reading may not know (red team, round 5: what the reading misses, the child
# must still see).
EMPTY_LANDS = "def where_it_lands(program, in_dims):\n    return {}\n"
OUTSIDE_CODE = [
    "import os, sys, tempfile\n_d = tempfile.mkdtemp()\n"
    "with open(os.path.join(_d, 'helper_mod.py'), 'w') as _f:\n    _f.write('X = 1\\n')\n"
    "sys.path.insert(0, _d)\nimport helper_mod\n",
    "import timeit\ntimeit.timeit('x = 1', number=1)\n",
    "_x = [eval('1 + 1')]\n",
    # a watched function's code copied with padding (red team, round 6: the strict watch's copy
    # check compares bytecode exactly), then made a function
    "import jax\n_c = jax.jacrev.__code__\n_p = _c.replace(co_code=_c.co_code + bytes([9, 0]))\n",
    "def _h(x):\n    return x\n_g = type(_h)(_h.__code__, {})\n",
    # a console compiling a string under JAX's file name (round 7: _pyrepl's console, 3.13),
    # and the same claim made by compile itself
    "import code, jax\ncode.InteractiveConsole({}).runsource('_x = 1', jax.__file__)\n",
    "import jax\n_c = compile('_x = 1', jax.__file__, 'exec')\n",
    # an installed loader's source_to_code called by hand, and a loader subclass whose get_data
    # hands back the answer's own source (round 8: importlib's frames were taken for an import)
    "import sys, jax\n_l = [f for f in sys.path_importer_cache.values() if f is not None and\n"
    "      getattr(f, 'find_spec', None) and f.find_spec('jax')][0].find_spec('jax').loader\n"
    "_c = _l.source_to_code('_x = 1', jax.__file__)\n",
    "import sys, types, jax\n_l = [f for f in sys.path_importer_cache.values() if f is not None and\n"
    "      getattr(f, 'find_spec', None) and f.find_spec('jax')][0].find_spec('jax').loader\n"
    "class _R(type(_l)):\n    def get_data(self, path):\n        return b'_x = 1\\n'\n"
    "_R('_m', jax.__file__).exec_module(types.ModuleType('_m'))\n",
]


@pytest.mark.parametrize("code", OUTSIDE_CODE, ids=["own-module", "timeit-string", "eval",
                                                    "padded-code", "new-function", "console",
                                                    "claimed-file", "loader-by-hand",
                                                    "loader-subclass"])
def test_code_from_outside_the_cells_and_the_packages_makes_the_exercise_tampered(code):
    got = run_child(request(L2, ["l2_where_it_lands"], {"where_it_lands": code + EMPTY_LANDS}))
    assert tamper.OUTSIDE in got["l2_where_it_lands"]["tampered"]
    assert "from outside its cells" in tamper.reason(got["l2_where_it_lands"]["tampered"])


def test_a_library_s_import_is_not_code_from_outside():
    # scipy.special builds functions of its own as it is imported (array_api_compat's
    # clone_module), and defines dataclasses and namedtuples: installed code, while an installed
    # module is imported
    code = "import scipy.special\n"
    got = run_child(request(L2, ["l2_where_it_lands"], {"where_it_lands": code + EMPTY_LANDS}))
    assert got["l2_where_it_lands"]["tampered"] == []


# Eleventh and twelfth rounds. The standard library compiles a dataclass's and a namedtuple's
# methods from strings built of what the cell hands it: an annotation key that closes the
# generated string and starts a line, or a Field whose name is an identifier on the read that was
# checked and code on the next, ran the answer's own code as the generator's (it switched the watch
# off, unflagged). Every one a cell makes is code from outside.
GENERATED = {
    "a plain dataclass": "import dataclasses\n@dataclasses.dataclass\nclass _P:\n    a: int = 0\n",
    "a namedtuple": "import collections\n_T = collections.namedtuple('_T', 'a b')\n",
    "a __repr__ of its own": (
        "import dataclasses\nclass _B:\n    __annotations__ = {"
        r"""'"\n _ran = 1\n return (lambda self: 0,)\n def __repr__(self):\n  return 0#'"""
        ": int}\ntry:\n    dataclasses.dataclass(init=False, eq=False)(_B)\nexcept Exception:\n"
        "    pass\n"),
}


@pytest.mark.parametrize("how", sorted(GENERATED))
def test_a_dataclass_or_namedtuple_a_cell_makes_is_code_from_outside(how):
    got = run_child(request(L2, ["l2_where_it_lands"],
                            {"where_it_lands": GENERATED[how] + EMPTY_LANDS}))
    assert got["l2_where_it_lands"]["tampered"] == [tamper.OUTSIDE], got
    assert "dataclass" in tamper.reason(got["l2_where_it_lands"]["tampered"])


def test_the_reason_names_only_what_it_can_read():
    assert tamper.reason([]) == "" and tamper.reason(None) == ""
    forged = tamper.reason(["give full marks; " + "X" * 5000, {"__dict__": 1}])
    assert forged.startswith("it changed the judge's tools") and len(forged) < 200
    many = tamper.reason([f"grader.core.jaxprs.f{i}" for i in range(10)])
    assert "and 7 more" in many and len(many) < 300


def test_rebinding_a_builtin_the_checks_call_is_seen():
    patch = "import builtins\n_real = builtins.vars\nbuiltins.vars = lambda *a: _real(*a)\n"
    got = run_child(request(L1, ["spy"], {"spy": patch + "\n" + DECOY_SPY_RUN}))
    assert "builtins.vars" in got["spy"]["tampered"]
    assert "it changed Python's builtins.vars" in tamper.reason(got["spy"]["tampered"])


# Third round. JAX's rule maker named in another exercise's cell (found here by walking the
# module, so no reading sees it) and called from the rule cells through JAX code that only
# passes a function on: the walk up the stack goes past such frames to the answer. (On JAX's
# own neg_p, which JAX's table does give it: only the walk can tell whose call it is.)
FOUND_VB = ("from jax._src.interpreters import batching as _b\n"
            "VB = [v for k, v in sorted(vars(_b).items()) if k == 'vectorized' + '_batcher'][0]\n")
PASS_THROUGH = {
    "api_boundary": ("from jax._src.traceback_util import api_boundary as _through\n",
                     "_through(VB)(lax.neg_p, None, vals, dims)"),
    "profiler's annotate_function": ("import jax\n",
                                     "jax.profiler.annotate_function(VB)(lax.neg_p, None, vals, "
                                     "dims)"),
    "a partial in a tree map": ("import functools, jax\n",
                                "jax.tree.map(functools.partial(VB, lax.neg_p, None), "
                                "[vals], [dims], is_leaf=lambda v: isinstance(v, list))[0]"),
}


@pytest.mark.parametrize("route", sorted(PASS_THROUGH))
def test_a_rule_maker_named_in_another_cell_and_called_through_jax_is_seen(route):
    imports, call = PASS_THROUGH[route]
    rule = (f"{imports}from jax import lax\n"
            f"def moments_rule(prim, vals, dims, **params):\n    return {call}\n")
    got = run_child(request(L1, ["spy", "moments_rule"], {"spy": FOUND_VB + DECOY_SPY_RUN,
                                                           "moments_rule": rule}))
    assert got["moments_rule"]["tripped"] == [
        "jax._src.interpreters.batching:vectorized_batcher"], got["moments_rule"]
    assert got["spy"]["tripped"] == []


def test_the_exercise_s_primitive_handed_to_jax_s_rule_table_is_seen():
    # No call of the rule maker from the answer at all: the rule puts JAX's own in the table for
    # its primitive, and JAX's vmap (nested cases) runs it from there.
    rule = (FOUND_VB + "import functools\n"
            "from jax import lax\n"
            "_t = [t for t in (getattr(L1.batching, n, None) for n in L1.TABLE_NAMES)\n"
            "      if isinstance(t, dict) and lax.sin_p in t][0]\n"
            "def moments_rule(prim, vals, dims, **params):\n"
            "    _t[prim] = functools.partial(VB, prim)\n"
            "    (x,), (d,) = vals, dims\n"
            "    return prim.bind(x, **params), d\n")
    cells, cases, owned = request(L1, ["moments_rule"], {"moments_rule": rule})
    cases = {"moments_rule": KNOWN["moments_rule"].cases(np.random.default_rng(0), True)}
    assert any(c["outer_axes"] is not None for c in cases["moments_rule"])
    found, _, _ = judging.run(cells, cases, owned, in_process=False)
    assert found["moments_rule"]["tripped"] == [
        "jax._src.interpreters.batching:vectorized_batcher"]


# A line written on the child's answer pipe by the answer itself (found from the environment,
# as the red team did): without the run's seal, with a made-up one, or with the child's own
# sealer (found through the collector): the run ends there as forged, and nothing after counts.
FORGE = {
    "no seal, then exit": (
        "import os\n_fd = int(os.environ['INSIDE_VMAP_ANSWER_FD'])\n"
        "os.write(_fd, b'{\"n\": 1, \"t\": \"bye\"}\\n')\nos._exit(0)\n"),
    "a made-up seal": (
        "import os\n_fd = int(os.environ['INSIDE_VMAP_ANSWER_FD'])\n"
        "os.write(_fd, b'0' * 64 + b' {\"n\": 1, \"t\": \"ready\", \"missing\": {}}\\n')\n"),
    "the child's own sealer": (
        "import gc\n_s = [o for o in gc.get_objects() if type(o).__name__ == 'Sealer']\n"
        "def where_it_lands(program, in_dims):\n"
        "    for s in _s:\n"
        "        s.send('obs', gid='l2_where_it_lands', i=0, v=None)\n"
        "    return {}\n"),
}


@pytest.mark.parametrize("how", sorted(FORGE))
def test_a_line_the_answer_writes_on_the_child_s_pipe_ends_the_run_as_forged(how):
    cells, cases, owned = request(L2, ["l2_where_it_lands", "l2_widened"],
                                  {"where_it_lands": FORGE[how]})
    found, failure, talk = judging.run(cells, cases, owned, in_process=False)
    assert talk.forged_at in ("cells", "l2_where_it_lands") and "forged" in failure
    assert found["l2_where_it_lands"]["observed"] is None


# Ninth round. A thread started by an answer: what runs on it has no answer frame below it and no
# exercise's observation around it (red team: JAX's jacrev run by a worker thread released during
# another exercise's observation). JAX starts none on CPU, the child none: any is reported.
THREADS = {
    "threading": "import threading\n_t = threading.Thread(target=abs, args=(1,))\n_t.start()\n"
                 "_t.join()\n",
    "a pool": "import concurrent.futures as _cf\n_p = _cf.ThreadPoolExecutor(1)\n"
              "_p.submit(abs, 1).result()\n",
    "_thread": "import _thread, time\n_thread.start_new_thread(abs, (1,))\ntime.sleep(0.1)\n",
    "a timer, while observed": "import threading\ndef where_it_lands(program, in_dims):\n"
                               "    threading.Timer(0, abs, (1,)).start()\n    return {}\n",
}


@pytest.mark.parametrize("how", sorted(THREADS))
def test_a_thread_started_by_an_answer_makes_the_exercise_tampered(how):
    code = THREADS[how] + ("" if "def where_it_lands" in THREADS[how] else EMPTY_LANDS)
    got = run_child(request(L2, ["l2_where_it_lands"], {"where_it_lands": code}))
    assert got["l2_where_it_lands"]["tampered"] == [tamper.THREAD], got
    assert "it started a thread" in tamper.reason(got["l2_where_it_lands"]["tampered"])


L4 = "04-vmap-meets-autodiff"
JACFWD, JACREV = "jax._src.api:jacfwd", "jax._src.api:jacrev"
# A jacobian made while another exercise is observed (its answer, called by its observer), kept,
# and used while vmap_jacobian is: made directly, or by JAX code that calls jax.jacfwd by name
# (jax.experimental.sparse's), which the walk takes for JAX's own call. What jacfwd returned runs
# its code while vmap_jacobian is observed: the strict watch sees it there.
STASH_JACOBIAN = {
    "directly": "jax.jacfwd(_g)",
    "through JAX's sparse wrapper": "__import__('jax.experimental.sparse').experimental"
                                    ".sparse.jacfwd(_g)",
}
KEEPER = ("_slot, _made = [], []\ndef _g(x):\n    return _slot[-1](x)\n"
          "def per_example_grads(loss, params, batch, axes):\n"
          "    if not _made:\n        _made.append({make})\n"
          "    return jax.vmap(jax.grad(loss), in_axes=(None, axes))(params, batch)\n")
USER = "def vmap_jacobian(f, x):\n    _slot.append(f)\n    return _made[0](x)\n"


@pytest.mark.parametrize("how", sorted(STASH_JACOBIAN))
def test_a_jacobian_made_while_another_exercise_is_observed_counts_where_it_is_used(how):
    asked = request(L4, ["l4_per_example_grads", "l4_vmap_jacobian"],
                    {"per_example_grads": KEEPER.format(make=STASH_JACOBIAN[how]),
                     "vmap_jacobian": USER})
    got = run_child(asked)
    assert JACFWD in got["l4_vmap_jacobian"]["tripped"], got
    assert got["l4_per_example_grads"]["tripped"] == [], got
    assert all(r["tampered"] == [] for r in got.values()), got


def test_the_instructors_jacobian_trips_nothing_beside_per_example_grads():
    got = run_child(request(L4, ["l4_per_example_grads", "l4_vmap_jacobian"]))
    assert {g: (r["tripped"], r["tampered"]) for g, r in got.items()} == \
        {g: ([], []) for g in got}
    assert all(len(r["observed"]) == 3 for r in got.values())


# JAX's batching rules run by the answer out of JAX's tables (red team, round 9: a small jaxpr
# interpreter applying each equation's rule): each rule the tables hold is watched.
TABLE_RULE = (
    "import jax.numpy as jnp\nfrom jax import lax\n"
    "from jax._src.interpreters import batching as _b\n"
    "def where_it_lands(program, in_dims):\n"
    "    _x = jnp.ones((2, 3))\n"
    "    for _name, _args in (('primitive_batchers', ((_x,), (0,))),\n"
    "                         ('fancy_primitive_batchers', (None, (_x,), (0,)))):\n"
    "        _t = getattr(_b, _name, {})\n"
    "        if isinstance(_t, dict) and lax.sin_p in _t:\n"
    "            try:\n"
    "                _t[lax.sin_p](*_args, accuracy=None)\n"
    "            except Exception:\n"
    "                pass\n"
    "    return {}\n")


@pytest.mark.skipif(not hasattr(sys, "monitoring"), reason="3.11 watches by wrapper")
def test_a_rule_run_out_of_jax_s_tables_while_where_it_lands_is_observed_is_seen():
    got = run_child(request(L2, ["l2_where_it_lands"], {"where_it_lands": TABLE_RULE}))
    tripped = got["l2_where_it_lands"]["tripped"]
    assert any(s.endswith("primitive_batchers") for s in tripped), got


# Tenth round. Another process: a new interpreter has no watch at all, and a fork carries the watch
# but can point the sealed channel at /dev/null (red team: where_it_lands and cond_plan looked up
# by JAX in a worker process, 14 points unflagged). In the child as the sandbox runs it the kernel
# refuses each (the attempt is caught here, as an answer would catch it); the hook reports it.
PROCESSES = {
    "a fork": "import os\ntry:\n    os.fork() or os._exit(0)\nexcept OSError:\n    pass\n",
    "a program": "import subprocess, sys\ntry:\n    subprocess.run([sys.executable, '-c', ''])\n"
                 "except OSError:\n    pass\n",
    "a shell": "import os\nos.system('true')\n",
    "a pool of processes, while observed": (
        "import concurrent.futures as _cf\ndef where_it_lands(program, in_dims):\n    try:\n"
        "        _cf.ProcessPoolExecutor(1).submit(abs, 1).result()\n    except Exception:\n"
        "        pass\n    return {}\n"),
}


@pytest.mark.parametrize("how", sorted(PROCESSES))
def test_a_process_started_by_an_answer_makes_the_exercise_tampered(how):
    code = PROCESSES[how] + ("" if "def where_it_lands" in PROCESSES[how] else EMPTY_LANDS)
    got = run_child(request(L2, ["l2_where_it_lands"], {"where_it_lands": code}))
    assert tamper.PROCESS in got["l2_where_it_lands"]["tampered"], got
    assert "it started another process" in tamper.reason(got["l2_where_it_lands"]["tampered"])


def test_the_child_as_the_sandbox_runs_it_refuses_a_fork():
    code = ("import os\ndef where_it_lands(program, in_dims):\n    try:\n        pid = os.fork()\n"
            "    except PermissionError:\n        return {'refused': 0}\n    if pid == 0:\n"
            "        os._exit(0)\n    os.waitpid(pid, 0)\n    return {'allowed': 0}\n")
    got = run_child(request(L2, ["l2_where_it_lands"], {"where_it_lands": code}))
    assert "refused" in repr(got["l2_where_it_lands"]["observed"]), got
    assert "allowed" not in repr(got["l2_where_it_lands"]["observed"]), got


# Twelfth round. The live watch found through gc, a method shadowed on the instance and its sink
# emptied: the calls went nowhere while the monitoring tool itself still stood.
WATCH_OFF = {
    "a method shadowed": "_o._note = lambda *a, **k: None",
    "the sink emptied": "_o.sink = None",
    "the hits replaced": "_o.hits = set()",
}


@pytest.mark.parametrize("how", sorted(WATCH_OFF))
def test_changing_the_live_watch_object_is_seen(how):
    code = ("import gc\nfor _o in gc.get_objects():\n"
            "    if type(_o).__name__ in ('Monitor', 'Wrappers') and hasattr(_o, 'sink'):\n"
            f"        {WATCH_OFF[how]}\n")
    got = run_child(request(L2, ["l2_where_it_lands"], {"where_it_lands": code + EMPTY_LANDS}))
    assert tamper.MONITOR in got["l2_where_it_lands"]["tampered"], got


# Thirteenth round. The watch's callback switched off and put back within one call, through the
# raw register function reached from the tripwires module's globals: later checks saw it standing.
MONITORING = {
    "off and back": (
        "import sys\n_w = sys.modules['grader.judge.box.tripwires']\n"
        "_t = next(t for t in range(6) if sys.monitoring.get_tool(t) == _w.NAME)\n"
        "_cb = _w._register(_t, sys.monitoring.events.PY_START, None)\n"
        "_w._register(_t, sys.monitoring.events.PY_START, _cb)\n"),
    "a tool of its own": (
        "import sys\nsys.monitoring.use_tool_id(5, 'mine')\n"
        "sys.monitoring.register_callback(5, sys.monitoring.events.PY_START, abs)\n"
        "sys.monitoring.free_tool_id(5)\n"),
}


@pytest.mark.skipif(sys.version_info < (3, 12), reason="sys.monitoring is Python 3.12's")
@pytest.mark.parametrize("how", sorted(MONITORING))
def test_setting_a_monitoring_callback_is_seen(how):
    got = run_child(request(L2, ["l2_where_it_lands"],
                            {"where_it_lands": MONITORING[how] + EMPTY_LANDS}))
    assert tamper.MONITOR in got["l2_where_it_lands"]["tampered"], got


# Fifteenth round: a custom_vjp's backward rule had JAX's backward pass do the sum over w's
# broadcast axes, called straight from jax._src past the names the reading knows. Any route to a
# transposition, run from inside the answer's rule, counts (Delegation.within).
L4 = "04-vmap-meets-autodiff"
_CLIPPED = ("import jax, jax.numpy as jnp\n"
            "clipped_scale = jax.custom_vjp(lambda w, x: w * x)\n"
            "def _fwd(w, x):\n    return w * x, (w, x)\n"
            "def _bwd(r, g):\n    w, x = r\n    c = jnp.clip(g, -1.0, 1.0)\n"
            "    return (PULL(lambda a: a * x, w, c), PULL(lambda b: w * b, x, c))\n"
            "clipped_scale.defvjp(_fwd, _bwd)\n")
TRANSPOSING = {
    "backward_pass from jax._src": (
        "from jax._src.interpreters import ad as _tr\n"
        "def PULL(f, v, ct):\n    closed = jax.make_jaxpr(f)(v)\n"
        "    return _tr.backward_pass(closed.jaxpr, False, closed.consts,\n"
        "                             [_tr.UndefinedPrimal(closed.in_avals[0])], [ct])[0]\n"),
    "vjp by a computed name": (
        "def PULL(f, v, ct):\n    return getattr(jax, 'v' + 'jp')(f, v)[1](ct)[0]\n"),
    "forward mode over a basis, by a computed name": (
        "def PULL(f, v, ct):\n    basis = jnp.eye(v.size, dtype=v.dtype).reshape((v.size,) + v.shape)\n"
        "    tangent = lambda e: jnp.vdot(ct, getattr(jax, 'j' + 'vp')(f, (v,), (e,))[1])\n"
        "    return jax.vmap(tangent)(basis).reshape(v.shape)\n"),
    "linear_transpose by a computed name": (
        "def PULL(f, v, ct):\n    return getattr(jax, 'linear_' + 'transpose')(f, v)(ct)[0]\n"),
}


@pytest.mark.parametrize("how", sorted(TRANSPOSING))
def test_a_backward_rule_that_has_jax_transpose_for_it_is_seen(how):
    got = run_child(request(L4, ["l4_clipped_scale"],
                            {"clipped_scale": TRANSPOSING[how] + _CLIPPED}))
    assert got["l4_clipped_scale"]["observed"], got      # it ran, and was right...
    assert got["l4_clipped_scale"]["tripped"], got       # ...by JAX's transposition


def test_the_instructors_backward_rule_transposes_nothing():
    got = run_child(request(L4))           # every exercise: the jacobian's own jax.jvp among them
    assert {"l4_clipped_scale", "l4_vmap_jacobian"} <= set(got), got
    assert {g: (r["tripped"], r["tampered"]) for g, r in got.items()} == \
        {g: ([], []) for g in got}
