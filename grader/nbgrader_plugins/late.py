"""Due dates and the late policy, set once in ``course/nbgrader_config.py``.

nbgrader keeps an assignment's due date in the gradebook (``nbgrader db assignment add A
--duedate=...``) and computes how late a submission is from its ``timestamp.txt``;
``AssignLatePenalties`` then asks a ``LateSubmissionPlugin`` for the penalty. Here:

* `DueDates` holds the term's due dates in the config (the one place); `record_due_dates` writes
  them into the gradebook (``make assign`` and ``make term`` call it), and `SetDueDate`, an
  autograde step placed before ``AssignLatePenalties``, does the same for the submission's
  assignment, so a plain ``nbgrader autograde`` honours the config too.
* `PercentPerDay` is the course's late policy: a share of the score per started day late.
"""
from __future__ import annotations

import math

from nbgrader.api import Gradebook, MissingEntry
from nbgrader.plugins import LateSubmissionPlugin
from nbgrader.preprocessors import NbGraderPreprocessor
from nbgrader.utils import parse_utc
from traitlets import Dict, Float, TraitError, Unicode, validate
from traitlets.config import LoggingConfigurable


class DueDates(LoggingConfigurable):
    """The term's due dates, one per assignment."""

    dates = Dict(
        key_trait=Unicode(), value_trait=Unicode(),
        help="Due date per assignment, e.g. {'01-the-rule-per-primitive': '2026-10-05 17:00:00 "
             "Europe/Berlin'} (any form nbgrader's parse_utc reads: a time zone name, a numeric "
             "offset, or ISO 8601). An assignment named here gets this due date in the "
             "gradebook; one not named keeps whatever the gradebook has (none by default, so "
             "nothing is late).").tag(config=True)

    @validate("dates")
    def _parseable(self, proposal):
        for name, when in proposal["value"].items():
            try:
                parse_utc(when)
            except (ValueError, OverflowError) as err:
                raise TraitError(f"DueDates.dates[{name!r}] = {when!r} is not a date nbgrader "
                                 f"can read ({err})") from None
        return proposal["value"]


def record_due_dates(gradebook: Gradebook, dates: dict[str, str], only=None) -> list[str]:
    """Write the configured due dates of the assignments the gradebook has; returns what
    changed, as ``"NAME: OLD -> NEW"`` lines."""
    changed = []
    for name, when in sorted(dates.items()):
        if only is not None and name not in only:
            continue
        try:
            assignment = gradebook.find_assignment(name)
        except MissingEntry:
            continue
        new = parse_utc(when)
        if assignment.duedate != new:
            changed.append(f"{name}: {assignment.duedate or 'none'} -> {new} UTC")
            assignment.duedate = new
    gradebook.db.commit()
    return changed


class SetDueDate(NbGraderPreprocessor):
    """Autograde step: the submission's assignment gets its configured due date before
    ``AssignLatePenalties`` reads it."""

    def preprocess(self, nb, resources):
        dates = DueDates(parent=self).dates
        assignment = resources["nbgrader"]["assignment"]
        if assignment in dates:
            with Gradebook(resources["nbgrader"]["db_url"]) as gb:
                for line in record_due_dates(gb, dates, only={assignment}):
                    self.log.info("Due date from the config: %s", line)
        return nb, resources


class PercentPerDay(LateSubmissionPlugin):
    """``percent`` of the notebook's score per started day late (after ``grace_minutes``),
    never more than the score itself. The gradebook keeps the penalty beside the score
    (``late_submission_penalty``); the export subtracts it."""

    percent = Float(10.0, help="Percent of the score taken per started day late.").tag(config=True)
    grace_minutes = Float(0.0, help="Minutes after the due date that still count as on "
                          "time.").tag(config=True)

    def late_submission_penalty(self, student_id, score, total_seconds_late):
        late = total_seconds_late - 60.0 * self.grace_minutes
        if late <= 0 or not score:
            return None
        days = math.ceil(late / 86400.0)
        return min(score, score * self.percent * days / 100.0)

    def describe(self) -> str:
        grace = f" after {self.grace_minutes:g} minutes' grace" if self.grace_minutes else ""
        return f"{self.percent:g}% of the score per started day late{grace}"
