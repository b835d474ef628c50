"""What every graded exercise owes, checked the same way for each (the test files call these).

* a right answer passes its visible cases and cases drawn now;
* an answer that raises is a failed result naming the error, never a crash of the check;
* hidden cases are fresh: none repeats a visible case, whatever seeds it was drawn in, and two
  draws differ; a draw that repeats a visible case is drawn again;
* cases, expectations and observations are plain data, and a verdict on observations that went
  through the judge's wire is the verdict the kernel gives.
"""
from __future__ import annotations

import pathlib

import numpy as np

from grader import wire
from grader.exercise import SEED, without_seed

# The key `grader.exercise.fresh_cases` compares cases by: a case without its seed.
seedless = without_seed
ROOT = pathlib.Path(__file__).resolve().parents[2]


def overlap(visible, hidden, key=seedless) -> list:
    """The hidden cases that repeat a visible one under ``key`` (new seeds do not make it new)."""
    seen = {key(c) for c in visible}
    return [c for c in hidden if key(c) in seen]


def renewed(case: dict) -> dict:
    """``case`` with fresh seeds: the same question, drawn again."""
    return {k: (v + 12345 if k == SEED else v) for k, v in case.items()}


def assert_passes(exercise, *answer, min_cases: int = 1):
    for hidden in (False, True):
        res = exercise.check(*answer, hidden=hidden)
        assert res.passed, res.summary()
        assert res.cases >= min_cases


def student_bug(*args, **kwargs):
    raise RuntimeError("student bug")


def assert_raising_answer_fails(exercise, every_case: bool = True):
    res = exercise.check(student_bug)
    assert not res.passed and res.findings, res.summary()
    if every_case:
        assert res.failed == res.cases
    assert "RuntimeError: student bug" in res.findings[0].got


def assert_fresh(exercise, key=seedless):
    visible = exercise.cases(np.random.default_rng(0), False)
    assert exercise.cases(np.random.default_rng(1), False) == visible      # visible cases are fixed
    first = exercise.cases(np.random.default_rng(), True)
    second = exercise.cases(np.random.default_rng(), True)
    assert overlap(visible, first, key) == []
    assert len({key(c) for c in first}) == len(first)                      # no hidden repeats
    assert [key(c) for c in first] != [key(c) for c in second]


def assert_repeat_is_drawn_again(monkeypatch, module, draw: str, exercise, visible, key=seedless):
    """Make ``module.<draw>`` return a visible case in new seeds first: it must not be graded."""
    real, calls = getattr(module, draw), []

    def repeating(*args, **kwargs):
        calls.append(1)
        return renewed(visible) if len(calls) == 1 else real(*args, **kwargs)

    monkeypatch.setattr(module, draw, repeating)
    hidden = exercise.cases(np.random.default_rng(7), True)
    assert calls, f"{module.__name__}.{draw} is not how {exercise.name} draws its cases"
    assert overlap([visible], [renewed(visible)], key)       # the comparison sees the repeat...
    assert overlap([visible], hidden, key) == []             # ...and the exercise drew again


# What `assert_plain_and_judged_alike` found to hold, per (exercise, answer, seed): the same objects, the same
# seeded cases, so the same outcome. test_contract.py asks it of every honest answer on seeds 1 and 2, and each
# lesson's test file again of the same answer on seed 1 (then of other answers); the second time is read from
# here. Only a call that passed is kept (with its objects, so their ids stay theirs): a failure fails every time.
_ALIKE: dict[tuple, tuple] = {}


def assert_plain_and_judged_alike(exercise, *answer, seed: int = 1):
    """Cases, expectations and observations survive the wire; the verdict is the kernel's."""
    key = (id(exercise), *map(id, answer), seed)
    if key in _ALIKE:
        return _ALIKE[key][-1]
    judged = _plain_and_judged_alike(exercise, *answer, seed=seed)
    _ALIKE[key] = (exercise, answer, judged)
    return judged


def _plain_and_judged_alike(exercise, *answer, seed: int):
    cases = exercise.cases(np.random.default_rng(seed), True)
    for case in cases:
        assert wire.loads(wire.dumps(case)) == case
        wire.dumps(exercise.expect(case))
    observed = [wire.loads(wire.dumps(exercise.observe_safely(answer, c))) for c in cases]
    judged = exercise.verdict(cases, observed)
    assert judged.to_dict() == exercise.check(*answer, hidden=True, seed=seed).to_dict()
    return judged


def assert_hints_name(res, mistakes: dict, mistake: str):
    """Every hint of a failed ``res`` names ``mistake`` (one of its phrases in ``mistakes``), and
    none names another: a hint is derived from what the answer did, so one mistake, one story."""
    assert not res.passed and res.findings, res.summary()
    own, others = mistakes[mistake], [p for m, ps in mistakes.items() if m != mistake for p in ps]
    for finding in res.findings:
        assert any(p in finding.hint for p in own), (mistake, finding.case, finding.hint)
        named = [p for p in others if p in finding.hint]
        assert not named, (mistake, named, finding.case, finding.hint)
    return [f.hint for f in res.findings]


# ---- pattern-matching students --------------------------------------------------------------------

def blank(*args, **kwargs):
    """What the released notebook's stub does: nbgrader's `raise NotImplementedError()`."""
    raise NotImplementedError()


def judged(exercise, answer, seed: int, hidden: bool = True):
    """The trusted verdict on ``answer`` over one draw of cases, its observations sent through the
    judge's wire as the sandboxed child sends them."""
    cases = exercise.cases(np.random.default_rng(seed), hidden)
    observed = [wire.loads(wire.dumps(exercise.observe_safely((answer,), c))) for c in cases]
    return exercise.verdict(cases, observed)


def assert_earns_what_a_blank_earns(exercise, answer, seeds=range(6)):
    """On every draw of hidden cases, ``answer`` scores what the release's stub scores: nothing
    (a grade cell is all or nothing, so one failed hidden case is enough)."""
    assert not judged(exercise, blank, 0).passed
    for seed in seeds:
        res = judged(exercise, answer, seed)
        assert not res.passed, (getattr(answer, "__name__", answer), seed, res.summary())


def assert_honest_earns_everything(exercise, answer, seeds=range(6)):
    for seed in seeds:
        res = judged(exercise, answer, seed)
        assert res.passed, res.summary()


# ---- where an exercise's other parts are, derived from its declaration ----------------------------

def lesson_of(exercise) -> str:
    """The lesson package an Exercise belongs to: the one whose kit holds its observer."""
    return exercise.observe.__module__.split(".")[2]


def notebook_of(grade_id: str):
    """The exercise notebook (exercises/*/*.ipynb) holding the grade cell ``grade_id``."""
    import nbformat
    from nbgrader.utils import is_grade
    for path in sorted((ROOT / "exercises").glob("*/*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        if any(is_grade(c) and c.metadata.nbgrader.get("grade_id") == grade_id for c in nb.cells):
            return path
    raise LookupError(f"no exercise notebook has the grade cell {grade_id!r}")


def honest(exercise) -> tuple:
    """The right answer to ``exercise``: tests/lessons/<its lesson>/answers.py defines each of the
    names it needs (under that name)."""
    import importlib
    answers = importlib.import_module(f"tests.lessons.{lesson_of(exercise)}.answers")
    missing = [n for n in exercise.needs if not hasattr(answers, n)]
    assert not missing, f"{answers.__name__} defines no {missing}: the honest answer to {exercise.name}"
    return tuple(getattr(answers, n) for n in exercise.needs)
