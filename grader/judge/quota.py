"""What a grading kernel adds to the host's disk: its submission's folder (writable unboxed), its
socket folder, and files it holds open there with no name.

RLIMIT_FSIZE stops one big file; many files, or many empty ones, are counted here: a file costs
the blocks it really holds (a sparse file costs what it wrote) plus ``ENTRY`` bytes, so a
million empty files count as 4 GB. Read while the kernel runs (``execute.py`` stops it once over)
and once after it, when what it added is removed again if it went over.
"""
from __future__ import annotations

import os
import shutil

ENTRY = 4096


def snapshot(folder: str) -> dict[str, tuple[int, int]]:
    """``{path: (cost, size)}`` of every file and folder below ``folder``."""
    found = {}
    for dirpath, dirs, files in os.walk(folder):
        for name in dirs + files:
            path = os.path.join(dirpath, name)
            found[path] = _stat(path)
    return found


def _stat(path: str) -> tuple[int, int]:
    try:
        st = os.lstat(path)
    except OSError:
        return 0, 0
    return st.st_blocks * 512 + ENTRY, st.st_size


def added(folder: str, before: dict, stop_at: int) -> int:
    """Bytes added under ``folder`` since ``before`` (new entries, and growth of old ones);
    stops counting once past ``stop_at``, so a folder of a million files is not walked twice."""
    total = 0
    for dirpath, dirs, files in os.walk(folder):
        for name in dirs + files:
            path = os.path.join(dirpath, name)
            total += max(0, _stat(path)[0] - before.get(path, (0, 0))[0])
            if total > stop_at:
                return total
    return total


def unlinked(pids, dev: int) -> int:
    """Bytes held on device ``dev`` by files that ``pids`` keep open after removing them (or
    made with no name, ``O_TMPFILE``): no walk of a folder finds those (the fifth red-team
    round's second look held a gigabyte so). Read through /proc, as their owner may."""
    seen, total = set(), 0
    for pid in pids:
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                st = os.stat(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            key = (st.st_dev, st.st_ino)
            if st.st_dev == dev and st.st_nlink == 0 and key not in seen and \
                    (st.st_mode & 0o170000) == 0o100000:
                seen.add(key)
                total += st.st_blocks * 512
    return total


def remove_added(folder: str, before: dict) -> list[str]:
    """Remove every file and folder that was not there ``before``; truncate files that grew
    back to their old size. Returns what was removed or truncated."""
    touched = []
    for dirpath, dirs, files in os.walk(folder, topdown=True):
        for name in list(dirs):
            path = os.path.join(dirpath, name)
            if path not in before:
                shutil.rmtree(path, ignore_errors=True)
                dirs.remove(name)
                touched.append(path)
        for name in files:
            path = os.path.join(dirpath, name)
            if path not in before:
                _remove(path)
                touched.append(path)
            elif _stat(path)[0] > before[path][0]:
                _truncate(path, before[path][1])
                touched.append(path)
    return touched


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _truncate(path: str, size: int) -> None:
    try:
        if not os.path.islink(path):
            os.truncate(path, size)
    except OSError:
        pass
