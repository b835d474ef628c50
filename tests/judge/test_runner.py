"""The judge re-grades answers outside the kernel and survives answers that crash, hang, cheat or
hand their work to JAX."""
import dataclasses
import pathlib
import subprocess
import sys

import nbformat
import pytest

from grader.judge import runner, sandbox

ROOT = pathlib.Path(__file__).resolve().parents[2]
FIRST = ROOT / "exercises" / "01-the-rule-per-primitive" / "01-the-rule-per-primitive.ipynb"
SECOND = ROOT / "exercises" / "02-where-the-axis-goes" / "02-where-the-axis-goes.ipynb"
FAST = sandbox.Limits(wall_s=30, cpu_s=60, memory_mb=4096)
boxed = pytest.mark.skipif(not sandbox.available(), reason="bubblewrap not available")


def answers(nb):
    return [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution")
            and c.cell_type == "code"]


def replace_answer(nb, defines, new_source):
    """Replace the answer cell that defines ``defines`` with ``new_source``."""
    for cell in answers(nb):
        if f"def {defines}" in cell.source or f"{defines} =" in cell.source:
            cell.source = new_source
            return nb
    raise AssertionError(f"no answer cell defines {defines}")


@pytest.fixture
def solved():
    return nbformat.read(FIRST, as_version=4)


@pytest.fixture
def solved2():
    return nbformat.read(SECOND, as_version=4)


def test_the_instructor_solutions_pass_everything(solved, solved2):
    for nb in (solved, solved2):
        verdicts = runner.judge(nb, FAST)
        assert verdicts and all(r.passed for r in verdicts.values()), {
            g: r.summary() for g, r in verdicts.items() if not r.passed}


def test_an_answer_that_kills_its_process_costs_only_its_exercise(solved):
    replace_answer(solved, "spy", "import os\nos._exit(1)")
    verdicts = runner.judge(solved, FAST)
    assert not verdicts["spy"].passed
    assert "exited" in verdicts["spy"].findings[0].got or "status" in verdicts["spy"].findings[0].got
    assert all(r.passed for g, r in verdicts.items() if g != "spy")


def test_an_answer_that_hangs_ignoring_sigint_times_out_alone(solved):
    replace_answer(solved, "spy", "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n"
                                  "while True:\n    pass")
    verdicts = runner.judge(solved, sandbox.Limits(wall_s=8, cpu_s=60, memory_mb=4096))
    assert not verdicts["spy"].passed and "timed out" in verdicts["spy"].findings[0].got
    assert verdicts["moments_rule"].passed


def test_patching_whatever_grader_code_the_child_holds_earns_nothing(solved):
    # Generic: patch every function of every grader module the child can reach to say "pass".
    cheat = ("import sys\n"
             "for _m in [m for n, m in list(sys.modules.items()) if n.startswith('grader')]:\n"
             "    for _k, _v in list(vars(_m).items()):\n"
             "        if callable(_v) and not isinstance(_v, type):\n"
             "            try: setattr(_m, _k, lambda *a, **k: None)\n"
             "            except Exception: pass\n"
             "def spy(f, in_axes, *args):\n    return 'anything'\n")
    replace_answer(solved, "spy", cheat)
    verdicts = runner.judge(solved, FAST)
    assert not verdicts["spy"].passed


def test_missing_names_are_reported_by_name(solved):
    replace_answer(solved, "spy", "pass")
    finding = runner.judge(solved, FAST)["spy"].findings[0]
    assert "spy" in finding.expected and finding.got == "not defined"


def test_an_answer_running_vmap_where_it_must_not_goes_to_a_human(solved2):
    replace_answer(solved2, "where_it_lands", (
        "import jax\n"
        "def where_it_lands(program, in_dims):\n"
        "    jax.vmap(lambda x: x)(jnp.ones(3))\n"
        "    return {}\n"))
    verdicts = runner.judge(solved2, FAST)
    res = verdicts["l2_where_it_lands"]
    assert not res.passed and res.manual and "vmap" in res.manual
    assert "manual" in res.summary().lower()
    assert all(r.passed for g, r in verdicts.items() if g != "l2_where_it_lands")


def test_an_answer_importing_the_course_goes_to_a_human(solved2):
    replace_answer(solved2, "widened", (
        "from grader.lessons.l2_where_the_axis_goes import widened as _course\n"
        "def widened(jaxpr, in_axes, size):\n"
        "    return {}\n"))
    res = runner.judge(solved2, FAST)["l2_widened"]
    assert res.manual and "grader" in res.manual


def test_a_comment_or_docstring_naming_the_jax_function_is_not_delegation(solved):
    for cell in answers(solved):
        if "def moments_rule" in cell.source:
            cell.source = "# unlike batching.reducer_batcher, mine keeps both outputs\n" + cell.source
    res = runner.judge(solved, FAST)["moments_rule"]
    assert res.passed and not res.manual


def test_the_template_decides_which_cells_count(solved):
    """A cell the student relabelled as set-up, or added, never runs; released set-up does."""
    template = runner.Template.of_notebook(nbformat.read(FIRST, as_version=4))
    spy_cell = next(c for c in answers(solved) if "def spy" in c.source)
    forged = nbformat.v4.new_code_cell("def spy(f, in_axes, *args):\n    return 'forged'\n")
    forged.metadata["nbgrader"] = {"grade": False, "solution": False, "locked": True,
                                   "grade_id": "my_own_setup", "schema_version": 3}
    solved.cells.insert(solved.cells.index(spy_cell) + 1, forged)
    assert runner.judge(solved, FAST, template=template)["spy"].passed


@boxed
def test_the_sandbox_hides_the_course_and_the_network():
    probe = ("import os, socket, json\n"
             f"seen = os.path.exists({str(ROOT / 'exercises')!r})\n"
             "try:\n    socket.create_connection(('127.0.0.1', 22), timeout=1); net = True\n"
             "except OSError:\n    net = False\n"
             "print(json.dumps([seen, net]))\n")
    out = sandbox.run("this_module_does_not_exist", "", FAST)
    assert out.failure  # a child that fails is reported, not raised
    proc = subprocess.run(sandbox.bwrap_prefix() + [sys.executable, "-c", probe],
                          capture_output=True, text=True, env=sandbox.child_env(), timeout=60)
    assert proc.stdout.strip() == "[false, false]"


@boxed
def test_the_child_cannot_import_the_answer_key():
    """Every trusted module of every lesson is absent where the child runs; the kits are there."""
    from grader import lessons
    trusted = [m.__name__ for p in lessons.packages() for m in lessons._trusted_modules(p)]
    kits = [f"grader.lessons.{p}.kit.observe" for p in lessons.packages()]
    probe = ("import importlib, json\n"
             "def can(name):\n"
             "    try:\n        importlib.import_module(name); return True\n"
             "    except ImportError:\n        return False\n"
             f"print(json.dumps([[can(n) for n in {trusted!r}], [can(n) for n in {kits!r}],"
             " can('grader.exercise'), can('grader.core.tracers'), can('grader.core.tables')]))\n")
    proc = subprocess.run(sandbox.bwrap_prefix() + [sys.executable, "-c", probe],
                          capture_output=True, text=True, env=sandbox.child_env(), timeout=120)
    assert proc.stdout.strip(), proc.stderr
    import json
    key, kit, exercise, tracers, tables = json.loads(proc.stdout)
    assert trusted and not any(key) and all(kit)
    assert (exercise, tracers, tables) == (False, False, False)


def test_only_the_calls_an_exercise_watches_count_against_it():
    """A call the child reports of a function this exercise does not watch (or a name that is
    none) gives no reason, and a reason names only what the exercise watches, briefly."""
    from grader import lessons
    from grader.judge import decide, session
    ex = lessons.exercises()["l2_where_it_lands"]
    cases = ex.cases(runner.cases_rng(1, "k"), False)
    talk = session.Session([], {ex.grade_id: (runner._job(ex), cases)}, None, 1 << 16)
    talk.hits.add(("give full marks " * 10 ** 4, "l2_where_it_lands", None, True, True))
    assert decide.settle(ex, cases, talk, ()) is None           # nothing decided, nothing said
    talk.hits.add((ex.delegation.calls[0], "l2_where_it_lands", None, True, False))
    res = decide.settle(ex, cases, talk, ())
    watched = ex.delegation.calls[0].rsplit(":", 1)[-1]
    assert res.manual and len(res.manual) < runner.MAX_REASON and watched in res.manual


# The red team's third round, whole: the hidden cases read off the stack, answered with JAX's
# own vmap, a forged answer written on the child's answer pipe, then os._exit(0).
STACK_THEN_FORGE = """\
import json, os, traceback
import jax, jax.numpy as jnp
_vm = [v for k, v in vars(jax).items() if k == "v" + "map"][0]
def _cases():
    for f in traceback.StackSummary.extract(traceback.walk_stack(None), capture_locals=True):
        for v in (f.locals or {}).values():
            if "program" in v and "in_dims" in v:
                yield v
def where_it_lands(program, in_dims):
    seen = list(_cases())
    out = _vm(lambda v: v)(jnp.ones(3))
    line = json.dumps({"n": 99, "t": "obs", "seen": len(seen)})
    os.write(int(os.environ.get("INSIDE_VMAP_ANSWER_FD", "1")), ("0" * 64 + " " + line + "\\n").encode())
    os._exit(0)
"""


@pytest.mark.parametrize("attack", ["stack-then-forge", "forge-only"])
def test_the_forged_answer_earns_nothing_and_goes_to_a_human(solved2, attack, monkeypatch):
    # The reading would refuse this spelling first (`vars`, `.locals`): turned off, the child's
    # own defences alone decide.
    monkeypatch.setattr(runner.delegation, "reasons", lambda *a, **k: [])
    source = STACK_THEN_FORGE if attack == "stack-then-forge" else \
        STACK_THEN_FORGE.replace("out = _vm(lambda v: v)(jnp.ones(3))", "out = None")
    replace_answer(solved2, "where_it_lands", source)
    verdicts = runner.judge(solved2, FAST)
    res = verdicts["l2_where_it_lands"]
    assert res.manual and not res.passed, res.summary()
    assert "forged" in res.manual and \
        ("vmap" in res.manual) == (attack == "stack-then-forge"), res.manual
    assert all(r.passed for g, r in verdicts.items() if g != "l2_where_it_lands")


def _peak_mib() -> float:
    with open("/proc/self/status") as fh:
        return next(int(ln.split()[1]) for ln in fh if ln.startswith("VmHWM")) / 1024


@pytest.mark.parametrize("answer", [
    "    return jnp.zeros((4096, 4096), jnp.float32)\n",                        # 64 MiB of bytes
    "    return jnp.arange(2 ** 21, dtype=jnp.float32).reshape(2 ** 10, 2 ** 11)\n",
])
def test_an_answer_the_size_of_the_answer_cap_costs_the_trusted_process_nothing(solved2, answer):
    # cheap_where's answer is an array, sent as it is (where_it_lands's is read as ints)
    replace_answer(solved2, "cheap_where", "import jax.numpy as jnp\n"
                   "def cheap_where(pred, x, y):\n" + answer)
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")
    before = _peak_mib()
    # A memory test, not a time test: wall time to spare on a loaded machine (beside other runs
    # it once timed out at 30 s, which says nothing about memory).
    verdicts = runner.judge(solved2, dataclasses.replace(FAST, wall_s=120, cpu_s=120))
    res = verdicts["l2_cheap_where"]
    assert not res.passed and "KiB for one case of l2_cheap_where" in res.findings[0].got
    assert _peak_mib() - before < 100
    assert all(r.passed for g, r in verdicts.items() if g != "l2_cheap_where")


@pytest.mark.parametrize("where", ["the cell", "the answer"])
def test_an_endless_loop_costs_one_child_s_time_and_the_rest_are_judged_together(solved, where):
    loop = "while True:\n    pass\n"
    source = loop + "def spy(f, in_axes, *args):\n    pass\n" if where == "the cell" else \
        "def spy(f, in_axes, *args):\n" + "".join("    " + ln + "\n" for ln in loop.splitlines())
    replace_answer(solved, "spy", source)
    runs = []
    real = runner._Runs.attempt
    monkey = pytest.MonkeyPatch()
    monkey.setattr(runner._Runs, "attempt", lambda self, gids: runs.append(list(gids)) or
                   real(self, gids))
    try:
        verdicts = runner.judge(solved, sandbox.Limits(wall_s=10, cpu_s=60, memory_mb=4096))
    finally:
        monkey.undo()
    assert "timed out after 10 s" in verdicts["spy"].findings[0].got
    assert all(r.passed for g, r in verdicts.items() if g != "spy")
    assert len(runs) == 2 and "spy" in runs[0] and "spy" not in runs[1], runs
