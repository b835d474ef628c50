"""Before nbgrader reads a submission's cell metadata, make it say what was released.

A student can edit any cell's nbgrader metadata: raise a grade cell's points, unmark it, rename
its id, or dress a cell of their own as locked set-up. nbgrader's ``OverwriteCells`` restores a
locked cell's source and a grade cell's points, but trusts the ``grade``/``solution`` flags it
is given, and stops the whole submission with "Inconsistent checksums" when they were changed.
`RestoreCellMetadata` runs just before it and rewrites every known cell's flags from the
gradebook's record of the release; a cell whose id the release never had is the student's own,
and loses its nbgrader metadata. Then the submission is graded as released, whatever was edited.
"""
from __future__ import annotations

from nbgrader.api import Gradebook
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Bool


class RestoreCellMetadata(NbGraderPreprocessor):
    enabled = Bool(True, help="Rewrite each cell's nbgrader flags (grade, solution, locked, "
                              "points) from the gradebook before OverwriteCells reads them."
                   ).tag(config=True)

    def preprocess(self, nb, resources):
        names = resources.get("nbgrader", {})
        if not self.enabled or not names.get("db_url"):
            return nb, resources
        with Gradebook(names["db_url"]) as gb:
            released = gb.find_notebook(names["notebook"], names["assignment"])
            points = {c.name: float(c.max_score) for c in released.grade_cells}
            solutions = {c.name for c in released.solution_cells}
            locked = {c.name: bool(c.locked) for c in released.source_cells}
        for cell in nb.cells:
            meta = cell.metadata.get("nbgrader")
            if not meta:
                # DeduplicateIds leaves ``nbgrader: {}`` on a copy of a released cell (one
                # pasted twice), which OverwriteCells then reads for a grade id (KeyError,
                # the whole submission failed): the copy is the student's own cell.
                cell.metadata.pop("nbgrader", None)
                continue
            grade_id = meta.get("grade_id")
            if grade_id not in locked:
                del cell.metadata["nbgrader"]       # never released: the student's own cell
                continue
            meta.update(grade=grade_id in points, solution=grade_id in solutions,
                        locked=locked[grade_id])
            if grade_id in points:
                meta["points"] = points[grade_id]
            else:
                meta.pop("points", None)
        return nb, resources
