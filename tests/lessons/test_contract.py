"""The lesson contract, for every declared exercise (`grader.lessons.exercises()`), so a new lesson
package is checked by being there:

* its honest answer (tests/lessons/<lesson>/answers.py, under the names it needs) passes, and its
  verdict after the judge's wire is the kernel's;
* its hidden cases are fresh: none repeats a visible case, and a case's seed is under the one key
  (`grader.exercise.SEED`), so a new seed never makes a repeat look new;
* it declares its Delegation with a delegating answer (or says why there is none), and each such
  answer, appended to its answer cell in the exercise notebook, goes to a human through the real
  judge while every other exercise keeps its marks; one marked ``works`` would earn full marks in
  the kernel, where nothing reads it;
* its grade id and check name follow grader/README.md's rule;
* every file of its lesson in the judge's kit tree imports there under ``python -I``, with only
  the tree on the path (no bubblewrap: what fails here fails in the box for every student).
"""
import functools
import importlib
import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from grader import lessons
from grader.exercise import SEED
from tests.lessons import contract

EXERCISES = sorted(lessons.exercises())
EXAMPLES = [(gid, i) for gid in EXERCISES
            for i in range(len(lessons.exercises()[gid].delegation.examples))]
# Lesson 1's grade ids came before the rule; they are in released notebooks and gradebooks.
RELEASED_BEFORE_THE_RULE = {"spy", "moments_rule", "stack2_rule", "prefix_rule"}


def exercise(grade_id):
    return lessons.exercises()[grade_id]


@pytest.mark.parametrize("grade_id", EXERCISES)
def test_the_honest_answer_passes_and_survives_the_wire(grade_id):
    ex = exercise(grade_id)
    answer = contract.honest(ex)
    contract.assert_passes(ex, *answer)
    for seed in (1, 2):
        assert contract.assert_plain_and_judged_alike(ex, *answer, seed=seed).passed


@pytest.mark.parametrize("grade_id", EXERCISES)
def test_hidden_cases_are_fresh_and_seeded_under_the_one_key(grade_id):
    ex = exercise(grade_id)
    cases = ex.cases(np.random.default_rng(0), False) + ex.cases(np.random.default_rng(3), True)
    keys = {k for c in cases if isinstance(c, dict) for k in c}
    assert not {k for k in keys if "seed" in k.lower()} - {SEED}, \
        f"{grade_id}: a case's seed goes under {SEED!r}, or fresh_cases takes a repeat for new"
    contract.assert_fresh(ex)


@pytest.mark.parametrize("grade_id", EXERCISES)
def test_every_exercise_declares_its_delegation(grade_id):
    delegation = exercise(grade_id).delegation
    assert delegation.examples or delegation.unneeded, (
        f"{grade_id} declares no delegating answer: give its Exercise delegation=Delegation("
        "examples=(Delegating(...),), ...), or Delegation(unneeded=why) when nothing can do its work")


@pytest.mark.parametrize("grade_id", EXERCISES)
def test_the_grade_id_and_the_check_follow_the_rule(grade_id):
    ex, package = exercise(grade_id), contract.lesson_of(exercise(grade_id))
    number = package[1:].split("_")[0]
    assert grade_id in RELEASED_BEFORE_THE_RULE or re.fullmatch(rf"l{number}_[a-z0-9_]+", grade_id)
    assert ex.name == f"check_{ex.needs[0]}"


@pytest.mark.parametrize("grade_id, index", EXAMPLES)
def test_a_working_delegation_would_earn_full_marks_where_nothing_reads_it(grade_id, index):
    ex = exercise(grade_id)
    example = ex.delegation.examples[index]
    if not example.works:
        pytest.skip("declared as showing the reading only: nothing JAX or the course holds does it")
    import jax
    import jax.numpy as jnp
    from jax import lax
    namespace = {"jax": jax, "jnp": jnp, "np": np, "lax": lax}
    for package in lessons.packages():
        namespace[f"L{package[1:].split('_')[0]}"] = importlib.import_module(
            f"grader.lessons.{package}")
    exec(example.source, namespace)
    assert ex.check(*[namespace[n] for n in ex.needs], hidden=True, seed=7).passed


@pytest.mark.parametrize("grade_id, index", EXAMPLES)
def test_a_delegating_answer_needs_a_human_and_costs_nothing_else(grade_id, index):
    pytest.importorskip("nbgrader", reason="judging needs the instructor tools")
    import nbformat
    from nbgrader.utils import is_solution

    from grader.judge import runner, sandbox
    ex = exercise(grade_id)
    nb = nbformat.read(contract.notebook_of(grade_id), as_version=4)
    cell = next(c for c in nb.cells if c.cell_type == "code" and is_solution(c)
                and ex.needs[0] in runner._defines(c.source))
    # Appended, so the cell's other answers stay (where a cell defines several answers, both
    # are then read as delegating, since they are the same code).
    shared = {g for g, e in lessons.exercises().items() if set(e.needs) & runner._defines(cell.source)}
    cell.source += "\n" + ex.delegation.examples[index].source
    verdicts = runner.judge(nb, sandbox.Limits(wall_s=60, cpu_s=120, memory_mb=4096))
    res = verdicts[grade_id]
    assert res.manual and not res.passed, res.summary()
    assert not res.findings                      # no silent zero: a human decides
    others = {g: r for g, r in verdicts.items() if g not in shared | {grade_id}}
    assert all(r.passed for r in others.values()), {g: r.summary() for g, r in others.items()}


@functools.cache
def _kit_tree() -> str:
    import atexit
    import shutil
    import tempfile

    from grader.judge import kit_tree
    dest = tempfile.mkdtemp(prefix="contract-kit-")
    atexit.register(shutil.rmtree, dest, ignore_errors=True)
    return kit_tree.build(dest)


# Only the kit tree: the course's editable install (a finder on sys.meta_path) is taken away, as
# the sandbox's mount over it does, and a module found anywhere else is an error.
IMPORT_EACH = textwrap.dedent("""
    import importlib, sys
    tree, modules = sys.argv[1], sys.argv[2:]
    sys.meta_path[:] = [f for f in sys.meta_path
                        if not getattr(f, "__module__", "").startswith("__editable__")]
    sys.path.insert(0, tree)
    for name in modules:
        module = importlib.import_module(name)
        assert module.__file__.startswith(tree), (name, module.__file__)
    print("imported", len(modules))
    """)


@functools.cache
def _imports_in_the_box(package: str) -> subprocess.CompletedProcess:
    from grader.judge import kit_tree
    files = [m for m in kit_tree.members() if m.startswith(f"lessons/{package}/")]
    modules = ["grader." + m[:-3].replace("/", ".").removesuffix(".__init__") for m in files]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    return subprocess.run([sys.executable, "-I", "-c", IMPORT_EACH, _kit_tree(), *modules],
                          env={**env, "JAX_PLATFORMS": "cpu"}, capture_output=True, text=True,
                          timeout=300)


@pytest.mark.parametrize("grade_id", EXERCISES)
def test_every_kit_file_imports_in_the_box_s_tree(grade_id):
    ex = exercise(grade_id)
    out = _imports_in_the_box(contract.lesson_of(ex))
    assert out.returncode == 0, out.stderr[-3000:]
    assert ex.observe.__module__.startswith(f"grader.lessons.{contract.lesson_of(ex)}.kit")
