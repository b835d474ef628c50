"""Follow a running box from the trusted process: read its pipes with byte caps, and stop it at
its wall-clock, CPU or task limit, whichever comes first.

The trusted process never holds more than the caps: whatever a child prints past
``Limits.output_mb`` is the reason it is killed, not data kept. Its answer arrives on a pipe of
its own (never mixed with what student code prints) and is capped too. With a ``talk`` (the
judge's `session.Session`), the answer is a conversation: each line is handed over as it
arrives, at most ``talk.frame_bytes`` of one line is held, and what the talk answers is written
to the child's stdin, which stays open until the child ends.
"""
from __future__ import annotations

import enum
import os
import selectors
import signal
import time
from dataclasses import dataclass

CHUNK = 1 << 16
TICK_S = 0.2          # how often CPU time and task counts are read
GRACE_S = 1.0         # how long to keep reading after the child exits (an orphan holds a pipe)
TAIL = 2000           # bytes of stderr kept, for the message of a child that crashed


class End(enum.Enum):
    """How a child ended: the kind of its `Outcome`, which callers test (never its words)."""
    OK = "exited 0 within its limits"
    TIMED_OUT = "its wall-clock time, or the submission's budget, ran out"
    MEMORY = "its memory limit"
    CPU = "its CPU time"
    TASKS = "its limit on processes and threads"
    OUTPUT = "it printed more than it may"
    ANSWER = "it answered more than it may"
    STOPPED = "the conversation stopped it (the talk's reason)"
    KILLED = "a signal killed it"
    EXITED = "it exited with a non-zero status"
    CANCELLED = "the submission failed meanwhile"


@dataclass(frozen=True)
class Outcome:
    """How a child ended: what it sent on its answer pipe, the `End` kind, and why in words
    for feedback (``message``; "" when it exited 0 within its limits). ``status`` is its exit
    status where it exited by itself. What it printed is counted, never kept."""
    answer: str
    kind: End = End.OK
    message: str = ""
    status: int | None = None

    @property
    def failure(self) -> str | None:
        """The words of its failure, or ``None`` when it did not fail."""
        return None if self.kind is End.OK else self.message


def state(pid: int | None) -> str | None:
    """``pid``'s state letter from /proc (R, S, Z, T, ...), or ``None`` where there is none."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


def tree(root: int) -> dict[int, int]:
    """``{pid: threads}`` of ``root`` and every descendant, read from /proc."""
    parent, threads = {}, {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parent[int(name)], threads[int(name)] = int(fields[1]), int(fields[17])
    children: dict[int, list[int]] = {}
    for pid, ppid in parent.items():
        children.setdefault(ppid, []).append(pid)
    found, todo = {}, [root]
    while todo:
        pid = todo.pop()
        if pid in threads and pid not in found:
            found[pid] = threads[pid]
            todo.extend(children.get(pid, ()))
    return found


def tasks_in_tree(root: int) -> int:
    """Threads of ``root`` and all its descendants: the process count used where no cgroup
    counts them (RLIMIT_NPROC does not hold for root). An orphan outside a pid namespace (no
    bubblewrap) escapes it."""
    return sum(tree(root).values())


def kill_tree(root: int) -> None:
    """SIGKILL ``root``'s process group and every descendant (children first would let them
    re-parent; all are signalled before any is reaped)."""
    for pid in [root] + [p for p in tree(root) if p != root]:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    try:
        os.killpg(root, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


class Follow:
    """One child being followed: its pipes, its budget of bytes, and why it was stopped."""

    def __init__(self, proc, stdin: bytes, answer_fd: int, limits, group, talk=None):
        self.proc, self.limits, self.group, self.talk = proc, limits, group, talk
        opening = stdin + (talk.opening() if talk is not None else b"")
        self.pending, self.answer, self.tail = memoryview(opening), bytearray(), bytearray()
        self.printed, self.received = 0, 0
        self.reason: tuple[End, str] | None = None    # why it is stopped, the first one
        self.sel = selectors.DefaultSelector()
        os.set_blocking(proc.stdin.fileno(), False)
        self.sel.register(proc.stdin, selectors.EVENT_WRITE, "stdin")
        self.sel.register(proc.stdout, selectors.EVENT_READ, "stdout")
        self.sel.register(proc.stderr, selectors.EVENT_READ, "stderr")
        self.answer_file = os.fdopen(answer_fd, "rb", buffering=0)
        self.sel.register(self.answer_file, selectors.EVENT_READ, "answer")

    def run(self) -> Outcome:
        start = time.monotonic()
        deadline, exited = start + self.limits.wall_s, None
        try:
            while self.sel.get_map() and self.reason is None:
                now = time.monotonic()
                for key, _ in self.sel.select(max(0.0, min(TICK_S, deadline - now))):
                    self._serve(key)
                now = time.monotonic()
                # A limit first: a fork bomb can starve this loop past the deadline, and the
                # limit it hit is the truer reason.
                self.reason = self.reason or self._over_limits()
                if now >= deadline and self.reason is None:
                    self.reason = (End.TIMED_OUT, f"timed out after {self.limits.wall_s:.0f} s")
                if self.proc.poll() is not None:
                    exited = exited or now
                    if now - exited > GRACE_S:
                        break
        finally:
            self._stop()
        answer = "" if self.talk is not None else self.answer.decode("utf-8", "replace")
        return self._outcome(answer)

    def _serve(self, key) -> None:
        name, f = key.data, key.fileobj
        if name == "stdin":
            try:
                sent = os.write(f.fileno(), self.pending[:CHUNK])
            except (BrokenPipeError, OSError):   # the child closed its stdin: nothing to say
                self.pending = memoryview(b"")
                self._close(f)
                return
            self.pending = self.pending[sent:]
            if not self.pending:
                if self.talk is None:
                    self._close(f)               # all sent
                else:
                    self.sel.unregister(f)       # until the talk has more to say
            return
        data = os.read(f.fileno(), CHUNK)
        if not data:
            self._close(f)
        elif name == "answer":
            self.received += len(data)
            if self.received > self.limits.answer_mb * 2 ** 20:
                self.reason = (End.ANSWER, f"answered with more than {self.limits.answer_mb} MiB")
            elif self.talk is None:
                self.answer += data
            else:
                self._lines(data)
        else:
            self.printed += len(data)
            if name == "stderr":
                self.tail = (self.tail + data)[-TAIL:]
            if self.printed > self.limits.output_mb * 2 ** 20:
                self.reason = (End.OUTPUT, f"printed more than {self.limits.output_mb} MiB")

    def _lines(self, data: bytes) -> None:
        """Hand each complete line to the talk, and queue what it answers for stdin."""
        self.answer += data
        while self.reason is None:
            end = self.answer.find(b"\n")
            if end < 0:
                break
            line = bytes(self.answer[:end])
            del self.answer[:end + 1]
            try:
                reply = self.talk.receive(line)
            except Exception as stop:            # the talk's Stop: this reason ends the child
                self.reason = (End.STOPPED, getattr(stop, "reason", None) or
                               f"{type(stop).__name__}: {stop}")
                return
            if reply:
                self._say(reply)
        if len(self.answer) > self.talk.frame_bytes:
            self.reason = (End.ANSWER, self.talk.too_long())

    def _say(self, reply: bytes) -> None:
        if self.proc.stdin is None or self.proc.stdin.closed:
            return
        if not self.pending:
            self.sel.register(self.proc.stdin, selectors.EVENT_WRITE, "stdin")
        self.pending = memoryview(bytes(self.pending) + reply)

    def _close(self, f) -> None:
        self.sel.unregister(f)
        f.close()

    def _over_limits(self) -> tuple[End, str] | None:
        tasks = (End.TASKS, f"started more than {self.limits.tasks} processes or threads")
        if self.group is None:
            return tasks if tasks_in_tree(self.proc.pid) > self.limits.tasks else None
        if self.group.out_of_memory():      # one process killed for it: the box is done
            return End.MEMORY, f"used more than {self.limits.memory_mb} MiB of memory"
        if self.group.hit_task_limit():
            return tasks
        if self.group.cpu_seconds() >= self.limits.cpu_s:
            return End.CPU, f"used more than {self.limits.cpu_s} s of CPU time"
        return None

    def _stop(self) -> None:
        """Kill whatever is left (before reaping, so the process group id is still ours)."""
        kill_tree(self.proc.pid)
        if self.group is not None:
            self.group.kill()
        self.proc.wait()
        for key in list(self.sel.get_map().values()):
            self._close(key.fileobj)
        self.sel.close()

    def _outcome(self, answer: str) -> Outcome:
        why = self.reason
        if why is None and self.proc.returncode != 0 and self.group is not None:
            why = self._over_limits()        # it died of a limit between two ticks
        if why is not None:
            return Outcome(answer, *why)
        return died(answer, self.proc.returncode, self.tail.decode("utf-8", "replace"),
                    self.limits)


def died(answer: str, code: int, stderr: str, limits) -> Outcome:
    """How a child that ended by itself with status ``code`` ended."""
    if code == 0:
        return Outcome(answer, status=0)
    signum = -code if code < 0 else code - 128 if code > 128 else 0
    if signum == signal.SIGXCPU:
        return Outcome(answer, End.CPU, f"used more than {limits.cpu_s} s of CPU time", code)
    if code < 0 or code > 128 and signum in (signal.SIGKILL, signal.SIGSEGV, signal.SIGABRT):
        return Outcome(answer, End.KILLED, f"killed by signal {signum}", code)
    tail = stderr.strip().splitlines()[-1:] or [""]
    if tail[0].startswith("MemoryError"):     # RLIMIT_AS, where no cgroup counts memory
        return Outcome(answer, End.MEMORY, f"used more than {limits.memory_mb} MiB of memory",
                       code)
    return Outcome(answer, End.EXITED, f"exited with status {code}" +
                   (f" ({tail[0][:200]})" if tail[0] else ""), code)
