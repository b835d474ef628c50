"""The words of the grading status: each status and each reason, as the export writes them (one
place, imported by the status record and by the submission reading below it)."""

# The statuses a submission can have, as written in the export's ``status`` column.
GRADED = "graded"
NEEDS_MANUAL = "needs manual grading"
OVERRIDDEN = "overridden"       # a grader set a manual score (formgrader or the gradebook)
BLANK = "blank"                 # no answer cell changed since the release
LATE = "late"                   # submitted after the due date; the penalty is applied
FAILED = "failed"
MISSING = "missing"
GRADING = "grading"             # only in the record: autograde started and has not finished

# Reasons, as written in the export's ``reason`` column.
KERNEL_DIED = "kernel died"
TIMED_OUT = "timed out"
UNREADABLE = "unreadable notebook"
TOO_LARGE = "notebook too large"
NOTHING_SUBMITTED = "nothing submitted"
NO_NOTEBOOK = "no notebook in the submission"
INTERRUPTED = "autograde stopped before it finished (interrupted, or an error: see its log); " \
    "run it again"
NOT_AUTOGRADED = "no autograded notebook (autograde failed or has not run; see its log)"
STALE = "not autograded since the latest submission"
UNCHANGED = "no answer cell changed since the release"
