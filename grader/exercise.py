"""One graded exercise, declared once, next to its code; the same logic grades in the kernel and
in the judge.

An `Exercise` is a grade id with its points and five small functions. ``observe`` comes from the
lesson's ``kit`` and is the only one that ever touches the student's objects: it runs them on a
case and returns plain data (`grader.wire`), raising when the student's code raises. ``cases``
draws cases, ``expect`` computes the right answer, ``compare`` turns (case, expected, observed)
into a `Finding` or None: these three are the answer key and run only in trusted code. In the
kernel ``check`` runs all of them for instant feedback; the judge runs ``observe`` in a sandboxed
child holding only the kit, and the rest in the trusted nbgrader process.

A lesson package declares its exercises as module-level `Exercise` objects; `grader.lessons`
finds them by scanning, so a new exercise is one declaration and nothing to register.
"""
from __future__ import annotations

import dis
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .feedback import Finding, Result, result
from .wire import Failure, observe_safely

CRASH_HINT = "Run your code on the example in the exercise and read the error."
NOT_ANSWERED = "not answered yet: write your answer in the cell above, then run both cells again."


@dataclass(frozen=True)
class Delegation:
    """What an answer must not reach for, because it is the thing the exercise asks to build.

    ``names`` are identifiers (of JAX's implementation, of the course's helpers) that an answer
    may not mention, as a name, an attribute or a string; ``calls`` are JAX callables, as
    ``"module:attribute"``, that the judge's child watches for a direct call from an answer.
    ``dynamic`` allows ``getattr`` with a computed name, ``vars`` and ``__dict__`` (an exercise
    about reading modules). With ``strict``, any call of ``calls`` while the answer is observed
    counts, whoever made it: for an answer that should need no vmap at all, JAX calling its own
    implementation means the answer had vmap do the work. With ``within``, a call of ``calls``
    counts whenever the answer's code is running below it, whatever JAX functions stand between:
    for an answer JAX calls back (a custom_vjp's backward rule), JAX's machinery run from inside
    it, by any of JAX's routes to it, is the answer's."""
    names: tuple[str, ...] = ()
    calls: tuple[str, ...] = ()
    dynamic: bool = False
    strict: bool = False
    within: bool = False
    # What the contract test (tests/lessons/test_contract.py) runs through the judge: each must
    # go to a human. An exercise with nothing to hand its work to says why in ``unneeded``.
    examples: tuple[Delegating, ...] = ()
    unneeded: str = ""


@dataclass(frozen=True)
class Delegating:
    """A delegating answer, declared beside its exercise: ``source`` is appended to the answer
    cell that defines the exercise's first need in the exercise notebook, whose set-up names
    (``jax``, ``jnp``, ``L<N>``, ...) it may use. With ``works`` the answer earns full marks
    where nothing reads it (a real threat); without, JAX and the course hold nothing that does
    this exercise, so it only shows that the judge catches the act."""
    source: str
    works: bool = True


@dataclass(frozen=True)
class Exercise:
    grade_id: str                                   # the nbgrader grade cell it scores
    points: float                                   # as the grade cell says (a test checks it)
    needs: tuple[str, ...]                          # names the answer cells define, in order
    observe: Callable[..., Any]                     # kit: the student's objects + a case -> data
    cases: Callable[[np.random.Generator, bool], list]
    expect: Callable[[Any], Any]
    compare: Callable[[Any, Any, Any], Finding | None]
    name: str = ""                                  # shown in feedback; default check_<grade_id>
    failure_hint: Callable[[Any, Failure], str] | str = CRASH_HINT
    accepts_failures: bool = False                  # compare judges failures (raising may be right)
    delegation: Delegation = field(default_factory=Delegation)

    def __post_init__(self):
        if not self.name:
            object.__setattr__(self, "name", f"check_{self.grade_id}")

    def observe_safely(self, objs, case):
        return observe_safely(self.observe, objs, case)

    def verdict(self, cases, observed) -> Result:
        """Compare observations with freshly computed expectations: trusted code only."""
        findings = [f for f in (self._finding(c, got) for c, got in zip(cases, observed)) if f]
        if len(observed) != len(cases):
            findings.append(Finding("all cases", f"{len(cases)} results",
                                    f"{len(observed)} results", "The judge lost some results."))
        return result(self.name, len(cases), findings)

    def _finding(self, case, got) -> Finding | None:
        if isinstance(got, Failure) and not self.accepts_failures:
            return Finding(describe(case), "your code runs without raising", got.error,
                           self._failure_hint(case, got))
        expected = self.expect(case)
        try:
            return self.compare(case, expected, got)
        except Exception as err:  # an observation of a shape no honest answer produces
            return Finding(describe(case), f"a result shaped like {_shape_of(expected)}",
                           f"{_shape_of(got)} ({type(err).__name__})",
                           "Your answer returned something of the wrong kind; re-read what the "
                           "exercise asks it to return.")

    def _failure_hint(self, case, failure) -> str:
        if not callable(self.failure_hint):
            return self.failure_hint
        try:
            return self.failure_hint(case, failure)
        except Exception:  # a failure no honest answer produces (its detail is the student's)
            return CRASH_HINT

    def check(self, *objs, hidden: bool = False, seed=None) -> Result:
        """Instant feedback in the kernel: visible cases are fixed, hidden ones drawn now. An answer
        still as released (no answer, a stub) is "not answered yet", with no case to explain."""
        if any(unanswered(o) for o in objs):
            return result(self.name, 0, [], note=NOT_ANSWERED, complete=False)
        rng = np.random.default_rng(seed if seed is not None else (None if hidden else 0))
        cases = self.cases(rng, hidden)
        observed = [self.observe_safely(objs, c) for c in cases]
        if observed and all(isinstance(o, Failure) and o.kind == "NotImplementedError"
                            for o in observed):
            return result(self.name, 0, [], note=NOT_ANSWERED, complete=False)
        return self.verdict(cases, observed)

    def checker(self) -> Callable[..., Result]:
        """The notebook's check function: ``check_x(answer, hidden=False)``."""
        def check(*answers, hidden: bool = False, seed=None) -> Result:
            return self.check(*answers, hidden=hidden, seed=seed)
        check.__name__ = check.__qualname__ = self.name
        check.__doc__ = (f"Check your {', '.join(self.needs)} on the visible cases "
                         "(hidden=True: on cases drawn now, as grading does).")
        return check


# What an empty body compiles to, whatever the Python: ``...``, ``pass`` or a docstring alone.
_EMPTY = frozenset({"RESUME", "NOP", "LOAD_CONST", "RETURN_VALUE", "RETURN_CONST", "POP_TOP",
                    "CACHE"})


def unanswered(obj) -> bool:
    """An answer as the release leaves it: None, or a function whose body does nothing (the
    stub nbgrader writes where the solution was)."""
    if obj is None:
        return True
    code = getattr(obj, "__code__", None)
    if code is None:
        return False
    body = [(i.opname, i.argval) for i in dis.get_instructions(code)]
    return all(op in _EMPTY and (op not in ("LOAD_CONST", "RETURN_CONST") or val is None or
                                 val is Ellipsis or isinstance(val, str)) for op, val in body)


def canonical(value):
    """A hashable stand-in equal for equal plain data, whatever order its dicts were built in."""
    if isinstance(value, dict):
        return ("dict", tuple(sorted((str(k), canonical(v)) for k, v in value.items())))
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(canonical(v) for v in value))
    return (type(value).__name__, repr(value))


# The one case key for a case's seed (hidden from feedback by its underscore): a case without it
# is the question the case asks, so a hidden case equal to a visible one but for it is a repeat.
SEED = "_seed"


def without_seed(case: dict):
    return canonical({k: v for k, v in case.items() if k != SEED})


def fresh_cases(draw: Callable[[int], dict | None], visible, count: int,
                key: Callable[[dict], object] = without_seed) -> list[dict]:
    """``count`` distinct cases from ``draw(i)``, none of them a visible case in new seeds.

    A hidden case that repeats a visible one grades nothing the student could not look up, so
    repeats are drawn again; ``draw`` may return None to skip an unfair draw."""
    seen, out = {key(c) for c in visible}, []
    while len(out) < count:
        case = draw(len(out))
        if case is not None and key(case) not in seen:
            seen.add(key(case))
            out.append(case)
    return out


def _shape_of(value) -> str:
    if isinstance(value, (list, tuple)):
        return f"{type(value).__name__} of {len(value)}"
    return type(value).__name__


def describe(case) -> str:
    """A case as a student reads it (cases are plain dicts of ints, tuples and strings)."""
    if isinstance(case, dict):
        return ", ".join(f"{k}={v!r}" for k, v in case.items() if not k.startswith("_"))
    return repr(case)
