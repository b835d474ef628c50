"""The trusted side of one judge child's run: what it sends, when, and what it takes back.

A `Session` opens with the run's key and the cells (no case), waits until the child says the
cells have run and every answer object is taken, then sends one case at a time, each only once
the one before is answered, and closes each exercise. What it keeps of a run is its own account:
which cases it sent and which sealed answer came back for each, every call of a watched function
and every change the child reported (as they happened: a later line cannot take one back), and
whether the child said goodbye. A line that is not the child's (no seal, a wrong one, out of
order) or too large ends the run (`Stop`); the exercise then being observed is the one that
wrote it. Each observation is decoded only after its size, depth and count are checked, and is
held only until its exercise closes (then compared, by ``decide``).
"""
from __future__ import annotations

import json
import time

from .. import wire
from .box import channel

MAX_DEPTH = 48            # nesting of one observation (honest ones: about 10)
MAX_VALUES = 1 << 16      # containers and elements in one line (honest ones: a few hundred)
MAX_HITS = 4096           # distinct calls reported in one run (honest runs: a handful)
CELLS = "cells"
FORGED = ("it wrote into the judge's own channel to the trusted side (a forged answer), so "
          "nothing the judge observed of it can be trusted")


class Stop(Exception):
    """End the child now, for this reason."""

    def __init__(self, reason: str, forged: bool = False):
        super().__init__(reason)
        self.reason, self.forged = reason, forged


class Session:
    """``jobs``: ``{grade id: (the child's job for it, its cases)}`` in the order they are
    observed; ``decide(gid, observations)`` turns one exercise's observations into its verdict
    when it closes; ``case_bytes``: the most one sealed line may hold."""

    def __init__(self, cells, jobs: dict, decide, case_bytes: int):
        self.cells, self.jobs, self.decide = cells, jobs, decide
        self.frame_bytes = case_bytes + channel.TAG + 1
        self.reset()

    def reset(self) -> None:
        """A fresh start, with a new key (a child started again: nothing of the last counts)."""
        self.key, self.n = channel.new_key(), 0
        self.ready = self.said_bye = False
        self.cell_errors, self.missing = [], {}
        self.queue: list[tuple[str, int]] = []     # (gid, i) still to send; (gid, -1): close
        self.waiting = None                         # what the child is to answer now
        self.observed: dict[str, list] = {}
        self.verdicts: dict[str, object] = {}       # gid -> what decide returned
        self.hits: set[tuple] = set()
        self.tampered: list[tuple[int, tuple[str, ...]]] = []   # (position, what)
        self.forged_at = None                        # the phase a forged line came in
        self.order = list(self.jobs)
        self.running = None                          # ("cell" | "case", name, since)

    # ---- what goes to the child -------------------------------------------------------------
    def opening(self) -> bytes:
        request = {"cells": list(self.cells), "exercises": {g: job for g, (job, _) in
                                                            self.jobs.items()}}
        return self.key + _line(request)

    def _next(self) -> bytes:
        if not self.queue:
            self.waiting = ("bye",)
            return _line({"op": "end"})
        gid, i = self.queue.pop(0)
        if i < 0:
            self.waiting = ("closed", gid)
            return _line({"op": "close", "gid": gid})
        self.waiting, self.running = ("obs", gid, i), ("case", gid, time.monotonic())
        return _line({"op": "case", "gid": gid, "i": i,
                      "case": wire.plain(self.jobs[gid][1][i])})

    # ---- what comes back ---------------------------------------------------------------------
    def receive(self, line: bytes) -> bytes:
        """One line from the answer pipe; returns what to send next (maybe nothing)."""
        try:
            payload = channel.opened(self.key, line)
            wire.bound(payload, self.frame_bytes, MAX_DEPTH, MAX_VALUES)
            message = json.loads(payload)
            if isinstance(message, dict) and "v" in message:
                message["v"] = wire.unplain(message["v"])
        except channel.Forged as err:
            self.forged_at = self.phase()
            raise Stop(f"{FORGED} ({err})", forged=True) from None
        except (wire.TooLarge, ValueError, TypeError, RecursionError) as err:
            raise Stop(f"answered with data the judge cannot read ({str(err)[:80]})") from None
        if not isinstance(message, dict) or message.get("n") != self.n:
            self.forged_at = self.phase()
            raise Stop(f"{FORGED} (a line out of order)", forged=True)
        self.n += 1
        return self._take(message)

    def _take(self, message: dict) -> bytes:
        kind = message.get("t")
        if kind == "hit":
            self._hit(message)
            return b""
        if kind == "tampered":
            what = tuple(str(w) for w in message.get("what", ()) if isinstance(w, str))
            self.tampered.append((self.position(), what))
            return b""
        if kind == "cell" and not self.ready:
            self.running = ("cell", str(message.get("name")), time.monotonic())
            return b""
        if kind == "ready" and not self.ready:
            self.running = None
            return self._ready(message)
        if self.waiting == ("obs", message.get("gid"), message.get("i")) and kind == "obs":
            self.running = None
            self.observed.setdefault(message["gid"], []).append(message.get("v"))
            return self._next()
        if self.waiting == ("closed", message.get("gid")) and kind == "closed":
            gid = message["gid"]
            self.verdicts[gid] = self.decide(gid, self.observed.pop(gid, []))
            return self._next()
        if self.waiting == ("bye",) and kind == "bye":
            self.said_bye, self.waiting = True, None
            return b""
        self.forged_at = self.phase()            # sealed, yet not the child's own order
        raise Stop(f"{FORGED} (a {str(kind)[:20]!r} out of turn)", forged=True)

    def _ready(self, message) -> bytes:
        self.ready = True
        self.cell_errors = [str(e)[:300] for e in message.get("cell_errors", [])][:50]
        missing = message.get("missing", {})
        self.missing = {g: [str(n) for n in missing[g]] for g in self.jobs
                        if isinstance(missing, dict) and isinstance(missing.get(g), list)}
        for gid, (_, cases) in self.jobs.items():
            if gid not in self.missing:
                self.queue += [(gid, i) for i in range(len(cases))] + [(gid, -1)]
        return self._next()

    def _hit(self, m) -> None:
        hit = (str(m.get("spec")), m.get("phase"), m.get("cell"), m.get("direct") is True,
               m.get("own") is True)
        self.hits.add(hit)
        if len(self.hits) > MAX_HITS:
            raise Stop("the judge's child reported more calls than any answer makes")

    # ---- where the run stands ----------------------------------------------------------------
    def phase(self):
        """The exercise being observed (or closed) now, else ``CELLS`` (before "ready")."""
        return self.waiting[1] if self.waiting and len(self.waiting) > 1 else (
            None if self.ready else CELLS)

    def position(self) -> int:
        """Where the run is, in the order of exercises: -1 before the first case."""
        phase = self.phase()
        return self.order.index(phase) if phase in self.order else (
            -1 if phase == CELLS else len(self.order))

    def stuck(self, after: float) -> tuple[str, str] | None:
        """What ran, alone, for at least ``after`` seconds until now: ``("cell", name)`` or
        ``("case", grade id)``; None otherwise (the trusted side's own clock)."""
        if self.running is None or time.monotonic() - self.running[2] < after:
            return None
        return self.running[:2]

    def too_long(self) -> str:
        phase = self.phase()
        where = f" of {phase}" if phase not in (None, CELLS) else ""
        return (f"answered more than {(self.frame_bytes - channel.TAG - 1) // 2 ** 10} KiB for "
                f"one case{where}")

    def complete(self, gid) -> bool:
        return gid in self.verdicts

    def changes(self, gid) -> list[str]:
        """What changed under the observers, seen at or before this exercise's observation."""
        mine = self.order.index(gid)
        return sorted({w for at, what in self.tampered if at <= mine for w in what})

    def calls(self, gid, calls, strict: bool, owned) -> list[str]:
        """The watched calls that count against this exercise: any an answer made (or one
        handing its primitive to a rule maker), at any time; for a strict exercise also JAX's
        own, while it was observed or while one of the cells it runs ran."""
        return sorted({spec for spec, phase, cell, direct, own in self.hits if spec in calls
                       and (direct or own or strict and (
                           phase == gid or (phase == CELLS and cell in owned)))})


def _line(message) -> bytes:
    return json.dumps(message).encode() + b"\n"


def in_process(talk: Session) -> None:
    """Hold ``talk``'s conversation with `child.serve` run in this process (tests, and the
    profiling of a child): no box, no limits, the same messages."""
    from collections import deque

    from .box import channel, child
    opening = talk.opening()
    key, first = bytearray(opening[:channel.KEY_BYTES]), opening[channel.KEY_BYTES:]
    inbox = deque([json.loads(first)])

    def write(_fd, data) -> int:
        for line in bytes(data).splitlines():
            reply = talk.receive(line)
            if reply:
                inbox.append(json.loads(reply))
        return len(data)

    class Inbox:
        def next(self):
            return inbox.popleft()

    request = inbox.popleft()
    child.serve(request, Inbox(), channel.Sealer(-1, key, write))
