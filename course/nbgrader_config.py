"""nbgrader configuration for the Inside vmap course.

Run nbgrader from this folder (`cd course && nbgrader ...`) or through the Makefile targets
(`make assign`, `make collect`, `make autograde`, `make feedback`, `make export`).
The source assignments live in ../exercises so the repository's top level stays recognisable.
Everything below is nbgrader's own configuration; the course's classes plug in where nbgrader's
documentation says plugins go (grader/nbgrader_plugins/, grader/judge/preprocessor.py).
"""
import atexit
import os
import shutil
import tempfile

from nbconvert.preprocessors import ClearMetadataPreprocessor, CoalesceStreamsPreprocessor, CSSHTMLHeaderPreprocessor
from nbgrader.preprocessors import (
    AssignLatePenalties,
    CheckCellMetadata,
    ClearOutput,
    DeduplicateIds,
    GetGrades,
    IgnorePattern,
    LimitOutput,
    OverwriteKernelspec,
    SaveAutoGrades,
)

c = get_config()  # noqa: F821  (provided by nbgrader)

HERE = os.path.dirname(os.path.abspath(__file__))

# ---- the term: its settings, in this one place (docs/instructors.md) -----------------
# Every make target, bin/nbgrader and `make lab` (its formgrader) read them from here; `make term`
# shows them.
c.CourseDirectory.course_id = "inside-vmap"
# The exchange, through which releases, submissions and feedback pass: nbgrader 0.9.6's own
# default, written out. Students' servers must use the same root and course id; on a shared
# machine it must exist and be writable by every student (docs/instructors.md, "Deployment").
# A trial term on a shared machine keeps out of the machine-wide one with the environment variable
# INSIDE_VMAP_EXCHANGE=DIR (`make ... EXCHANGE=DIR` sets it for every target; docs/instructors.md).
c.Exchange.root = os.environ.get("INSIDE_VMAP_EXCHANGE") or "/usr/local/share/nbgrader/exchange"
# `make lab` on a machine with no exchange at that root (a student practising alone, a laptop):
# nbgrader's Assignments tab would answer "The exchange directory does not exist and could not be
# created". `make lab` names a folder of the project for that case (INSIDE_VMAP_LAB_EXCHANGE,
# build/exchange): the tab then lists what is released there, nothing until an assignment is
# released (`make practice` gives a student alone the exercises). An exchange that exists, or one
# named with EXCHANGE=DIR, is always used; no other command reads INSIDE_VMAP_LAB_EXCHANGE.
_LAB_EXCHANGE = os.environ.get("INSIDE_VMAP_LAB_EXCHANGE")
if _LAB_EXCHANGE and not os.environ.get("INSIDE_VMAP_EXCHANGE") and not os.path.isdir(c.Exchange.root):
    os.makedirs(_LAB_EXCHANGE, exist_ok=True)
    c.Exchange.root = _LAB_EXCHANGE
# The gradebook: SQLite beside this file. Several graders at once: a PostgreSQL URL instead, e.g.
# "postgresql://grader@db.example.org/inside_vmap" (the database must exist; nbgrader makes the
# tables). One autograde at a time per gradebook; a second one waits its turn.
c.CourseDirectory.db_url = "sqlite:///" + os.path.join(HERE, "gradebook.db")
# Each source notebook has a MyST twin (NN-name.md, for review as text) holding its solutions and
# hidden tests: it must never be copied into a release, a submission or a feedback folder.
c.CourseDirectory.ignore = [".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback", "*.md"]
# The exchange moves notebooks only (release, submit, collect), and the two files `nbgrader submit`
# writes beside them: timestamp.txt (the student's claim of when; collect replaces it, below) and
# submission_secret.txt (only hashed, into the released feedback's file name). Any other file a
# student hands in (leak.html, say) never reaches the course folder, its autograded copy or the
# student's feedback; a link or a pipe, whatever its name, is never collected (below).
c.CourseDirectory.include = ["*.ipynb", "timestamp.txt", "submission_secret.txt"]
# Collect dates each submission by when the exchange received it (the server's clock: the
# newest ctime of the inbound folder), orders and picks submissions by that, writes it into the
# collected timestamp.txt that nbgrader's lateness reads, and records the student's own claim
# beside it in received.json (a claim that disagrees is flagged in the export and by autograde).
# It copies regular files only: a link in the inbound folder, named like the notebook, once
# brought in whatever it pointed to (grader/nbgrader_plugins/received.py).
c.ExchangeFactory.collect = "grader.nbgrader_plugins.received.ReceivedCollect"
c.ReceivedTimes.tolerance_minutes = 5.0
# A submitted notebook larger than this fails its submission before anything parses it (a
# 94 MB one took the trusted process to 5 GB); autograde, the status and the export only stat it.
c.SubmissionSize.max_notebook_mb = 5.0
# Due dates, per assignment (none yet, so nothing is late); for example
#   c.DueDates.dates = {"01-the-rule-per-primitive": "2026-10-05 17:00:00 Europe/Berlin"}
c.DueDates.dates = {}
# The late policy: nbgrader's AssignLatePenalties asks this plugin for each late notebook's
# penalty: here 10% of its score per started day past the due date, kept beside the score in the
# gradebook and subtracted in the export (status "late").
c.AssignLatePenalties.plugin_class = "grader.nbgrader_plugins.PercentPerDay"
c.PercentPerDay.percent = 10.0
c.PercentPerDay.grace_minutes = 0.0

c.CourseDirectory.root = HERE
c.CourseDirectory.source_directory = os.path.join("..", "exercises")

# A kernel of this course's own name, installed into the venv by `make setup`, so no user-level
# kernelspec can change the interpreter that runs a notebook. nbgrader's validate (the Validate
# button, `bin/nbgrader validate`) runs the student's notebook there, in the student's own
# environment, so every check really runs: a blank notebook fails, a solved one passes.
c.ExecutePreprocessor.kernel_name = "inside-vmap"
# Autograde alone (its executor is the course's BoundedExecute, never validate's Execute) runs
# submissions in the same interpreter inside the judge's sandbox (grader/judge/kernel.py): no
# course source, no other submissions, no gradebook, and, with ZeroMQ over unix sockets in a
# private folder, no network. There the checks are stubs: the grade comes from the judge.
c.BoundedExecute.kernel_name = "inside-vmap-sandboxed"
# Each grading process keeps its kernels' sockets in a private folder of its own, the only one the
# sandboxed kernel can write besides the submission's: no kernel can reach another process's
# kernels, even when several processes grade at once. (Within one process kernels run one at a
# time; jupyter_client numbers the sockets after the files already there.)
_SOCKETS = tempfile.mkdtemp(prefix="inside-vmap-kernels-")
atexit.register(shutil.rmtree, _SOCKETS, ignore_errors=True)
c.KernelManager.transport = "ipc"
c.KernelManager.ip = os.path.join(_SOCKETS, "kernel")
# Seconds per cell. A cell that runs longer is interrupted; one that cannot be interrupted (a loop
# ignoring SIGINT) fails its whole submission, which `make autograde` reports as "timed out".
c.Execute.timeout = 60
# The grading kernel's own log stays out of the terminal (only errors are shown).
c.Execute.extra_arguments = ["--IPKernelApp.log_level=ERROR"]
# Where a solution was, the release holds a stub that does nothing: an unanswered prediction keeps the
# None it is given before its solution, an unanswered function returns None, and each check says
# "not answered yet" (on stderr: nbgrader and Validate count the cell failed), so "Run All" on an
# unanswered notebook reaches its last cell.
c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\n..."}

# Autograde: nbgrader's default steps, with the course's judge between LimitOutput and
# SaveAutoGrades. The judge re-runs each graded exercise outside the student's kernel and
# replaces the grade cell's outputs with its verdict (an error output when it failed), so
# SaveAutoGrades scores the verdict and the feedback shows the judge's message.
# Sanitising: nbgrader's default steps, with the cells' nbgrader flags first rewritten from the
# gradebook (a student may have edited them), so OverwriteCells grades the notebook as released.
c.Autograde.sanitize_preprocessors = [
    # Every front end's autograde (nbgrader's CLI and API, the formgrader's button, make
    # autograde) records what became of the submission in the gradebook's database: "grading"
    # here, "graded" at the end, or the failure BoundedExecute names (grader/nbgrader_plugins/
    # status.py), which the export, make autograde and the feedback read.
    "grader.nbgrader_plugins.status.RecordGrading",
    ClearOutput,
    DeduplicateIds,
    OverwriteKernelspec,
    "grader.judge.metadata.RestoreCellMetadata",
    # nbgrader's OverwriteCells, without a warning for each grade cell whose hidden tests it puts
    # back (every honest submission's; grader/nbgrader_plugins/hidden.py)
    "grader.nbgrader_plugins.hidden.OverwriteCellsAsReleased",
    CheckCellMetadata,
]
c.Autograde.autograde_preprocessors = [
    # The kernel runs in the submission's autograded folder, where nbgrader has just written the
    # sanitized notebook, hidden tests included: every notebook there loses its hidden tests
    # while the kernel runs, and the others get them back right after it (the graded one keeps
    # them in memory, and nbgrader writes it whole at the end).
    "grader.nbgrader_plugins.hidden.HideHiddenTests",
    "grader.judge.ahead.JudgeAhead",       # the judge's child starts now, beside the kernel
    "grader.judge.skip.SkipJudgedCells",   # the judge re-runs these: the kernel need not
    "grader.judge.execute.BoundedExecute",  # nbgrader's Execute, with the kernel's limits
    # How ipykernel splits a cell's printing into stream messages depends on timing: merged here,
    # before anything is saved or rendered, every grading path (make autograde, nbgrader's CLI,
    # the formgrader, a Dask worker) gives the student the same feedback for the same notebook.
    CoalesceStreamsPreprocessor,
    "grader.judge.skip.UnskipJudgedCells",
    "grader.nbgrader_plugins.hidden.RestoreHiddenTests",   # the kernel is gone: back as they were
    IgnorePattern,
    ClearMetadataPreprocessor,
    LimitOutput,
    "grader.judge.preprocessor.JudgeExercises",
    SaveAutoGrades,
    "grader.judge.preprocessor.FlagForManualGrading",   # delegation -> a human, with the reason
    "grader.nbgrader_plugins.SetDueDate",  # the config's due date, before it is read next
    AssignLatePenalties,
    CheckCellMetadata,
    "grader.nbgrader_plugins.status.RecordGraded",
]
# A grade cell the student deleted comes back from the gradebook (as released) and is graded
# like any other: the judge scores it from the student's answer cells, so deleting a check costs
# nothing and earns nothing (a correct answer keeps its points), and no cell stays ungraded.
c.OverwriteCells.add_missing_cells = True

# Feedback: nbgrader's default steps, plus taking hidden tests out of what students receive
# (never stopping on a student's own cell that mentions the delimiters), and the HTML made inert.
c.GenerateFeedback.preprocessors = [
    GetGrades,
    "grader.nbgrader_plugins.ClearHiddenTestsInFeedback",
    CoalesceStreamsPreprocessor,    # again, for a notebook autograded without the step above
    "grader.nbgrader_plugins.html.SanitizeSubmission",
    CSSHTMLHeaderPreprocessor,
]

# Every HTML rendering of a student's notebook is inert (grader/nbgrader_plugins/html.py): the
# formgrader's submission view (its HTMLExporter is made with this configuration; a student's
# markdown, HTML, JavaScript or SVG once ran as the instructor there) and the feedback above.
# nbconvert's SanitizeHTML (bleach) over every output and raw cell, with the course's allow-list,
# and markdown rendered by nbconvert, then cleaned the same way (nbgrader's formgrade template
# renders markdown cells itself, past nbconvert's own HTMLExporter.sanitize_html switch; that
# switch is left off: on top of these it escapes ordinary paragraphs and images).
c.HTMLExporter.preprocessors = ["grader.nbgrader_plugins.html.SanitizeSubmission"]
c.HTMLExporter.filters = {"markdown2html": "grader.nbgrader_plugins.html.SafeMarkdown"}

# Export: one row per enrolled student and assignment, with a status (graded, needs manual
# grading, overridden, blank, late, failed and why, missing); `nbgrader export` writes
# grades.csv in this folder. `make export FORMAT=canvas|moodle` picks the LMS exporters
# (grader.nbgrader_plugins.CanvasExportPlugin, MoodleExportPlugin).
c.ExportApp.plugin_class = "grader.nbgrader_plugins.StatusExportPlugin"
