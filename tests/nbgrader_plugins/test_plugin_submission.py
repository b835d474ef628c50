"""A collected submission, looked at without trusting it (grader.nbgrader_plugins.submission),
and the export's decisions that rest on it (outcome.classify): the size limit before any
parsing, content (not a timestamp) deciding what changed, nothing vouched for parsed again."""
import os

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook
from nbgrader.api import Gradebook
from nbgrader.coursedir import CourseDirectory
from traitlets.config import Config

from grader.nbgrader_plugins import (
    FAILED,
    GRADED,
    STALE,
    TOO_LARGE,
    GradingStatus,
    SubmissionSize,
    digest,
    inspect_submission,
    outcome,
    submission,
)
from grader.nbgrader_plugins.submission import (
    BROKEN,
    OVERSIZED,
    PRESENT,
    autograded_complete,
    autograded_paths,
    read_timestamp,
)

pytestmark = pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")
STAMP = "2026-01-05 10:00:00.000000 UTC"
LATER = "2026-01-06 10:00:00.000000 UTC"


def coursedir(root):
    cfg = Config()
    cfg.CourseDirectory.root = str(root)
    return CourseDirectory(config=cfg)


def put(root, step, student, nb=None, stamp=STAMP, raw=None):
    folder = root / step / student / "a1"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "timestamp.txt").write_text(stamp)
    if raw is not None:
        (folder / "nb.ipynb").write_bytes(raw)
    else:
        nbformat.write(nb or new_notebook(), str(folder / "nb.ipynb"))
    return folder


def executed(text="x = 1"):
    nb = new_notebook(cells=[new_code_cell(text, id="answer")])     # the same bytes each time
    nb.cells[0].execution_count = 1
    return nb


@pytest.fixture
def parses(monkeypatch):
    """How many times nbformat parsed a notebook here."""
    count = []
    real = nbformat.read
    monkeypatch.setattr(submission.nbformat, "read",
                        lambda *a, **k: count.append(1) or real(*a, **k))
    return count


# ---- the folder ----------------------------------------------------------------------------
def test_a_notebook_over_the_limit_fails_before_anything_parses_it(tmp_path, parses):
    put(tmp_path, "submitted", "big", raw=b"{" + b" " * 2_000_000 + b"}")
    here = inspect_submission(coursedir(tmp_path), "a1", "big", ["nb"], max_bytes=1_000_000)
    assert here.state == OVERSIZED and parses == []
    assert here.reason == (f"{TOO_LARGE} (nb.ipynb: 2.0 MB; the limit is 1 MB, "
                           "SubmissionSize.max_notebook_mb)")


def test_the_limit_is_a_traitlet_of_a_few_megabytes():
    assert 1 <= SubmissionSize().max_notebook_mb <= 10
    assert SubmissionSize.class_traits()["max_notebook_mb"].help
    cfg = Config()
    cfg.SubmissionSize.max_notebook_mb = 0.5
    assert submission.size_limit(SubmissionSize(config=cfg)) == 500_000


def test_content_is_digested_and_a_vouched_digest_is_not_parsed_again(tmp_path, parses):
    put(tmp_path, "submitted", "ada", executed())
    here = inspect_submission(coursedir(tmp_path), "a1", "ada", ["nb"], 10**6)
    assert (here.state, len(parses)) == (PRESENT, 1)
    assert here.digest == digest([str(tmp_path / "submitted" / "ada" / "a1" / "nb.ipynb")])
    again = inspect_submission(coursedir(tmp_path), "a1", "ada", ["nb"], 10**6, here.digest)
    assert (again, len(parses)) == (here, 1)
    put(tmp_path, "submitted", "ada", executed("x = 2"))            # changed: read again
    assert inspect_submission(coursedir(tmp_path), "a1", "ada", ["nb"], 10**6,
                              here.digest).digest != here.digest and len(parses) == 2


def test_corrupt_json_is_unreadable(tmp_path):
    put(tmp_path, "submitted", "bad", raw=b'{"cells": [')
    assert inspect_submission(coursedir(tmp_path), "a1", "bad", ["nb"], 10**6).state == BROKEN


def test_a_timestamp_is_never_read_through_a_link(tmp_path):
    folder = put(tmp_path, "submitted", "eve")
    (tmp_path / "secret").write_text("the gradebook's password")
    os.remove(folder / "timestamp.txt")
    os.symlink(tmp_path / "secret", folder / "timestamp.txt")
    assert read_timestamp(str(folder)) is None
    os.remove(folder / "timestamp.txt")
    os.mkfifo(folder / "timestamp.txt")             # nor does a pipe hang it
    assert read_timestamp(str(folder)) is None


def test_an_autograded_notebook_autograde_vouched_for_is_not_parsed(tmp_path, parses):
    cd = coursedir(tmp_path)
    put(tmp_path, "autograded", "ada", executed())
    written = digest(autograded_paths(cd, "a1", "ada", ["nb"]))
    assert autograded_complete(cd, "a1", "ada", ["nb"], written) and parses == []
    assert autograded_complete(cd, "a1", "ada", ["nb"], "other") and len(parses) == 1
    put(tmp_path, "autograded", "ada", new_notebook(cells=[new_code_cell("x")]))   # unexecuted
    assert not autograded_complete(cd, "a1", "ada", ["nb"], written)


# ---- what the export decides from it -------------------------------------------------------
@pytest.fixture
def course(tmp_path):
    url = "sqlite:///" + str(tmp_path / "gradebook.db")
    with Gradebook(url, "c") as gb:
        gb.add_assignment("a1")
        gb.add_notebook("nb", "a1")
        gb.add_grade_cell("g1", "nb", "a1", max_score=2, cell_type="code")
        for s in ("same", "reused", "resent", "big"):
            gb.add_student(s)
            sub = gb.update_or_create_submission("a1", s, timestamp=STAMP)
            grade = sub.notebooks[0].grades[0]
            grade.auto_score, grade.needs_manual_grade = 2, False
        gb.db.commit()
    return tmp_path, url


def graded(root, student, nb, stamp=STAMP):
    """A submission autograde graded, as it leaves the folders and the grading status."""
    cd = coursedir(root)
    put(root, "submitted", student, nb, stamp)
    put(root, "autograded", student, executed(), stamp)
    here = inspect_submission(cd, "a1", student, ["nb"], 10**6)
    GradingStatus().record(cd, "a1", student, GRADED, "", here.timestamp, here.digest,
                           digest(autograded_paths(cd, "a1", student, ["nb"])))


def rows(root, url):
    with Gradebook(url, "c") as gb:
        found = outcome.rows(gb, coursedir(root), GradingStatus().load(coursedir(root)))
    return {r.student_id: (r.status, r.reason) for r in found}


def test_content_decides_what_changed_not_the_timestamp(course, parses):
    root, url = course
    for s in ("same", "reused", "resent", "big"):
        graded(root, s, executed("answer = 1"))
    parses.clear()
    put(root, "submitted", "reused", executed("answer = 2"), STAMP)    # changed, same timestamp
    put(root, "submitted", "resent", executed("answer = 1"), LATER)    # same, a new timestamp
    put(root, "submitted", "big", raw=b" " * 6_000_000)             # over the default 5 MB
    got = rows(root, url)
    assert got["same"] == (GRADED, "") and got["resent"] == (GRADED, "")
    assert got["reused"] == (FAILED, STALE)
    assert got["big"][0] == FAILED and got["big"][1].startswith(TOO_LARGE)
    assert len(parses) == 1         # only the changed one: nothing vouched for was read again
