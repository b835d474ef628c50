"""Runs in the sandbox, beside the student's code: execute the set-up and answer cells, then
observe the student's objects on the cases the trusted side sends, one at a time, and answer
with what it saw as plain data.

It holds only the lessons' kits (`grader.judge.kit_tree`): no expected value, reference, case
generator or comparison is importable here, so nothing the student's code does here can look an
answer up. No case is here while the cells run, nor any later case while one is observed: the
trusted side sends a case only once the cells have run, every answer object is taken and the
case before has been answered (`grader.judge.box.channel`, whose seal also tells the child's lines
from any the student's code writes). It watches for JAX's own implementation of what an exercise
asks being called on an answer's behalf (`tripwires`), and for the course's and JAX's modules
changing under the observers (`tamper`), and reports each as it is seen; the trusted process
decides.
"""
from __future__ import annotations

import importlib
import os
import sys
import threading

from ... import wire
from . import channel, outside, seccomp, tamper, tripwires

ANSWER_FILE = "<answer cell {}>"
ANSWER_FD = "INSIDE_VMAP_ANSWER_FD"
CELLS = "cells"                     # the phase while the cells run


class Reporter:
    """What the child tells the trusted side, as it happens: every distinct call of a watched
    function (with the phase and the cell running then), and what changed under the observers."""

    def __init__(self, out: channel.Sealer):
        self.out, self.phase, self.cell = out, None, None
        self._sent, self._lock = set(), threading.Lock()

    def hit(self, spec: str, direct: bool, own: bool) -> None:
        key = (spec, self.phase, self.cell if self.phase == CELLS else None, direct, own)
        with self._lock:
            if key in self._sent:
                return
            self._sent.add(key)
        self.out.send("hit", spec=key[0], phase=key[1], cell=key[2], direct=direct, own=own)

    def enter(self, cell: str) -> None:
        """A cell starts: the trusted side knows what runs should the child hang."""
        self.cell = cell
        self.out.send("cell", name=cell)


def run_cells(cells, namespace, reporter=None) -> list[str]:
    """Execute code cells in order; a failing cell is reported, later cells still run."""
    errors = []
    for cell in cells:
        filename = (ANSWER_FILE if cell["kind"] == "answer" else "<set-up cell {}>").format(
            cell["name"])
        if reporter is not None:
            reporter.enter(cell["name"])
        try:
            exec(compile(cell["source"], filename, "exec"), namespace)
        except Exception as err:  # the student's cell failing is data for the verdict
            errors.append(f"{type(err).__name__}: {err}"[:300])
    return errors


def _resolve(path: str):
    """An observer named ``module:qualname``, from a lesson's kit and nowhere else."""
    module, _, name = path.partition(":")
    if not (module.startswith("grader.lessons.") and ".kit" in module):
        raise ValueError(f"not a kit observer: {path}")
    obj = importlib.import_module(module)
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


class Guard:
    """What the course's modules, JAX's and the watch were before any cell ran; each check
    reports what differs that it has not reported yet."""

    def __init__(self, wires, out: channel.Sealer):
        self.wires, self.out, self.before, self.seen = wires, out, tamper.take(), set()
        self.pins = tamper.pin(wires)
        # ``grader`` here is the kit tree's (`_forget_editable_installs`): its code is known.
        self.outside = outside.Outside(os.path.dirname(wire.__file__),
                                       lambda: out.send("tampered", what=[outside.OUTSIDE]),
                                       compiles_cells=run_cells.__code__,
                                       starts=lambda what: out.send("tampered", what=[what]))

    def check(self) -> None:
        found = set(tamper.changes(self.before, tamper.take()) + type(self.wires).broken(
            self.wires) + tamper.unpinned(self.wires, self.pins) + self.outside.found())
        new = sorted(found - self.seen)
        if new:
            self.seen |= found
            self.out.send("tampered", what=new)


def serve(request, inbox, out: channel.Sealer) -> None:
    """The whole conversation: the cells, then each case the trusted side sends, until "end"."""
    exercises = request["exercises"]
    # Observers are found before any answer runs: rebinding a kit's names afterwards changes
    # nothing the child calls.
    observers = {gid: _resolve(job["observe"]) for gid, job in exercises.items()}
    reporter = Reporter(out)
    wires = tripwires.install((spec for job in exercises.values() for spec in job["calls"]),
                              ANSWER_FILE.partition("{")[0], reporter.hit)
    try:
        guard = Guard(wires, out)
        reporter.phase = CELLS
        namespace = {"__name__": "__main__"}
        errors = run_cells(request["cells"], namespace, reporter)
        reporter.phase = None
        guard.check()                   # what the cells changed: every exercise is affected
        # Every answer object is taken now, before the first case exists here.
        answers = {gid: [namespace[n] for n in job["needs"]] for gid, job in exercises.items()
                   if all(n in namespace for n in job["needs"])}
        out.send("ready", cell_errors=errors, missing={
            gid: [n for n in job["needs"] if n not in namespace]
            for gid, job in exercises.items() if gid not in answers})
        _converse(inbox, out, exercises, observers, answers, wires, guard, reporter)
    finally:
        wires.remove()


def _converse(inbox, out, exercises, observers, answers, wires, guard, reporter) -> None:
    opened = None
    while True:
        message = inbox.next()
        op, gid = message.get("op"), message.get("gid")
        if op == "end":
            out.send("bye")
            return
        job = exercises[gid]
        if opened != gid:    # its first case: checked after the cells or the last close
            opened = gid
            reporter.phase = gid
            for spec in {s for o in answers[gid] for s in wires.is_one(o, job["calls"])}:
                reporter.hit(spec, True, False)
        if op == "close":
            guard.check()
            reporter.phase = None
            out.send("closed", gid=gid)
            continue
        case = wire.unplain(message["case"])
        with wires.watching(job.get("strict", False), job.get("within", False)):
            value = wire.observe_safely(observers[gid], answers[gid], case)
        del case
        out.send("obs", gid=gid, i=message["i"], v=wire.plain(value))


def _forget_editable_installs() -> None:
    """An editable install's import hook maps ``grader`` to the repository, answer key and all;
    the child's ``grader`` is the kit tree on its path, so the hook is dropped before any answer
    runs. (Inside the sandbox the repository is not mounted at all.)"""
    sys.meta_path[:] = [f for f in sys.meta_path
                        if not getattr(f, "__module__", "").startswith("__editable__")]


def _no_new_processes() -> None:
    """From here the child is the only process student code runs in: everything that watches it
    (the tripwires, the audit hook, the seal) is this process's own. A fork or a program run is
    refused by the kernel (`seccomp`'s second filter) and reported by the hook (`outside`)."""
    try:
        seccomp.install(processes=False)
    except OSError:       # no seccomp here (the sandbox is off, and says so): the hook still tells
        pass


def main() -> None:
    _forget_editable_installs()
    _no_new_processes()
    key = channel.read_key(0)
    inbox = channel.Inbox(0)
    request = inbox.next()
    # The answer goes to its own pipe (sandbox's answer fd), apart from anything student code
    # prints, which goes nowhere: the judge grades behaviour, not output.
    out = channel.Sealer(int(os.environ.get(ANSWER_FD, "1")), key)
    sys.stdout = open(os.devnull, "w")
    serve(request, inbox, out)


if __name__ == "__main__":
    main()
    # The answer is flushed; tearing JAX and the interpreter down costs ~0.3 s and keeps
    # nothing (nor runs what an answer registered with atexit).
    os._exit(0)
