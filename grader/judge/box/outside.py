"""Code that runs from neither the cells nor the installed packages: a module an answer wrote to
/tmp and imported, a string compiled by a helper the reading (`grader.judge.delegation`) does not
know, a function built at run time from a copy of another's code (a copy of a watched JAX
function, padded so that it no longer compares equal, is not the function the watch knows).
Nothing of it was read before it ran, so the child reports it the moment it happens, with an
audit hook (PEP 578): Python raises ``exec`` before any code object runs, ``code.__new__`` and
``function.__new__`` when one is built (``code.replace``, ``types.FunctionType``), and
``marshal.loads`` when one is read from bytes; and a hook cannot be removed. (Reported at once:
what then runs could change anything held here.)
"""
from __future__ import annotations

import os
import sys

from .tamper import OUTSIDE  # one word for both sides

# Code written by the cells themselves, and Python's frozen modules.
_OWN = ("<answer cell ", "<set-up cell ", "<frozen ")
# The standard library's code generators: the source they compile is their own.
_GENERATORS = (os.path.join("collections", "__init__.py"), "dataclasses.py")
_frame = sys._getframe                    # (held: an answer can rebind sys's names)
_watch = []                               # the one watch of this process, once installed


def _roots(*places: str) -> tuple[str, ...]:
    return tuple(os.path.join(os.path.realpath(p), "") for p in set(places))


# Events that build code: never the cells' business (importlib reads a .pyc, a library may clone
# its own functions).
_BUILDS = frozenset({"code.__new__", "function.__new__", "marshal.loads"})


def _hook(event, args) -> None:
    if _watch and (event == "exec" or event in _BUILDS):
        _watch[-1].saw(args[0] if event == "exec" else None)


class Outside:
    """Calls ``report()`` once, when code from outside first starts. One hook serves a process
    (a hook cannot be removed): a later watch replaces the earlier one."""

    def __init__(self, kit_root: str, report):
        self.roots = _roots(sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
                            kit_root)
        self.stdlib, self.report, self.seen = _roots(sys.base_prefix), report, False
        if not _watch:
            sys.addaudithook(_hook)
        _watch[:] = [self]

    def saw(self, code) -> None:
        if self.seen:
            return
        try:
            outside = not self._known(code)
        except Exception:      # a hook must never raise into the code it watches
            outside = True
        if outside:
            self.seen = True
            self.report()

    def _known(self, code) -> bool:
        caller = _frame(3)                     # (_known, saw, _hook, then the event's caller)
        if code is not None:
            name = code.co_filename
            if name.startswith(_OWN):
                return True
            if not name.startswith("<"):       # a file: an installed one
                return self._installed(name)
            if (caller.f_code.co_filename.startswith(self.stdlib)
                    and caller.f_code.co_filename.endswith(_GENERATORS)):
                return True                    # namedtuple's and dataclass's own source
        # A string compiled, or code built, by installed code while an installed module is
        # imported (a library generating its functions): the module's own, not the answer's.
        return self._importing(caller)

    def _importing(self, frame) -> bool:
        while frame is not None:
            name = frame.f_code.co_filename
            if name.startswith("<frozen importlib._bootstrap"):
                return True
            if not self._installed(name):
                return False                   # an answer cell, or a file it wrote
            frame = frame.f_back
        return False

    def _installed(self, name: str) -> bool:
        return name.startswith("<frozen ") or os.path.realpath(name).startswith(self.roots)

    def found(self) -> list[str]:
        return [OUTSIDE] if self.seen else []
