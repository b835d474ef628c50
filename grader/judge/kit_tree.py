"""The judge's child's view of the ``grader`` package: the lessons' kits and nothing that knows
an answer.

`build` copies into a fresh folder only what student-side code needs (the lesson packages' faces
and kits, the core modules the kits import, the plain-data wire format, the feedback display the
set-up cells import, and `grader.judge.box`: the child itself, the grading kernel's output
stream) and marks it ``KIT_ONLY``; the sandbox mounts that folder instead of the course, so
expected values, reference implementations, case generation and comparisons are not there to
import. Everything else stays in the trusted process.
"""
from __future__ import annotations

import atexit
import functools
import glob
import os
import shutil
import tempfile

from .. import lessons
from ..repo import PACKAGE

# Relative to the grader package: the files student-side code may import.
FILES = ("__init__.py", "wire.py", "feedback.py",
         "core/__init__.py", "core/_jax/__init__.py", "core/jaxprs.py",
         "lessons/__init__.py", "lessons/*/__init__.py", "lessons/*/kit/*.py",
         "judge/__init__.py", "judge/box/*.py")      # the box's own code: all of judge/box/


def members() -> list[str]:
    """The files of the kit tree, relative to the grader package."""
    found = []
    for pattern in FILES:
        found += sorted(os.path.relpath(p, PACKAGE) for p in
                        glob.glob(os.path.join(PACKAGE, pattern)))
    return found


def build(dest: str) -> str:
    """Write the kit tree under ``dest`` (``dest/grader/...``); returns ``dest``."""
    for rel in members():
        target = os.path.join(dest, "grader", rel)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(os.path.join(PACKAGE, rel), target)
    marker = os.path.join(dest, "grader", os.path.relpath(lessons.KIT_ONLY, PACKAGE))
    with open(marker, "w") as fh:
        fh.write("This copy of grader/ holds only the lessons' kits (grader.judge.kit_tree).\n")
    return dest


@functools.lru_cache(maxsize=1)
def shared() -> str:
    """One kit tree per grading process, removed when it exits."""
    dest = tempfile.mkdtemp(prefix="inside-vmap-kit-")
    atexit.register(shutil.rmtree, dest, ignore_errors=True)
    return build(dest)
