"""Hidden tests out of the grading kernel's reach, and never a reason to stop anyone's feedback.

nbgrader's autograde writes the sanitized notebook (grade cells restored from the gradebook,
hidden tests and all) into the submission's autograded folder and runs the kernel there: a cell
that read ``*.ipynb`` from its working folder printed the hidden tests into the student's
feedback. `HideHiddenTests`, the first autograde step, rewrites every notebook in that folder
with the hidden-test regions of its grade cells taken out, before any kernel starts; the
notebook being graded keeps them in memory (nbgrader writes it whole once the kernel is gone),
and `RestoreHiddenTests`, after the kernel, writes the others back as they were (a notebook of the
same assignment graded before this one). What the kernel can read holds no hidden test.

Only grade cells are read for hidden-test regions: their source is the instructor's, restored
from the gradebook. A student's own cell that merely mentions the delimiters (``# BEGIN HIDDEN
TESTS`` with no end) is the student's text, left as written: nbgrader's ClearHiddenTests raised
on it and stopped that student's feedback, and ``make feedback`` for everyone.
"""
from __future__ import annotations

import copy
import glob
import os
import stat

import nbformat
from nbgrader import utils
from nbgrader.preprocessors import ClearHiddenTests, NbGraderPreprocessor

from .submission import AUTOGRADED_EXTRA, size_limit

KEY = "hidden_tests"                    # resources["inside_vmap"][KEY]: {path: original bytes}


def strip_hidden_tests(nb, clearer: ClearHiddenTests | None = None) -> bool:
    """Take the hidden-test regions out of ``nb``'s grade cells, in place; whether any was."""
    clearer = clearer or ClearHiddenTests()
    removed = False
    for cell in nb.cells:
        if utils.is_grade(cell):
            removed = clearer._remove_hidden_test_region(cell) or removed
    return removed


class HideHiddenTests(NbGraderPreprocessor):
    """Autograde, first step: no notebook in the kernel's working folder holds a hidden test."""

    def preprocess(self, nb, resources):
        folder = resources.get("metadata", {}).get("path") or ""
        current = os.path.join(folder, resources.get("nbgrader", {}).get("notebook", "") +
                               ".ipynb")
        if not folder or not os.path.isfile(current):
            return nb, resources
        clearer = ClearHiddenTests(parent=self)
        saved = {}
        for path in glob.glob(os.path.join(glob.escape(folder), "*.ipynb")):
            if path == current:
                shown = copy.deepcopy(nb)
                if strip_hidden_tests(shown, clearer):
                    nbformat.write(shown, path)
            elif self._regular(path):
                saved.update(self._hide(path, clearer))
        resources.setdefault("inside_vmap", {})[KEY] = saved
        return nb, resources

    def _hide(self, path: str, clearer) -> dict:
        with open(path, "rb") as fh:
            original = fh.read()
        try:
            other = nbformat.reads(original.decode("utf-8"), as_version=4)
        except Exception:               # not a notebook nbgrader wrote: nothing hidden in it
            return {}
        if not strip_hidden_tests(other, clearer):
            return {}
        nbformat.write(other, path)
        return {path: original}

    def _regular(self, path: str) -> bool:
        st = os.lstat(path)
        return stat.S_ISREG(st.st_mode) and st.st_size <= size_limit(self) + AUTOGRADED_EXTRA


class RestoreHiddenTests(NbGraderPreprocessor):
    """Autograde, right after the kernel: the other notebooks back as they were."""

    def preprocess(self, nb, resources):
        for path, original in resources.get("inside_vmap", {}).pop(KEY, {}).items():
            with open(path, "wb") as fh:
                fh.write(original)
        return nb, resources
