"""The verdict on one exercise from what the trusted side kept of a child's run (`Session`).

First, an answer that wrote into the judge's channel, changed what observes it, or had JAX's
implementation do its work goes to a human (needs manual grading, with every such reason), also
when the run died after that was seen; an answer whose names are missing is told so; an exercise
whose every case was answered and closed gets the comparison made when it closed. Anything else
is undecided: the run ended before the exercise did, and it is judged again on its own.
"""
from __future__ import annotations

from ..feedback import Finding, Result, result
from . import session
from .box import tamper
from .watch import End, Outcome

# The longest reason a verdict gives for manual grading (it reaches the gradebook and the export).
MAX_REASON = 600
STAGE = "running your answer in the judge"
# What a failed run was expected to do, by how it ended (`failed`; `ran_out_of_time` reads it).
IN_TIME, NORMALLY = "it finishes within its time", "it finishes normally"


def settle(exercise, cases, talk: session.Session, owned) -> Result | None:
    """The verdict on ``exercise`` from ``talk``, or None when the run did not decide it."""
    gid, rules = exercise.grade_id, exercise.delegation
    seen = talk.calls(gid, set(rules.calls), rules.strict, set(owned))
    # A forged line while it was observed, or while the cells of a run of it alone ran, is its.
    forged = talk.forged_at == gid or (talk.forged_at == session.CELLS and list(talk.jobs) == [gid])
    why = [session.FORGED if forged else "", tamper.reason(talk.changes(gid)),
           f"it calls {', '.join(s.replace(':', '.') for s in seen)} itself, the "
           f"implementation this exercise asks you to write" if seen else ""]
    if any(why):
        return manual(exercise, cases, "; ".join(w for w in why if w))
    if gid in talk.missing:
        return result(exercise.name, 1, [Finding(
            "your answer cells", f"they define {', '.join(talk.missing[gid])}", "not defined",
            "Keep the names given in the exercise; only code in answer cells is graded.")])
    return talk.verdicts.get(gid)


def manual(exercise, cases, reason: str) -> Result:
    return result(exercise.name, len(cases), [], manual=reason[:MAX_REASON])


def failed(name: str, out: Outcome) -> Result:
    """``name`` failed because its run ended as ``out`` did (or ended before answering)."""
    expected = IN_TIME if out.kind is End.TIMED_OUT else NORMALLY
    reason = out.failure or "the judge's child ended before answering"
    return result(name, 1, [Finding(STAGE, expected, reason,
                                    "The judge re-runs your answer cells in a fresh process; "
                                    "make them run top to bottom without the rest of the "
                                    "notebook.")])


def ran_out_of_time(res: Result) -> bool:
    """Whether ``res`` is an answer the judge stopped for time (its own limit or the
    submission's budget)."""
    return any(f.case == STAGE and f.expected == IN_TIME for f in res.findings)
