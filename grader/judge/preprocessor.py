"""nbgrader autograde preprocessor: the judge's verdict becomes each graded cell's grade.

Configure it in course/nbgrader_config.py between ``LimitOutput`` and ``SaveAutoGrades``; it runs
in the trusted nbgrader process after the student's notebook has executed. For every grade cell
that a lesson module judges, the cell's outputs are replaced by the judge's message, with an error
output when the exercise failed, so ``SaveAutoGrades`` scores the verdict and the feedback shows
what the judge found (never the hidden test code). With ``seed`` set, every notebook of one
assignment and name gets the same hidden cases; with ``compile_cache``, its children read the
run's warm compilation cache (``make autograde`` sets both, see ``grader.judge.warm``).
"""
from __future__ import annotations

from nbformat.v4 import new_output
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Bool, Enum, Float, Int, Unicode

from . import runner, sandbox


class JudgeExercises(NbGraderPreprocessor):
    enabled = Bool(True, help="Re-judge graded exercises outside the student's kernel.").tag(config=True)
    timeout = Float(90.0, help="Wall-clock seconds for one judge child.").tag(config=True)
    cpu_seconds = Int(180, help="CPU seconds for one judge child (RLIMIT_CPU).").tag(config=True)
    memory_mb = Int(4096, help="Address-space limit of one judge child, in MiB.").tag(config=True)
    sandbox = Enum(["auto", "bwrap", "none"], default_value="auto",
                   help="'bwrap' requires bubblewrap, 'none' disables isolation, 'auto' uses "
                        "bubblewrap when it works and warns loudly when not.").tag(config=True)
    seed = Int(-1, help="Seed of the hidden cases: every notebook of the same assignment and "
                        "name judged with one seed gets the same cases. -1: fresh cases for every "
                        "notebook. Keep it secret; `make autograde` draws one per run."
               ).tag(config=True)
    compile_cache = Unicode("", help="A JAX compilation cache the judge children read but never "
                                     "write, filled beforehand by `grader.judge.warm` from the "
                                     "instructor's solutions on the same seed. Empty: none."
                            ).tag(config=True)

    def preprocess(self, nb, resources):
        if not self.enabled:
            return nb, resources
        names = resources.get("nbgrader", {})
        key = runner.case_key(names.get("assignment", ""), names.get("notebook", ""))
        template = self.template(names)
        rng = runner.cases_rng(self.seed, key)
        use_bwrap = self.use_bwrap()
        # Only a box can mount the cache read-only; unboxed, a student could overwrite entries.
        cache = sandbox.CompileCache(self.compile_cache) if self.compile_cache and use_bwrap \
            else None
        template = template or runner.Template.of_notebook(nb)   # judged on its own: trusted
        verdicts = runner.judge(nb, self.limits(), use_bwrap, rng, cache, template=template)
        for cell in nb.cells:
            grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
            if grade_id in verdicts:
                cell.outputs = _outputs(verdicts[grade_id])
                # SaveAutoGrades scores what the metadata says: make it say what was released.
                cell.metadata.nbgrader.update(grade=True, solution=False, locked=True,
                                              points=template.points[grade_id])
        resources.setdefault("inside_vmap", {})["verdicts"] = {
            g: r.to_dict() for g, r in verdicts.items()}
        return nb, resources

    def template(self, names) -> runner.Template | None:
        """The gradebook's record of the released notebook: which cells are set-up, answers and
        grade cells, whatever the submission's own metadata claims. None outside autograde
        (a notebook judged on its own, as the warm-up does, is the instructor's)."""
        if not names.get("db_url"):
            return None
        from nbgrader.api import Gradebook
        with Gradebook(names["db_url"]) as gb:
            return runner.Template.of_gradebook(gb, names["notebook"], names["assignment"])

    def limits(self) -> sandbox.Limits:
        return sandbox.Limits(self.timeout, self.cpu_seconds, self.memory_mb)

    def use_bwrap(self) -> bool:
        if self.sandbox == "none":
            return False
        ok = sandbox.available()
        if self.sandbox == "bwrap" and not ok:
            raise RuntimeError("JudgeExercises.sandbox='bwrap' but bubblewrap does not work here")
        if not ok:
            self.log.warning("bubblewrap unavailable: the judge runs student code WITHOUT isolation")
        return ok


def _outputs(res):
    """One output per verdict: text when it passed, an error (which nbgrader scores 0) when not.
    An answer sent to manual grading is an error too, so that no configuration can turn it into
    full marks; `FlagForManualGrading` then takes the zero back and asks for a human."""
    if res.manual:
        return [new_output("error", ename="NeedsManualGrading", evalue=res.manual,
                           traceback=[res.summary()])]
    if res.passed:
        return [new_output("stream", name="stdout", text="Judge: " + res.summary() + "\n")]
    head, _, _ = res.summary().partition("\n")
    return [new_output("error", ename="JudgeVerdict", evalue=head, traceback=[res.summary()])]


class FlagForManualGrading(NbGraderPreprocessor):
    """After ``SaveAutoGrades``: a grade cell the judge sent to manual grading gets no automatic
    score and is marked as needing a human in the gradebook (the formgrader lists it), with the
    judge's reason as the automatic comment of the exercise's answer cell."""

    PREFIX = "inside-vmap: needs manual grading: "

    def preprocess(self, nb, resources):
        verdicts = resources.get("inside_vmap", {}).get("verdicts", {})
        flagged = {g: v["manual"] for g, v in verdicts.items() if v.get("manual")}
        names = resources.get("nbgrader", {})
        if not flagged or not names.get("db_url"):
            return nb, resources
        from nbgrader.api import Gradebook, MissingEntry
        answers = _answer_before(nb)
        with Gradebook(names["db_url"]) as gb:
            for grade_id, reason in flagged.items():
                args = (names["notebook"], names["assignment"], names["student"])
                grade = gb.find_grade(grade_id, *args)
                grade.auto_score = None
                grade.needs_manual_grade = True
                try:
                    comment = gb.find_comment(answers.get(grade_id, grade_id), *args)
                    comment.auto_comment = self.PREFIX + reason
                except MissingEntry:
                    self.log.warning("No answer cell to comment on for %s", grade_id)
            gb.db.commit()
        return nb, resources


def _answer_before(nb) -> dict[str, str]:
    """Each grade cell's nearest answer cell above it (where a formgrader comment belongs)."""
    out, last = {}, None
    for cell in nb.cells:
        m = cell.metadata.get("nbgrader", {})
        if m.get("solution") and not m.get("grade"):
            last = m.get("grade_id")
        elif m.get("grade") and last:
            out[m["grade_id"]] = last
    return out
