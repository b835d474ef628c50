"""Due dates from the config and the late policy (grader.nbgrader_plugins.late)."""
import datetime

import pytest
from nbformat.v4 import new_notebook
from nbgrader.api import Gradebook
from traitlets import TraitError
from traitlets.config import Config

from grader.nbgrader_plugins import DueDates, PercentPerDay, SetDueDate, record_due_dates

DAY = 86400.0
pytestmark = pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")


@pytest.mark.parametrize("late_s, score, penalty", [
    (0, 10, None),                  # on time: no penalty
    (1, 10, 1.0),                   # a second late is a started day
    (DAY, 10, 1.0),
    (DAY + 1, 10, 2.0),
    (20 * DAY, 10, 10.0),           # never more than the score
    (DAY, 0, None),                 # nothing to take from
])
def test_percent_per_started_day(late_s, score, penalty):
    assert PercentPerDay().late_submission_penalty("s", score, late_s) == penalty


def test_grace_and_rate_are_configurable():
    cfg = Config()
    cfg.PercentPerDay.percent = 25.0
    cfg.PercentPerDay.grace_minutes = 30.0
    plugin = PercentPerDay(config=cfg)
    assert plugin.late_submission_penalty("s", 8, 29 * 60) is None
    assert plugin.late_submission_penalty("s", 8, 31 * 60) == 2.0
    assert plugin.describe() == "25% of the score per started day late after 30 minutes' grace"


def test_a_due_date_nbgrader_cannot_read_is_refused_naming_it():
    with pytest.raises(TraitError, match=r"DueDates.dates\['a1'\] = 'next friday'"):
        DueDates(dates={"a1": "next friday"})


@pytest.fixture
def gradebook(tmp_path):
    url = "sqlite:///" + str(tmp_path / "gradebook.db")
    with Gradebook(url, "inside-vmap") as gb:
        gb.add_assignment("a1")
        gb.add_assignment("a2", duedate="2026-03-01 12:00:00 UTC")
    return url


def duedates(url):
    with Gradebook(url, "inside-vmap") as gb:
        return {a.name: a.duedate for a in gb.assignments}


def test_configured_due_dates_go_into_the_gradebook(gradebook):
    with Gradebook(gradebook, "inside-vmap") as gb:
        changed = record_due_dates(gb, {"a1": "2026-02-01 17:00:00 Europe/Berlin", "zz": "2026-01-01"})
        assert changed == ["a1: none -> 2026-02-01 16:00:00 UTC"]
        assert record_due_dates(gb, {"a1": "2026-02-01 16:00:00 UTC"}) == []    # unchanged
    assert duedates(gradebook) == {"a1": datetime.datetime(2026, 2, 1, 16),
                                   "a2": datetime.datetime(2026, 3, 1, 12)}   # a2 untouched


def test_the_autograde_step_sets_the_submissions_due_date(gradebook):
    cfg = Config()
    cfg.DueDates.dates = {"a2": "2026-03-02 12:00:00 UTC", "a1": "2026-01-01 00:00:00 UTC"}
    resources = {"nbgrader": {"assignment": "a2", "db_url": gradebook, "student": "s",
                              "notebook": "nb"}}
    nb, _ = SetDueDate(config=cfg).preprocess(new_notebook(), resources)
    assert duedates(gradebook) == {"a1": None, "a2": datetime.datetime(2026, 3, 2, 12)}
