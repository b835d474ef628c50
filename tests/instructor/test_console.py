"""What autograde shows (grader.instructor.console): every line it writes to the terminal and to
autograde.log is inert, whatever a student put in an id, a grade id or an exception."""
import io
import logging
import re

import pytest

from grader.instructor import console
from grader.instructor.autograde import AutogradeEach
from tests.fixtures.hostile import HOSTILE, inert_line

RECORD = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} \[(INFO|WARNING|ERROR)\] ")


@pytest.mark.parametrize("text", HOSTILE)
def test_a_log_record_never_forges_another_nor_acts(tmp_path, text):
    log = logging.getLogger(f"inside-vmap-test-{id(text)}")
    log.propagate = False
    path = tmp_path / "autograde.log"
    with console.log_to_file(log, str(path), logging.INFO):
        log.warning("Cell with id '%s' exists multiple times!", text)
        try:
            raise KeyError(text)
        except KeyError:
            log.error("There was an error", exc_info=True)
    lines = path.read_text().split("\n")[2:-1]      # after the run's banner, before the end
    assert lines and all(inert_line(line) for line in lines)
    # a record starts a line; whatever it quotes stays indented under it
    assert [bool(RECORD.match(line)) for line in lines].count(True) == 2
    assert all(RECORD.match(line) or line.startswith("    | ") for line in lines)


@pytest.mark.parametrize("text", HOSTILE)
def test_a_terminal_line_never_acts(text):
    app = AutogradeEach()
    app.out = io.StringIO()
    app.say(f"  [1/2] 01-a  {text}  FAILED: {text}  (1.0 s)")
    shown = app.out.getvalue()
    assert shown.count("\n") == 1 and inert_line(shown[:-1])
