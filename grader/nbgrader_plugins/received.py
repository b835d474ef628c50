"""When the course received each submission, by its own clock, and what the student claimed.

nbgrader dates a submission by the ``timestamp.txt`` that the student's own ``nbgrader submit``
writes into the exchange, and by the same time in the folder's name: both are the student's to
choose (rewriting one's timestamp.txt gave full marks with no penalty while everyone else was
late). `ReceivedCollect`, configured as nbgrader's collect (``ExchangeFactory.collect``):

* dates every inbound submission by when the exchange's filesystem last saw anything of it
  change (the newest ctime of the folder and what it holds: no user can set a ctime back), and
  orders, picks (``--update``, ``--before-duedate``) and compares them by that;
* copies regular files only, never through a link (a link named like the notebook once brought
  in whatever it pointed to, the instructor's solution among them) and never a pipe or device;
* writes the received time into the collected ``timestamp.txt``, so nbgrader's own lateness
  (autograde, ``AssignLatePenalties``, the formgrader) uses it, and keeps a `Receipt` per
  submission in `ReceivedTimes` (``received.json``): received, claimed, and the content's
  digest. The same content collected again keeps the time it was first received.

A claim more than ``tolerance_minutes`` from the received time is flagged (`ReceivedTimes.note`):
in the export's reason and autograde's line for that submission.
"""
from __future__ import annotations

import contextlib
import datetime
import json
import os
import shutil
import stat
import tempfile
from dataclasses import asdict, dataclass

from nbgrader.exchange.default.collect import ExchangeCollect
from nbgrader.utils import parse_utc
from traitlets import Float, Unicode
from traitlets.config import LoggingConfigurable

from . import safe
from .submission import digest, read_timestamp


@dataclass(frozen=True)
class Receipt:
    """One collected submission, as the course received it."""
    received: str               # when the exchange got it, by the server's clock (UTC)
    claimed: str = ""           # what the student's timestamp.txt said
    digest: str = ""            # of the collected notebooks (submission.digest)
    inbound: str = ""           # the exchange folder it came from
    refused: tuple = ()         # what was not copied: links, pipes, devices (their names)


def stamp(when: datetime.datetime) -> str:
    """A naive UTC datetime in nbgrader's timestamp format (``parse_utc`` reads it back)."""
    return when.strftime("%Y-%m-%d %H:%M:%S.%f") + " UTC"


def received_at(path: str) -> datetime.datetime:
    """The newest ctime of ``path`` and everything under it (never following a link), as a
    naive UTC datetime: when the server last saw any of it written."""
    newest = os.lstat(path).st_ctime
    for folder, dirs, files in os.walk(path):
        for name in dirs + files:
            with contextlib.suppress(OSError):
                newest = max(newest, os.lstat(os.path.join(folder, name)).st_ctime)
    return datetime.datetime.fromtimestamp(newest, datetime.UTC).replace(tzinfo=None)


class ReceivedTimes(LoggingConfigurable):
    """The course's record of when it received each submission (``received.json``)."""

    path = Unicode("received.json", help="Where collect records when each submission was "
                   "received and what its timestamp.txt claimed; relative to "
                   "CourseDirectory.root.").tag(config=True)
    tolerance_minutes = Float(5.0, help="Minutes a student's timestamp.txt may differ from the "
                              "time the exchange received the submission before the export "
                              "and autograde flag it (the received time is used either way)."
                              ).tag(config=True)

    def file(self, root: str) -> str:
        return os.path.join(root, self.path)

    def load(self, root: str) -> dict[tuple[str, str], Receipt]:
        try:
            with open(self.file(root), encoding="utf-8") as fh:
                raw = json.load(fh)
            return {(a, s): Receipt(**{**r, "refused": tuple(r.get("refused", ()))})
                    for a, by_student in raw.items() for s, r in by_student.items()}
        except FileNotFoundError:
            return {}
        except (OSError, ValueError, TypeError, AttributeError) as err:
            self.log.warning("Ignoring unreadable record %s: %s", self.file(root), err)
            return {}

    def record(self, root: str, assignment: str, student: str, receipt: Receipt) -> None:
        receipts = self.load(root)
        receipts[(assignment, student)] = receipt
        raw: dict = {}
        for (a, s), r in sorted(receipts.items()):
            raw.setdefault(a, {})[s] = asdict(r)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(self.file(root)) or ".", prefix=".recv-")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(raw, fh, indent=1, sort_keys=True)
            os.replace(tmp, self.file(root))
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    def note(self, receipt: Receipt | None) -> str:
        """What to flag about a submission's dates ("" when its claim agrees)."""
        if receipt is None:
            return ""
        notes = [f"not collected (not a regular file): {', '.join(receipt.refused)}"] \
            if receipt.refused else []
        try:
            claimed = parse_utc(receipt.claimed) if receipt.claimed else None
        except (ValueError, OverflowError, TypeError):
            claimed = None
        off = None if claimed is None else abs(
            (claimed - parse_utc(receipt.received)).total_seconds())
        if claimed is None or off > 60 * self.tolerance_minutes:
            notes.append(f"timestamp.txt said {receipt.claimed or 'nothing'}, received "
                         f"{receipt.received}")
        return safe.text("; ".join(notes))


class ReceivedCollect(ExchangeCollect):
    """nbgrader's collect, dating submissions by the exchange's clock (module docstring)."""

    def init_src(self):
        super().init_src()
        self._by_path = {os.path.join(self.inbound_path, r["filename"]): r
                         for r in self.src_records}

    def _path_to_record(self, path):
        rec = super()._path_to_record(path)             # the name's claim, parsed by nbgrader
        rec["claimed"] = read_timestamp(path) or stamp(rec["timestamp"])
        rec["timestamp"] = received_at(path)
        return rec

    def do_copy(self, src, dest, log=None):
        """nbgrader's copy, from a private copy of ``src`` holding its regular files and folders
        only: the student may swap a file for a link while collect runs, never in the copy."""
        with tempfile.TemporaryDirectory(prefix="inside-vmap-collect-") as tmp:
            staged = os.path.join(tmp, "submission")
            refused = _copy_plain(src, staged)
            super().do_copy(staged, dest, log)
        for name in refused:
            self.log.warning("Not collected from %s: %s is not a regular file",
                             safe.text(src), name)
        self._receive(src, dest, tuple(refused))

    def _receive(self, src: str, dest: str, refused: tuple) -> None:
        rec = self._by_path.get(src)
        if rec is None:
            return
        times = ReceivedTimes(parent=self)
        root = self.coursedir.root
        student, assignment = rec["username"], self.coursedir.assignment_id
        notebooks = sorted(os.path.join(dest, n) for n in os.listdir(dest) if n.endswith(".ipynb"))
        content = digest(notebooks)
        when = max(rec["timestamp"], received_at(src))     # also what changed while copying
        earlier = times.load(root).get((assignment, student))
        if earlier is not None and earlier.digest == content:     # the same content: first seen
            when = min(when, parse_utc(earlier.received))
        with open(os.path.join(dest, "timestamp.txt"), "w", encoding="utf-8") as fh:
            fh.write(stamp(when))
        times.record(root, assignment, student, Receipt(stamp(when), rec["claimed"], content,
                                                        rec["filename"], refused))


def _copy_plain(src: str, dest: str) -> list[str]:
    """Copy ``src``'s regular files and folders to ``dest``, never following a link; what was
    left out (links, pipes, sockets, devices), as names relative to ``src``."""
    refused = []

    def ignore(folder, names):
        odd = [n for n in names if not _plain(os.path.join(folder, n))]
        refused.extend(safe.text(os.path.relpath(os.path.join(folder, n), src), 100)
                       for n in odd)
        return odd

    # symlinks=True: a link swapped in after `ignore` looked is copied as a link, not followed,
    # and removed below; copyfile refuses a pipe swapped in so (SpecialFileError).
    shutil.copytree(src, dest, symlinks=True, ignore=ignore)
    for folder, dirs, files in os.walk(dest):
        for name in dirs + files:
            path = os.path.join(folder, name)
            if not _plain(path):
                os.unlink(path)
                refused.append(safe.text(os.path.relpath(path, dest), 100))
    return refused


def _plain(path: str) -> bool:
    """A regular file or a real folder: nothing else leaves the exchange."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return False
    return stat.S_ISREG(mode) or stat.S_ISDIR(mode)
