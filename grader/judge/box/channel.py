"""The judge's conversation with its child: one message at a time each way, every one of the
child's sealed with a key of this run.

The trusted side writes the key (``KEY_BYTES`` raw bytes) and then one JSON line per message on
the child's stdin, and sends the next only once it has read the child's answer to the last: the
cells first (no case), then one case at a time. The child reads the key into a buffer of its own,
hands it to an HMAC whose state lives in the hash library rather than in a Python object, and
zeroes the buffer before any cell runs; every line it writes on its answer pipe is
``<HMAC-SHA256 in hex> <JSON>``, the JSON holding a sequence number. So a line the student's code
writes (it can find the pipe, the format is public) is told apart from the child's own, and any
such line ends the run as forged; what the trusted side then believes (the calls seen, what
changed, which cases were answered, whether the run finished) comes only from sealed lines and
from what it sent and saw itself.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import os
import threading

KEY_BYTES = 32
TAG = 64                       # hex digits of an HMAC-SHA256


def read_key(fd: int) -> bytearray:
    """The run's key, read straight into a buffer of its own (no copy is left in a bytes object
    or a stream's buffer); the caller zeroes it once sealed into a `Sealer`."""
    key = bytearray(KEY_BYTES)
    view, got = memoryview(key), 0
    while got < KEY_BYTES:
        n = os.readv(fd, [view[got:]])
        if n == 0:
            raise EOFError("the trusted side sent no key")
        got += n
    return key


def new_key() -> bytes:
    return os.urandom(KEY_BYTES)


def tag(mac_or_key, payload: bytes) -> str:
    mac = hmac.new(mac_or_key, digestmod=hashlib.sha256) if isinstance(
        mac_or_key, (bytes, bytearray)) else mac_or_key.copy()
    mac.update(payload)
    return mac.hexdigest()


class Sealer:
    """The child's end: writes sealed, numbered lines to ``fd`` (thread-safe: the watch reports
    calls from whichever thread makes them)."""

    def __init__(self, fd: int, key: bytearray, write=os.write):
        self._mac = hmac.new(key, digestmod=hashlib.sha256)
        key[:] = bytes(len(key))             # the HMAC holds it now; nothing else does
        self._fd, self._n, self._lock = fd, 0, threading.RLock()
        self._write = write                  # held: an answer can rebind os's names

    def send(self, kind: str, **fields) -> None:
        with self._lock:
            payload = json.dumps({"n": self._n, "t": kind, **fields}).encode()
            self._n += 1
            line = tag(self._mac, payload).encode() + b" " + payload + b"\n"
            view = memoryview(line)
            while view:
                view = view[self._write(self._fd, view):]


class Inbox:
    """The child's stdin after the key: one JSON message per line, read as it comes."""

    def __init__(self, fd: int):
        self._fd, self._buffer = fd, b""

    def next(self):
        while b"\n" not in self._buffer:
            part = os.read(self._fd, 1 << 16)
            if not part:
                raise EOFError("the trusted side closed the conversation")
            self._buffer += part
        line, _, self._buffer = self._buffer.partition(b"\n")
        return json.loads(line)


class Forged(ValueError):
    """A line on the answer pipe that the child did not seal, or out of its order."""


def opened(key: bytes, line: bytes) -> bytes:
    """The payload of a sealed line, its seal checked (its number is the reader's to check);
    raises `Forged`."""
    if len(line) < TAG + 1 or line[TAG:TAG + 1] != b" ":
        raise Forged("a line without the run's seal")
    payload = line[TAG + 1:]
    if not hmac.compare_digest(line[:TAG], tag(key, payload).encode()):
        raise Forged("a line with a wrong seal")
    return payload
