"""Code that runs from neither the cells nor the installed packages: a module an answer wrote to
/tmp and imported, a string compiled by a helper the reading (`grader.judge.delegation`) does not
know. Nothing of it was read before it ran, so the child reports it the moment it starts, with an
audit hook (PEP 578): Python raises an ``exec`` event before any code object runs, and a hook
cannot be removed. (Reported at once: what then runs could change anything held here.)
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


def _hook(event, args) -> None:
    if event == "exec" and _watch:
        _watch[-1].saw(args[0])


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
        name = code.co_filename
        if name.startswith(_OWN):
            return True
        if name.startswith("<"):               # a string: known only from a stdlib generator
            caller = _frame(3).f_code.co_filename      # (saw, _hook, then exec's caller)
            return caller.startswith(self.stdlib) and caller.endswith(_GENERATORS)
        return os.path.realpath(name).startswith(self.roots)

    def found(self) -> list[str]:
        return [OUTSIDE] if self.seen else []
