"""Code that runs from neither the cells nor the installed packages: a module an answer wrote to
/tmp and imported, a string compiled by a helper the reading (`grader.judge.delegation`) does not
know (a console's ``runsource``, ``timeit``), a function built at run time from a copy of another's
code (a copy of a watched JAX function, padded so that it no longer compares equal, is not the
function the watch knows). Nothing of it was read before it ran, so the child reports it the
moment it happens, with an audit hook (PEP 578), which cannot be removed. Code is judged by where
it comes from, never by the file name it claims (``compile(source, jax.__file__, ...)`` claims
JAX's): every code object is compiled (``compile``), read from bytes (``marshal.loads``) or built
(``code.__new__``, ``function.__new__``), and each raises its event first. Known code: the
child compiling the cells, installed code compiling or building while an ``import`` statement
imports an installed module through installed loaders (importlib, a library generating its
functions, a module defining a dataclass or a namedtuple). (Reported at once: what then runs
could change anything held here.) A dataclass or namedtuple a cell makes is code from outside:
the standard library compiles their methods from strings built of what the cell hands it (a
class's annotation keys, a ``Field`` whose ``name`` changes between reads, a patched helper of
the generator's module), so no reading of the generator's caller can say the source is its own
(red team, rounds 11 and 12: each such check was got past, and the hidden code switched the watch
off).

A thread started once the watch stands is reported too (`THREAD`): what runs on it has no answer
frame below it and no exercise's observation around it, so the watch cannot say whose call it is
(red team, round 9: JAX's jacrev run by a worker thread released during another exercise). JAX
starts no Python thread while it traces, compiles or runs on CPU; the judge's child none. The
audit events are Python 3.12's ``_thread.start_new_thread`` and 3.13's
``_thread.start_joinable_thread`` (what ``threading`` uses); 3.11 raises none, and there the
``_thread`` functions are wrapped before any cell runs.

So is a ``sys.monitoring`` callback set by anything but the watch's own code (`MONITOR`: its
audit event names the function, not the tool, so any is). A new process is reported the same way
(`PROCESS`): ``os.fork``, ``os.exec``, ``os.posix_spawn``,
``subprocess.Popen`` and the rest of Python's process events. Nothing that watches the answer is
in another process (red team, round 10: a second interpreter looked ``where_it_lands`` up, a fork
with the channel pointed at /dev/null did too). The kernel refuses them anyway (`child`); the
hook is what names them, for the student and the instructor.
"""
from __future__ import annotations

import os
import sys

from .tamper import MONITOR, OUTSIDE, PROCESS, THREAD  # one word for both sides

# The names the child compiles the cells under.
_CELLS = ("<answer cell ", "<set-up cell ")
# Events that make code, and the files code is read from.
_MAKES = frozenset({"compile", "code.__new__", "function.__new__", "marshal.loads"})
_CODE_FILES = (".py", ".pyc", ".pyw", ".pth")
_THREADS = frozenset({"_thread.start_new_thread", "_thread.start_joinable_thread"})
_PROCESSES = frozenset({"os.fork", "os.forkpty", "os.exec", "os.posix_spawn", "os.spawn",
                        "os.system", "os.startfile", "subprocess.Popen", "pty.spawn"})
# The watch's own module: the one caller that may set a sys.monitoring callback.
_TRIPWIRES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tripwires.py")
_frame = sys._getframe                    # (held: an answer can rebind sys's names)
_watch = []                               # the one watch of this process, once installed


def _roots(*places: str) -> tuple[str, ...]:
    return tuple(os.path.join(os.path.realpath(p), "") for p in set(places))


def _hook(event, args) -> None:
    if _watch and (event in _MAKES or event == "open"):
        _watch[-1].saw(event, args)
    elif _watch and event in _THREADS:
        _watch[-1].started(THREAD)
    elif _watch and event in _PROCESSES:
        _watch[-1].started(PROCESS)
    elif _watch and event == "sys.monitoring.register_callback":
        # Setting any tool's callback, however the function was reached, from anything but the
        # watch's own code: switching the watch off and back within one call leaves nothing
        # for a later check to see (red team, round 13: the raw function from tripwires' globals).
        caller = _frame(1)
        if caller is None or caller.f_code.co_filename != _TRIPWIRES:
            _watch[-1].started(MONITOR)


def _wrap_thread_starts() -> None:
    """Python 3.11 raises no audit event for a new thread: its start functions are wrapped."""
    import _thread
    import threading

    def started(start):
        def start_new_thread(*args, **kwargs):
            _hook("_thread.start_new_thread", args)
            return start(*args, **kwargs)
        return start_new_thread
    for module, name in ((_thread, "start_new_thread"), (_thread, "start_new"),
                         (threading, "_start_new_thread")):
        if hasattr(module, name):
            setattr(module, name, started(getattr(module, name)))


class Outside:
    """Calls ``report()`` once, when code from outside is first made. One hook serves a process
    (a hook cannot be removed): a later watch replaces the earlier one. ``compiles_cells``: the
    code object of the child's function that compiles the cells."""

    def __init__(self, kit_root: str, report, compiles_cells=None, starts=None):
        self.roots = _roots(sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
                            kit_root)
        self.report, self.seen = report, False
        self.compiles_cells = compiles_cells
        self.starts, self.begun = starts, []   # ``starts(THREAD or PROCESS)``: report one
        if not _watch:
            sys.addaudithook(_hook)
            if sys.version_info < (3, 12):
                _wrap_thread_starts()
        _watch[:] = [self]

    def saw(self, event: str, args) -> None:
        if self.seen:
            return
        try:
            outside = not self._known(event, args, _frame(2))   # (saw, _hook, the event's caller)
        except Exception:      # a hook must never raise into the code it watches
            outside = True
        if outside:
            self.seen = True
            self.report()

    def started(self, what: str) -> None:
        """A thread or a process began (each reported once)."""
        if self.starts is not None and what not in self.begun:
            self.begun.append(what)
            try:
                self.starts(what)
            except Exception:  # (never into the code it watches)
                pass

    def _known(self, event: str, args, caller) -> bool:
        if event == "open":                    # reading or writing a code file: an installed one
            path = args[0]
            if isinstance(path, (str, bytes)) and os.fsdecode(path).endswith(_CODE_FILES):
                return self._installed(os.fsdecode(path))
            return True
        if event == "compile":
            name = str(args[1])
            if caller.f_code is self.compiles_cells and name.startswith(_CELLS):
                return True                    # the child compiling a cell
        return self._importing(caller)

    def _importing(self, frame) -> bool:
        """Installed code, called through installed code only by an import in progress: one an
        ``import`` started (importlib's ``_find_and_load``, not a loader's method called by
        hand), whose loaders are installed code (not a subclass whose ``get_code`` hands back
        the answer's own)."""
        while frame is not None:
            name = frame.f_code.co_filename
            if not self._installed(name):
                return False                   # an answer cell, or a file it wrote
            if name.startswith("<frozen importlib._bootstrap"):
                if not self._installed_object(frame.f_locals.get("self")):
                    return False
                if frame.f_code.co_name == "_find_and_load":
                    return True
            frame = frame.f_back
        return False

    def _installed_object(self, obj) -> bool:
        """Whether every method ``obj``'s class (a loader, a finder) could run is installed code."""
        if obj is None:
            return True
        for klass in type(obj).__mro__:
            for value in vars(klass).values():
                code = getattr(getattr(value, "__func__", value), "__code__", None)
                if code is not None and not self._installed(code.co_filename):
                    return False
        return True

    def _installed(self, name: str) -> bool:
        return name.startswith("<frozen ") or os.path.realpath(name).startswith(self.roots)

    def found(self) -> list[str]:
        return ([OUTSIDE] if self.seen else []) + self.begun
