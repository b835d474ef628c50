"""The judge's child's view of the ``grader`` package: the lessons' kits and nothing that knows
an answer.

`build` copies into a fresh folder only what student-side code needs and marks it ``KIT_ONLY``;
the sandbox mounts that folder instead of the course, so expected values, reference
implementations, case generation and comparisons are not there to import. What it copies is
derived, never listed: the roots (the lesson packages' faces and kits, the plain-data wire format,
the feedback display the set-up cells import, and `grader.judge.box`: the child itself, the
grading kernel's output stream) and every grader module they import (`kit_imports`), which must
lie on the box's side (`box_side`); a kit importing the answer key stops the build, naming both.
Everything else stays in the trusted process.
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
from .kit_imports import TRUSTED_ONLY, KitImportError, imported, module_file

# Relative to the grader package: what the box runs or student-side code imports first.
ROOTS = ("__init__.py", "wire.py", "feedback.py", "lessons/__init__.py", "lessons/*/__init__.py",
         "lessons/*/kit/*.py", "judge/__init__.py", "judge/box/*.py")


def box_side(rel: str) -> bool:
    """Whether a file may be in the box: it knows no answer (the core's introspection, the wire,
    the display, the lessons' faces and kits, the box's own code)."""
    parts = rel.split("/")
    if rel in ("__init__.py", "wire.py", "feedback.py", "lessons/__init__.py",
               "judge/__init__.py") or parts[0] == "core" or parts[:2] == ["judge", "box"]:
        return True
    return parts[0] == "lessons" and len(parts) >= 3 and lessons.PACKAGE.match(parts[1]) is not None \
        and (parts[2] == "kit" or parts[2:] == ["__init__.py"])


def members() -> list[str]:
    """The files of the kit tree, relative to the grader package: the roots and what they import."""
    todo = [os.path.relpath(p, PACKAGE).replace(os.sep, "/") for pattern in ROOTS
            for p in sorted(glob.glob(os.path.join(PACKAGE, pattern)))]
    found = set(todo)
    while todo:
        rel = todo.pop()
        for dotted in imported(PACKAGE, rel):
            target = module_file(PACKAGE, dotted)
            if target is None:
                raise KitImportError(f"grader/{rel} imports grader.{dotted}, which does not exist")
            if not box_side(target):
                raise KitImportError(
                    f"grader/{rel} imports grader.{dotted} (grader/{target}), which is the trusted "
                    "side's: the box cannot import it (move what the kit needs into the kit, or "
                    f"mark an import that runs only outside the box {TRUSTED_ONLY!r})")
            if target not in found:
                found.add(target)
                todo.append(target)
    return sorted(found)


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
