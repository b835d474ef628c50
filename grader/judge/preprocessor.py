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
from nbgrader.utils import is_grade, is_solution
from traitlets import Bool, Enum, Float, Int, Unicode

from . import cellmeta, decide, runner, sandbox

_L = sandbox.Limits          # the one source of every judge child's default limit


class JudgeExercises(NbGraderPreprocessor):
    enabled = Bool(True, help="Re-judge graded exercises outside the student's kernel.").tag(config=True)
    timeout = Float(_L.wall_s, help="Wall-clock seconds for one judge child.").tag(config=True)
    cpu_seconds = Int(_L.cpu_s, help="CPU seconds for one judge child, all its processes "
                                     "together (a cgroup; else RLIMIT_CPU per process)."
                      ).tag(config=True)
    memory_mb = Int(_L.memory_mb, help="MiB of memory for one judge child, all its processes "
                                       "and tmpfs together (a cgroup; else RLIMIT_AS per "
                                       "process).").tag(config=True)
    max_tasks = Int(_L.tasks, help="Processes and threads one judge child may run at once."
                    ).tag(config=True)
    output_mb = Int(_L.output_mb, help="MiB one judge child may print (stdout and stderr); "
                                       "past it the child is killed.").tag(config=True)
    tmpfs_mb = Int(_L.tmpfs_mb, help="MiB of each tmpfs of a judge child (/tmp, /dev/shm)."
                   ).tag(config=True)
    budget_seconds = Float(sandbox.Budget.DEFAULT_S, help="Wall-clock seconds one submitted "
                           "notebook may take from the start of its grading: its grading kernel "
                           "and all its judge children (the first and every per-exercise "
                           "retry) together, which run at the same time. Spent, the kernel is "
                           "stopped (the submission fails: 'timed out in <exercise>') or the "
                           "exercise being judged fails with 'timed out'.").tag(config=True)
    case_kb = Int(_L.case_kb, help="KiB one case's observation may take on a judge child's "
                                   "answer pipe (the largest honest one is a few KiB). Checked "
                                   "as it arrives, before it is decoded: past it the child is "
                                   "stopped and that exercise fails.").tag(config=True)
    answer_nodes = Int(_L.answer_nodes, help="Syntax-tree nodes (Python's ast) of a notebook's "
                       "answer cells together that the judge reads before anything runs; the "
                       "reading is in the trusted process, before any budget applies. Past it "
                       "nothing is read or run: every exercise needs manual grading, with the "
                       "reason (the largest instructor solution has under 1,000).").tag(config=True)
    verdict_kb = Int(16, help="KiB of the judge's message kept in each grade cell (a verdict "
                              "quotes what the answer returned; it is written after "
                              "LimitOutput).").tag(config=True)
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

    fork_children = Bool(True, help="Fork each judge child from a zygote that has imported JAX "
                                    "once (grader.judge.box.zygote), in the same box and limits; "
                                    "where one cannot start, or False, each child starts in a "
                                    "box of its own.").tag(config=True)

    def preprocess(self, nb, resources):
        if not self.enabled:
            return nb, resources
        ahead = resources.get("inside_vmap", {}).pop("judging", None)   # ahead.JudgeAhead's
        template, verdicts = ahead.result() if ahead is not None else self.judge(
            nb, resources.get("nbgrader", {}), self.template(resources.get("nbgrader", {})),
            sandbox.submission_budget(resources, self.budget_seconds))
        for cell in nb.cells:
            grade_id = cellmeta.grade_id(cell)
            if grade_id in verdicts:
                cell.outputs = _outputs(verdicts[grade_id], self.verdict_kb * 2 ** 10)
                # SaveAutoGrades scores what the metadata says: make it say what was released.
                cell.metadata.nbgrader.update(grade=True, solution=False, locked=True,
                                              points=template.points[grade_id])
        resources.setdefault("inside_vmap", {})["verdicts"] = {
            g: r.to_dict() for g, r in verdicts.items()}
        resources["inside_vmap"]["timed_out"] = sorted(
            g for g, r in verdicts.items() if decide.ran_out_of_time(r))
        return nb, resources

    def judge(self, nb, names, template, budget=None):
        """``(template, {grade_id: Result})``: ``nb``'s graded exercises judged on the cases of
        its assignment and name under the seed, by ``template`` (the notebook's own if None)."""
        key = runner.case_key(names.get("assignment", ""), names.get("notebook", ""))
        use_bwrap = self.use_bwrap()
        # Only a box can mount the cache read-only; unboxed, a student could overwrite entries.
        cache = sandbox.CompileCache(self.compile_cache) if self.compile_cache and use_bwrap \
            else None
        template = template or runner.Template.of_notebook(nb)   # judged on its own: trusted
        verdicts = runner.judge(nb, self.limits(), use_bwrap, runner.cases_rng(self.seed, key),
                                cache, template=template,
                                budget=budget or sandbox.Budget(self.budget_seconds),
                                forked=self.fork_children)
        return template, verdicts

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
        return sandbox.Limits(self.timeout, self.cpu_seconds, self.memory_mb, self.max_tasks,
                              self.output_mb, tmpfs_mb=self.tmpfs_mb, case_kb=self.case_kb,
                              answer_nodes=self.answer_nodes)

    def use_bwrap(self) -> bool:
        if self.sandbox == "none":
            return False
        ok = sandbox.available()
        if self.sandbox == "bwrap" and not ok:
            raise RuntimeError("JudgeExercises.sandbox='bwrap' but bubblewrap does not work here")
        if not ok:
            self.log.warning("bubblewrap unavailable: the judge runs student code WITHOUT isolation")
        return ok


def _outputs(res, cap: int = 16 * 2 ** 10):
    """One output per verdict: text when it passed, an error (which nbgrader scores 0) when not.
    An answer sent to manual grading is an error too, so that no configuration can turn it into
    full marks; `FlagForManualGrading` then takes the zero back and asks for a human.
    Written after LimitOutput, so cut here to ``cap`` characters (a verdict quotes answers)."""
    text = _cut(res.summary(), cap)
    if res.manual:
        return [new_output("error", ename="NeedsManualGrading", evalue=_cut(res.manual, 2000),
                           traceback=[text])]
    if res.passed:
        return [new_output("stream", name="stdout", text="Judge: " + text + "\n")]
    head, _, _ = text.partition("\n")
    return [new_output("error", ename="JudgeVerdict", evalue=_cut(head, 2000), traceback=[text])]


def _cut(text: str, cap: int) -> str:
    return text if len(text) <= cap else text[:cap] + f"\n[... {len(text) - cap} more characters]"


class FlagForManualGrading(NbGraderPreprocessor):
    """After ``SaveAutoGrades``: a grade cell the judge sent to manual grading gets no automatic
    score and is marked as needing a human in the gradebook (the formgrader lists it), with the
    judge's reason as the automatic comment of the exercise's answer cell. A manual score a
    grader gave it before stays, and is its score (the export: overridden, kept over the regrade). An exercise the judge
    stopped for time keeps its score (none) and says so there too (``TIMED_OUT``), for the
    export and ``make autograde``'s line."""

    PREFIX = "inside-vmap: needs manual grading: "
    TIMED_OUT = "inside-vmap: timed out: "

    def preprocess(self, nb, resources):
        mine = resources.get("inside_vmap", {})
        flagged = {g: v["manual"] for g, v in mine.get("verdicts", {}).items() if v.get("manual")}
        notes = {g: self.PREFIX + str(reason)[:decide.MAX_REASON] for g, reason in flagged.items()}
        notes.update({g: f"{self.TIMED_OUT}timed out in {g}" for g in mine.get("timed_out", ())
                      if g not in flagged})
        names = resources.get("nbgrader", {})
        if not notes or not names.get("db_url"):
            return nb, resources
        from nbgrader.api import Gradebook, MissingEntry
        answers = _answer_before(nb)
        with Gradebook(names["db_url"]) as gb:
            args = (names["notebook"], names["assignment"], names["student"])
            for grade_id in flagged:
                grade = gb.find_grade(grade_id, *args)
                grade.auto_score = None
                grade.needs_manual_grade = True
            for grade_id, note in notes.items():
                try:
                    gb.find_comment(answers.get(grade_id, grade_id), *args).auto_comment = note
                except MissingEntry:
                    self.log.warning("No answer cell to comment on for %s", grade_id)
            gb.db.commit()
        return nb, resources


def _answer_before(nb) -> dict[str, str]:
    """Each grade cell's nearest answer cell above it (where a formgrader comment belongs)."""
    out, last = {}, None
    for cell in nb.cells:
        if is_solution(cell) and not is_grade(cell):
            last = cellmeta.grade_id(cell)
        elif is_grade(cell) and last:
            out[cellmeta.grade_id(cell)] = last
    return out
