"""The lessons, one package each: ``l<N>_<name>/`` with its ``kit`` and its answer key.

A lesson package is laid out so that where the answer key lives can be seen:

* ``kit/`` is the student's side: the primitives, stand-ins and helpers an answer may use, and
  the observers that run the student's objects on a case. It is the only part of a lesson that
  the judge's child (and the grading kernel) can import.
* every other module is the trusted side: what the lesson shows live, the self-checks, and one
  module per graded exercise holding its cases, expectation, comparison and hints, declared once
  as a module-level `grader.exercise.Exercise`.

`exercises` finds every declaration by scanning the packages (an import error is raised, never
skipped); a lesson package's ``__getattr__`` calls `lookup`, so the notebook's ``L1.check_spy``
needs no list of names to keep in step.
"""
from __future__ import annotations

import functools
import importlib
import os
import pkgutil
import re
import sys

PACKAGE = re.compile(r"^l\d+_[a-z0-9_]+$")
# Written by the judge into the copy of grader/ that holds only the kits (grader.judge.kit_tree).
KIT_ONLY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "KIT_ONLY")


def packages() -> list[str]:
    """Names of the lesson packages, in lesson order."""
    here = os.path.dirname(os.path.abspath(__file__))
    return sorted((m.name for m in pkgutil.iter_modules([here]) if m.ispkg and
                   PACKAGE.match(m.name)), key=lambda n: int(n[1:].split("_")[0]))


def _trusted_modules(package: str) -> list:
    """The answer-key modules of one lesson package (everything but its kit), imported."""
    pkg = importlib.import_module(f"{__name__}.{package}")
    return [importlib.import_module(f"{pkg.__name__}.{m.name}")
            for m in pkgutil.iter_modules(pkg.__path__) if m.name != "kit"]


@functools.cache
def exercises() -> dict:
    """``{grade_id: Exercise}`` for every exercise any lesson declares; grade ids are unique."""
    from ..exercise import Exercise  # trusted side only: the judge's child has no exercise.py
    found: dict[str, Exercise] = {}
    for package in packages():
        for module in _trusted_modules(package):
            for value in vars(module).values():
                if isinstance(value, Exercise) and found.get(value.grade_id) is not value:
                    if value.grade_id in found:
                        raise ValueError(f"grade id {value.grade_id!r} is declared twice "
                                         f"(again in {module.__name__})")
                    found[value.grade_id] = value
    return found


def lookup(package: str, name: str):
    """The attribute ``name`` of a lesson package: the first trusted module exporting it.

    Where only the kit exists (the judge's child, the grading kernel), a check or self-check
    is a stub that says so, so a notebook cell that calls one still runs. In the grading kernel
    (an IPython shell over the kit tree) any other public name of the trusted side (the
    listings a course cell prints: ``L2.format_mv_calls()``, ``L3.VISIBLE_CONDS``, ...) is a
    `NotShown`: the course's cells run and print one calm line instead of a traceback in the
    student's feedback. The judge's child has no shell: there an answer reaching for the
    trusted side still raises, and the verdict says so."""
    short = package.rpartition(".")[2]
    if os.path.exists(KIT_ONLY):
        if name.startswith(("check_", "selfcheck_")):
            return _unavailable(name)
        if not name.startswith("_") and _in_shell():
            return NotShown(name)
        raise AttributeError(f"{package}.{name} is not available while grading")
    for module in _trusted_modules(short):
        if name in getattr(module, "__all__", ()):
            return getattr(module, name)
    raise AttributeError(f"module {package!r} has no attribute {name!r}")


def _unavailable(name: str):
    from ..feedback import selfcheck

    def stub(*args, **kwargs):
        return selfcheck(name, 0, [], note="not run while grading: the grade comes from the judge")
    stub.__name__ = name
    return stub


def _in_shell() -> bool:
    """Whether this is an IPython shell (the grading kernel), not a plain process (the child)."""
    ipython = sys.modules.get("IPython")
    return ipython is not None and ipython.get_ipython() is not None


class NotShown:
    """A trusted-side name in the grading kernel: what a course cell printed in the student's
    notebook is, while grading, one line saying so. Calling, indexing or slicing it gives it
    back; printing it, or looping over it (which runs no iteration), shows the line once."""
    def __init__(self, name: str):
        self._name = name
        self._said = False

    def __str__(self) -> str:
        return NOT_SHOWN.format(self._name)

    __repr__ = __str__

    def __call__(self, *args, **kwargs):
        return self

    def __getitem__(self, key):
        return self

    def __iter__(self):
        if not self._said:
            self._said = True
            print(self)
        return iter(())

    def __len__(self) -> int:
        return 0


NOT_SHOWN = ("({}: shown when you run this notebook yourself, not while it is graded; "
             "the grade comes from the judge)")
