"""What ``make autograde`` shows: one line per submission, a closing table; the rest to the log.

Kept apart from the grading (`grader.instructor.autograde`) so the terminal's shape can change
without touching how submissions are graded.
"""
from __future__ import annotations

import collections
import contextlib
import io
import logging
import os
import sys
import time

from nbgrader.api import Gradebook, MissingEntry

from ..nbgrader_plugins import BLANK, FAILED, GRADED, LATE, MISSING, NEEDS_MANUAL, OVERRIDDEN, safe
from ..nbgrader_plugins.outcome import graded_row

# The closing table's rows, in order; ALWAYS are shown even at zero.
TABLE = ((GRADED, "graded"), (LATE, "late (penalty applied)"),
         (OVERRIDDEN, "overridden (manual grade)"), (BLANK, "blank (unchanged release)"),
         (NEEDS_MANUAL, "flagged: needs manual grading"), (FAILED, "failed"), (MISSING, "missing"))
ALWAYS = (GRADED, FAILED, NEEDS_MANUAL, BLANK, MISSING)
SLOWEST = 5


def table(outcomes, absent: int, seconds: float) -> list[str]:
    """A count per status, then the slowest submissions. ``outcomes``: (assignment, student,
    status, line, reason, seconds) per submission of the run; ``absent``: roster students who
    handed nothing in (missing too)."""
    counts = collections.Counter(o[2] for o in outcomes)
    counts[MISSING] += absent
    lines = [f"autograde: {len(outcomes) + absent} submission(s) in {seconds:.0f} s"]
    lines += [f"  {label:<32}{counts[kind]:>6}" for kind, label in TABLE
              if counts[kind] or kind in ALWAYS]
    timed = sorted((o for o in outcomes if o[5] > 0), key=lambda o: -o[5])[:SLOWEST]
    if timed:
        lines.append("  slowest: " + "; ".join(f"{o[0]} {o[1]} {o[5]:.1f} s" for o in timed))
    return lines


def graded_line(coursedir, assignment: str, student: str, text: str,
                dates: str = "") -> tuple[str, str]:
    """(status, line) of a graded submission, as the export will say it: graded, late,
    overridden, blank or needs manual grading, with the score and the reason (for a graded one
    too: an exercise the judge stopped for time, a notebook not submitted; ``dates``: what to flag
    about its timestamp, `ReceivedTimes.note`)."""
    with Gradebook(coursedir.db_url, coursedir.course_id) as gb:
        try:
            row = graded_row(gb, assignment, student, gb.find_assignment(assignment).max_score,
                             [dates] if dates else [])
        except MissingEntry:
            return GRADED, text
    earlier = " earlier, unchanged" if "unchanged" in text else ""
    return row.status, f"{row.status}{earlier} {row.score:g}/{row.max_score:g}" + (
        f": {row.reason}" if row.reason else "")


@contextlib.contextmanager
def terminal_to_log(log_path: str):
    """Kernels, judge children and worker processes write to file descriptors 1 and 2
    (ipykernel's "To connect another client ..." banner, once per kernel): while grading, both
    go to the log. Yields where this run's own lines go: a copy of the original stdout (or
    ``sys.stdout`` itself when it is not fd 1, as under a redirect)."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    try:
        direct = sys.stdout.fileno() == 1       # our lines would follow fd 1 into the log
    except (AttributeError, ValueError, io.UnsupportedOperation):
        direct = False
    saved = (os.dup(1), os.dup(2))
    log = os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    out = os.fdopen(os.dup(saved[0]), "w", buffering=1) if direct else sys.stdout
    os.dup2(log, 1)
    os.dup2(log, 2)
    try:
        yield out
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in saved + (log,):
            os.close(fd)
        if direct:
            out.close()


def quiet_console(log) -> None:
    """nbgrader's INFO and spurious checksum warnings go to the log file, not the terminal."""
    for handler in log.handlers:
        if isinstance(handler, logging.StreamHandler) and \
                getattr(handler, "stream", None) in (sys.stderr, sys.stdout):
            handler.setLevel(max(handler.level, logging.CRITICAL))


class SafeFormatter(logging.Formatter):
    """A log record as the course writes it to autograde.log: every control character shown as
    an escape (`safe.line`), and the record's later lines (a traceback) indented under it with
    ``| ``, so no text a student chose (nbgrader quotes grade ids, exceptions quote answers)
    can pass for a record of its own or repaint the terminal that shows the log."""

    CONTINUED = "\n    | "

    def format(self, record) -> str:
        return self.CONTINUED.join(safe.line(part)
                                   for part in super().format(record).split("\n"))


@contextlib.contextmanager
def log_to_file(log, path: str, level):
    """Everything nbgrader logs (and Python's warnings) goes to the log file for this run."""
    handler = logging.FileHandler(path, mode="a")
    handler.setFormatter(SafeFormatter("%(asctime)s [%(levelname)s] %(message)s"))
    handler.stream.write(f"\n==== autograde started {time.strftime('%Y-%m-%d %H:%M:%S')}\n")
    handler.setLevel(min(level if isinstance(level, int) else logging.getLevelName(level),
                         logging.INFO))
    warned = logging.getLogger("py.warnings")
    log.addHandler(handler)
    warned.addHandler(handler)
    warned.propagate, propagated = False, warned.propagate
    logging.captureWarnings(True)
    try:
        yield
    finally:
        logging.captureWarnings(False)
        warned.propagate = propagated
        warned.removeHandler(handler)
        log.removeHandler(handler)
        handler.close()
