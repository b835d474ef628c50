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
        rng = runner.cases_rng(self.seed, key)
        use_bwrap = self.use_bwrap()
        # Only a box can mount the cache read-only; unboxed, a student could overwrite entries.
        cache = sandbox.CompileCache(self.compile_cache) if self.compile_cache and use_bwrap \
            else None
        verdicts = runner.judge(nb, self.limits(), use_bwrap, rng, cache)
        for cell in nb.cells:
            grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
            if grade_id in verdicts:
                cell.outputs = _outputs(verdicts[grade_id])
        resources.setdefault("inside_vmap", {})["verdicts"] = {
            g: r.to_dict() for g, r in verdicts.items()}
        return nb, resources

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
    """One output per verdict: text when it passed, an error (which nbgrader scores 0) when not."""
    if res.passed:
        return [new_output("stream", name="stdout", text="Judge: " + res.summary() + "\n")]
    head, _, _ = res.summary().partition("\n")
    return [new_output("error", ename="JudgeVerdict", evalue=head, traceback=[res.summary()])]
