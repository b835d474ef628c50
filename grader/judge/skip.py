"""nbgrader autograde preprocessors: the student's kernel does not run the grade cells the judge
re-runs anyway.

``JudgeExercises`` replaces the outputs of every grade cell it judges with its own verdict, so
running those cells' checks (hidden tests included) in the student's kernel during autograde was
work thrown away, and let the student's code watch the hidden tests run. ``SkipJudgedCells``
(before ``Execute``) tags those cells ``skip-execution``, which nbclient honours;
``UnskipJudgedCells`` (right after ``Execute``) takes the tag off again. Grade cells no lesson
module judges still run in the kernel and are scored by nbgrader as before; with the judge
disabled (``JudgeExercises.enabled=False``) nothing is skipped.
"""
from __future__ import annotations

from nbgrader.preprocessors import NbGraderPreprocessor
from nbgrader.utils import is_grade

from ..lessons import exercises
from . import cellmeta

TAG = "skip-execution"


def _judge_enabled(config) -> bool:
    return bool(config.get("JudgeExercises", {}).get("enabled", True))


class SkipJudgedCells(NbGraderPreprocessor):
    def preprocess(self, nb, resources):
        if not _judge_enabled(self.config):
            return nb, resources
        known = exercises()
        skipped = []
        for cell in nb.cells:
            if cell.cell_type == "code" and is_grade(cell) and cellmeta.grade_id(cell) in known:
                tags = cell.metadata.setdefault("tags", [])
                if TAG not in tags:
                    tags.append(TAG)
                    skipped.append(cellmeta.grade_id(cell))
        resources.setdefault("inside_vmap", {})["skipped"] = skipped
        return nb, resources


class UnskipJudgedCells(NbGraderPreprocessor):
    def preprocess(self, nb, resources):
        skipped = set(resources.get("inside_vmap", {}).get("skipped", ()))
        for cell in nb.cells:
            if cellmeta.grade_id(cell) in skipped:
                tags = [t for t in cell.metadata.get("tags", []) if t != TAG]
                if tags:
                    cell.metadata["tags"] = tags
                else:
                    cell.metadata.pop("tags", None)
        return nb, resources
