"""One autograde per gradebook at a time: where the gradebook lives, the lock lives.

* SQLite: ``fcntl.flock`` on a file in the course folder (the gradebook is one file on one
  machine; nbgrader's FAQ advises against SQLite for several graders).
* PostgreSQL: a session-level advisory lock in the gradebook's database, so runs started from
  other machines or course folders take turns too. The lock belongs to one connection: a run
  that is killed loses its connection, and the server releases the lock.

Both hold for the whole run; the holder is named (pid and host) to whoever waits.
"""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import socket
import time


def holder_name() -> str:
    return f"pid {os.getpid()} on {socket.gethostname()}"


def is_postgres(db_url: str) -> bool:
    return (db_url or "").split(":", 1)[0].split("+", 1)[0] in ("postgresql", "postgres")


@contextlib.contextmanager
def file_lock(path: str, wait: bool, say=None):
    with open(path, "a+") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.seek(0)
            who = fh.read().strip() or "another process"
            if not wait:
                raise RuntimeError(f"another autograde ({who}) holds {path}; wait for it to "
                                   "finish") from None
            if say:
                say(f"waiting for another autograde ({who}) to finish with this gradebook "
                    f"(lock: {path})")
            fcntl.flock(fh, fcntl.LOCK_EX)
        fh.seek(0)
        fh.truncate()
        fh.write(holder_name() + "\n")
        fh.flush()
        try:
            yield
        finally:
            fh.seek(0)
            fh.truncate()
            fcntl.flock(fh, fcntl.LOCK_UN)


def _key(text: str) -> int:
    """A stable positive 63-bit key (pg_locks shows it as classid << 32 | objid)."""
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") & (2 ** 63 - 1)


@contextlib.contextmanager
def postgres_lock(db_url: str, name: str, wait: bool, say=None, poll_s: float = 1.0):
    import sqlalchemy as sa
    from sqlalchemy.pool import NullPool

    engine = sa.create_engine(db_url, poolclass=NullPool, connect_args={
        "application_name": f"inside-vmap autograde, {holder_name()}"[:63]})
    key = _key(name)
    try:
        # AUTOCOMMIT: the lock is the session's; no transaction stays open for the whole run.
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            told = False
            while not conn.execute(sa.text("SELECT pg_try_advisory_lock(:k)"), {"k": key}).scalar():
                who = conn.execute(sa.text(
                    "SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a "
                    "ON a.pid = l.pid WHERE l.locktype = 'advisory' AND l.granted "
                    "AND ((l.classid::bigint << 32) | l.objid::bigint) = :k"), {"k": key}
                ).scalar() or "another session"
                if not wait:
                    raise RuntimeError(f"another autograde ({who}) holds this gradebook's lock "
                                       f"in PostgreSQL; wait for it to finish")
                if say and not told:
                    say(f"waiting for another autograde ({who}) to finish with this gradebook "
                        "(a PostgreSQL advisory lock)")
                    told = True
                time.sleep(poll_s)          # polling keeps Ctrl-C working while we wait
            try:
                yield
            finally:
                conn.execute(sa.text("SELECT pg_advisory_unlock(:k)"), {"k": key})
    finally:
        engine.dispose()
