"""One graded exercise, split so the same logic grades in the kernel and in the judge.

An exercise is four small functions: ``cases`` draws plain-data cases, ``expect`` computes the
right answer for a case (trusted code only), ``observe`` runs the student's objects on a case and
returns plain data, ``compare`` turns (case, expected, observed) into a Finding or None. In the
kernel `check` runs all four for instant feedback; the judge runs ``observe`` in a sandboxed child
and the rest in the trusted nbgrader process, so a student's objects never reach a comparison.
"""
from __future__ import annotations

import traceback
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from .feedback import Finding, Result, result


@dataclass(frozen=True)
class Crash:
    """The student's code raised while being observed: plain data, safe to send across processes."""
    error: str

    def to_plain(self) -> dict:
        return {"__crash__": self.error}


def crash_from(err: BaseException) -> Crash:
    last = traceback.format_exception_only(type(err), err)[-1].strip()
    return Crash(last[:400])


def from_plain(value):
    """Undo ``Crash.to_plain`` after a round trip through JSON."""
    if isinstance(value, dict) and set(value) == {"__crash__"}:
        return Crash(value["__crash__"])
    return value


def canonical(value):
    """A hashable stand-in equal for equal plain data, whatever order its dicts were built in."""
    if isinstance(value, dict):
        return ("dict", tuple(sorted((str(k), canonical(v)) for k, v in value.items())))
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(canonical(v) for v in value))
    return (type(value).__name__, repr(value))


def _without_seeds(case: dict):
    return canonical({k: v for k, v in case.items() if k not in ("seed", "_seed")})


def fresh_cases(draw: Callable[[int], dict | None], visible, count: int,
                key: Callable[[dict], object] = _without_seeds) -> list[dict]:
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


@dataclass(frozen=True)
class Exercise:
    name: str                                       # shown in feedback, e.g. "check_spy"
    needs: tuple[str, ...]                          # names the student's answer cells define
    cases: Callable[[np.random.Generator, bool], list]
    expect: Callable[[Any], Any]
    observe: Callable[..., Any]
    compare: Callable[[Any, Any, Any], Finding | None]
    crash_hint: str = "Run your code on the example in the exercise and read the error."

    def observe_safely(self, objs, case):
        try:
            return self.observe(*objs, case)
        except Exception as err:  # a student's bug is an observation, not a grader crash
            return crash_from(err)

    def verdict(self, cases, observed) -> Result:
        """Compare observations with freshly computed expectations: trusted code only."""
        findings = []
        for case, got in zip(cases, observed):
            got = from_plain(got)
            if isinstance(got, Crash):
                findings.append(Finding(describe(case), "your code runs without raising",
                                        got.error, self.crash_hint))
                continue
            finding = self._compare(case, got)
            if finding is not None:
                findings.append(finding)
        if len(observed) != len(cases):
            findings.append(Finding("all cases", f"{len(cases)} results",
                                    f"{len(observed)} results", "The judge lost some results."))
        return result(self.name, len(cases), findings)

    def _compare(self, case, got) -> Finding | None:
        expected = self.expect(case)
        try:
            return self.compare(case, expected, got)
        except Exception as err:  # an observation of a shape no honest answer produces
            return Finding(describe(case), f"a result shaped like {_shape_of(expected)}",
                           f"{_shape_of(got)} ({type(err).__name__})",
                           "Your answer returned something of the wrong kind; re-read what the "
                           "exercise asks it to return.")

    def check(self, *objs, hidden: bool = False, seed=None) -> Result:
        """Instant feedback in the kernel: visible cases are fixed, hidden ones drawn now."""
        rng = np.random.default_rng(seed if seed is not None else (None if hidden else 0))
        cases = self.cases(rng, hidden)
        return self.verdict(cases, [self.observe_safely(objs, c) for c in cases])


def _shape_of(value) -> str:
    if isinstance(value, (list, tuple)):
        return f"{type(value).__name__} of {len(value)}"
    return type(value).__name__


def describe(case) -> str:
    """A case as a student reads it (cases are plain dicts of ints, tuples and strings)."""
    if isinstance(case, dict):
        return ", ".join(f"{k}={v!r}" for k, v in case.items() if not k.startswith("_"))
    return repr(case)
