"""nbgrader autograde preprocessor: the judge starts before the kernel, and both run at once.

The judge needs the submission's answer cells, the gradebook's record of the release and the
run's seed, and nothing the kernel computes. ``JudgeAhead``, first of
``Autograde.autograde_preprocessors``, reads the gradebook and starts ``JudgeExercises``' judging
of a copy of the notebook in a thread; ``JudgeExercises``, in its place after the kernel, waits
for those verdicts instead of judging again. Same cases, same limits, same verdicts: only the
time changes, where a core is free while the kernel runs (a run with fewer grading processes than
cores: one or two submissions, a regrade). When the submission fails before ``JudgeExercises``
runs (its kernel died, hit a limit), `cancel_pending` kills the judge's child still running and
starts no other.
"""
from __future__ import annotations

import concurrent.futures as cf
import copy
import threading

from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Bool

from . import sandbox
from .preprocessor import JudgeExercises

_POOL = cf.ThreadPoolExecutor(max_workers=2, thread_name_prefix="inside-vmap-judge-ahead")
_PENDING: set = set()
_LOCK = threading.Lock()


class JudgeAhead(NbGraderPreprocessor):
    enabled = Bool(True, help="Start the judge's child while the kernel runs (it needs nothing "
                              "the kernel computes); False: judge after the kernel, as "
                              "JudgeExercises does alone.").tag(config=True)

    def preprocess(self, nb, resources):
        judge = JudgeExercises(parent=self)
        if not (self.enabled and judge.enabled):
            return nb, resources
        names = dict(resources.get("nbgrader", {}))
        template = judge.template(names)            # the gradebook is read here, not in a thread
        budget = sandbox.submission_budget(resources, judge.budget_seconds)
        future = _POOL.submit(judge.judge, copy.deepcopy(nb), names, template, budget)
        with _LOCK:
            _PENDING.add((future, budget))
        future.add_done_callback(lambda f: _forget(f, budget))
        resources.setdefault("inside_vmap", {})["judging"] = future
        return nb, resources


def _forget(future, budget) -> None:
    with _LOCK:
        _PENDING.discard((future, budget))


def cancel_pending() -> int:
    """Stop every judge started ahead whose verdicts nobody will read (its submission failed);
    how many there were. Called after each submission is converted."""
    with _LOCK:
        pending = list(_PENDING)
    for _future, budget in pending:
        budget.cancel()
    return len(pending)
