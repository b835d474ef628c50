"""The trusted side's reading of a student's answer cells is bounded by work, not only bytes: it
grows linearly with the statements read (counted in bytecode executed, never in seconds), and
answers past `sandbox.Limits.answer_nodes` are neither read nor run (red team 9, attack 3)."""
import pathlib
import sys

import nbformat
import pytest

from grader import lessons
from grader.judge import delegation, preprocessor, reach, runner, sandbox
from grader.judge import forked as zygotes
from grader.judge.vocabulary import TOO_LARGE

FIRST = (pathlib.Path(__file__).resolve().parents[2] / "exercises" /
         "01-the-rule-per-primitive" / "01-the-rule-per-primitive.ipynb")


def _answers(nb):
    return [c for c in nb.cells if c.cell_type == "code" and
            c.metadata.get("nbgrader", {}).get("solution") and
            not c.metadata.get("nbgrader", {}).get("grade")]


def _notebook(head: str, tail: str):
    """The instructor's 01 with ``head`` added to its first answer cell, ``tail`` to its last."""
    nb = nbformat.read(FIRST, as_version=4)
    cells = _answers(nb)
    cells[0].source += "\n" + head + "\n"
    cells[-1].source += "\n" + tail + "\n"
    return nb


def _work(fn) -> int:
    """Bytecode instructions (and calls, lines) Python executes in ``fn()``: a count of work."""
    count = 0

    def trace(frame, event, arg):
        nonlocal count
        frame.f_trace_opcodes = True
        count += 1
        return trace

    old = sys.gettrace()
    sys.settrace(trace)
    try:
        fn()
    finally:
        sys.settrace(old)
    return count


def _read(nb):
    """Everything the trusted side reads of ``nb`` before a child runs: the plan, the readings."""
    known = lessons.exercises()
    template = runner.Template.of_notebook(nb)
    graded = [g for g in template.graded if g in known]
    runner.readings(runner.plan(nb, template, graded), graded, known)


# Shapes that made a fixpoint take one pass per statement (written in reverse dependency order).
SHAPES = {
    # reach: each statement reaches the one before it (attack 3's cells)
    "reach chain": ("if 0: print(z0)",
                    lambda n: "\n".join(f"if 0: z{k} = z{k + 1}" for k in range(n, -1, -1))),
    # scopes.owned_names: each alias is an alias of the next, the last of an import
    "alias chain": ("",
                    lambda n: "import jax\n" + "\n".join(
                        f"a{k} = a{k + 1}.x" for k in range(n)) + f"\na{n} = jax.numpy"),
    # delegation: many different reasons, each kept once
    "many reasons": ("",
                     lambda n: "import jax\n" + "\n".join(f"jax.p{k} = {k}" for k in range(n))),
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_reading_n_statements_costs_linear_work(shape):
    head, tail = SHAPES[shape]
    n = 100
    _read(_notebook(head, tail(0)))          # imports and caches first: not the reading's work
    base, once, more = (_work(lambda m=m: _read(_notebook(head, tail(m)))) for m in (0, n, 4 * n))
    # Linear: four times the statements, four times the extra work (quadratic: sixteen).
    assert more - base <= 4.5 * (once - base), (base, once, more)
    assert once > base                                   # the statements were read


def test_reach_visits_each_statement_once_whatever_the_order():
    n = 400
    visits = {"count": 0}

    class Counted(reach.Facts):
        def __getattribute__(self, name):
            if name == "bound":
                visits["count"] += 1
            return super().__getattribute__(name)

    def chain(m):
        return [Counted(frozenset({f"z{k}"}), frozenset({f"z{k + 1}"}), frozenset())
                for k in range(m, -1, -1)]

    counts = []
    for m in (n, 2 * n):
        visits["count"] = 0
        found = reach.reach([reach.statements("print(z0)")], {"c": chain(m)}, ["f"])
        assert found == {"c": list(range(m + 1))}          # all of the chain, in reverse
        counts.append(visits["count"])
    assert counts[1] <= 2 * counts[0] + 4, counts


def _oversized():
    most = sandbox.Limits().answer_nodes
    # ``_ = 0``: Assign, Name, Store, Constant: four nodes a line
    return _notebook("", "\n".join(["_ = 0"] * (most // 4 + 1))), most


def test_answers_past_the_node_limit_go_to_a_human_unread_and_unrun(monkeypatch):
    nb, most = _oversized()

    def never(*args, **kwargs):
        raise AssertionError("an oversized submission was read or run")

    for module, name in ((reach, "reach"), (reach, "statements"), (delegation, "reasons"),
                         (zygotes, "judge_child")):
        monkeypatch.setattr(module, name, never)
    verdicts = runner.judge(nb, sandbox.Limits(wall_s=30, cpu_s=60))
    graded = [g for g in runner.Template.of_notebook(nb).graded if g in lessons.exercises()]
    assert sorted(verdicts) == sorted(graded) and graded
    hidden = [line.strip() for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade")
              for line in c.source.splitlines() if len(line.strip()) > 12]
    for res in verdicts.values():
        assert res.manual == TOO_LARGE.format(most=most)
        assert not res.passed
        shown = res.summary() + res.manual
        assert not [line for line in hidden if line in shown]


def test_the_limit_is_on_the_answer_cells_nodes():
    nb, most = _oversized()
    template = runner.Template.of_notebook(nb)
    assert runner.oversized(nb, template, template.graded, most)
    assert not runner.oversized(nb, template, template.graded, 2 * most)


def test_the_node_limit_is_configured_once_where_the_judge_s_limits_are():
    judge = preprocessor.JudgeExercises(answer_nodes=1234)
    assert judge.limits().answer_nodes == 1234
    assert "answer cells" in preprocessor.JudgeExercises.class_traits()["answer_nodes"].help
