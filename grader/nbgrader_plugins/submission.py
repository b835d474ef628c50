"""A collected submission's folder, looked at without trusting it, and read as little as can be.

`inspect_submission` says whether ``submitted/<student>/<assignment>`` is there, holds its
notebooks, and can be read, and gives a `digest` of the notebooks' bytes: the content, which
alone decides whether a submission changed (a timestamp is the student's to write). A notebook
over `SubmissionSize.max_notebook_mb` fails before anything parses it (nbformat took the trusted
process to gigabytes on a 94 MB one); a submission whose digest a record already vouches for is
not parsed again. `autograded_complete` says whether autograde finished a submission, from the
record's digest of what it wrote when it can, parsing only otherwise.
"""
from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass

import nbformat
from nbgrader.coursedir import CourseDirectory
from traitlets import Float
from traitlets.config import LoggingConfigurable

from .states import MISSING, NO_NOTEBOOK, NOTHING_SUBMITTED, TOO_LARGE, UNREADABLE

PRESENT, BROKEN, OVERSIZED = "present", "unreadable", "too large"     # Submitted.state
AUTOGRADED_EXTRA = 64 * 2 ** 20     # bytes autograde may add to a notebook (outputs, hidden tests)


class SubmissionSize(LoggingConfigurable):
    """How large a submitted notebook may be before anything of the course reads it."""

    max_notebook_mb = Float(5.0, help="MB (10**6 bytes) a submitted notebook may have; a larger "
                            "one fails its submission (reason 'notebook too large') before it "
                            "is parsed: autograde, the status and every export only look at its "
                            "size. A notebook as released is tens of kB; nbgrader's own "
                            "max_file_size (100 MB) is what the exchange moves.").tag(config=True)

    @property
    def max_bytes(self) -> int:
        return int(self.max_notebook_mb * 1e6)


@dataclass(frozen=True)
class Submitted:
    """What is in ``submitted/<student>/<assignment>`` right now."""
    state: str                          # PRESENT, MISSING, BROKEN or OVERSIZED
    reason: str = ""
    timestamp: str | None = None
    notebooks: tuple[str, ...] = ()     # names (without .ipynb) of the notebooks found
    digest: str = ""                    # of the notebooks' bytes (`digest`); "" when missing


def inspect_submission(coursedir: CourseDirectory, assignment: str, student: str,
                       expected, max_bytes: int | None = None, vouched: str = "") -> Submitted:
    """Look at a collected submission without running it: is it there, small enough, and
    readable? ``vouched``: a digest already known readable (a record's), so not parsed again."""
    path = coursedir.format_path(coursedir.submitted_directory, student, assignment)
    if not os.path.isdir(path):
        return Submitted(MISSING, NOTHING_SUBMITTED)
    timestamp = read_timestamp(path)
    files = {n: os.path.join(path, n + ".ipynb") for n in expected}
    found = tuple(n for n in expected if os.path.isfile(files[n]))
    if not found:
        return Submitted(MISSING, NO_NOTEBOOK, timestamp)
    limit = size_limit() if max_bytes is None else max_bytes
    for name in found:
        size = os.path.getsize(files[name])
        if size > limit:
            return Submitted(OVERSIZED, f"{TOO_LARGE} ({name}.ipynb: {size / 1e6:.1f} MB; "
                             f"the limit is {limit / 1e6:g} MB, SubmissionSize.max_notebook_mb)",
                             timestamp, found)
    content = digest(files[n] for n in found)
    if content != vouched:
        for name in found:
            if not _parses(files[name]):
                return Submitted(BROKEN, f"{UNREADABLE} ({name}.ipynb)", timestamp, found,
                                 content)
    return Submitted(PRESENT, "", timestamp, found, content)


def size_limit(parent=None) -> int:
    """`SubmissionSize.max_bytes` as configured for ``parent`` (an app, a plugin)."""
    return SubmissionSize(parent=parent).max_bytes


def digest(paths) -> str:
    """sha256 of the files' names and bytes, in the order given; "" when one is unreadable."""
    h = hashlib.sha256()
    try:
        for path in paths:
            h.update(os.path.basename(path).encode() + b"\0")
            with open(path, "rb") as fh:
                while block := fh.read(1 << 20):
                    h.update(block)
            h.update(b"\0")
    except OSError:
        return ""
    return h.hexdigest()


def read_timestamp(path: str) -> str | None:
    """The first 200 characters of ``path``'s timestamp.txt; None unless it is a regular file
    (never read through a link: a student's inbound folder may hold one to anything)."""
    try:
        fd = os.open(os.path.join(path, "timestamp.txt"),
                     os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return fh.read(800).decode("utf-8", "replace")[:200].strip() or None


def autograded_paths(coursedir: CourseDirectory, assignment: str, student: str, notebooks):
    folder = coursedir.format_path(coursedir.autograded_directory, student, assignment)
    return [os.path.join(folder, n + ".ipynb") for n in notebooks]


def autograded_complete(coursedir: CourseDirectory, assignment: str, student: str,
                        notebooks, vouched: str = "", max_bytes: int | None = None) -> bool:
    """Whether every given notebook has its autograded version, executed. (nbgrader writes the
    sanitized notebook there before running it, so a run killed half-way leaves an unexecuted
    one behind; a failed run removes the folder.) ``vouched``: the digest autograde recorded of
    what it wrote; when the files still have it, nothing is parsed."""
    paths = autograded_paths(coursedir, assignment, student, notebooks)
    if not paths or not all(os.path.isfile(p) for p in paths):
        return False
    if vouched and digest(paths) == vouched:
        return True
    # What autograde writes is the submission and the kernel's capped outputs (a few MiB): a
    # larger file there was not written by it, and is not parsed.
    limit = (size_limit() if max_bytes is None else max_bytes) + AUTOGRADED_EXTRA
    return all(os.path.getsize(p) <= limit and _executed(p) for p in paths)


def _parses(path: str) -> bool:
    try:
        with open(path, encoding="utf-8") as fh:
            nbformat.read(fh, as_version=4)
        return True
    except Exception:           # any way of not being a notebook is the same finding
        return False


def _executed(path: str) -> bool:
    try:
        with open(path, encoding="utf-8") as fh:
            nb = nbformat.read(fh, as_version=4)
    except Exception:
        return False
    return any(c.cell_type == "code" and c.get("execution_count") for c in nb.cells)
