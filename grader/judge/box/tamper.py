"""Did student code change the tools that observe it? A snapshot of the course's modules and of
the JAX they use, taken in the child before any cell runs, compared around each observation.

The kits' observers are plain Python: an answer cell can rebind a helper they call
(``module.__dict__[name] = ...``, ``mock.patch.object(...).start()``), swap a function's
``__code__`` or ``__defaults__``, or overwrite one of JAX's batching rules, and an observer would
then report what the answer wants. Such an exercise is not scored: the trusted side sends it to a
human with `reason`, which names what changed from a fixed vocabulary (the child's answer can be
forged, so nothing it says is copied through unchecked).
"""
from __future__ import annotations

import builtins
import re
import sys
import types

from ...core import _jax

MONITOR = "monitor"
OUTSIDE = "outside"                     # `grader.judge.box.outside`
THREAD = "thread"                       # a thread started after the watch stood (`outside`)
PROCESS = "process"                     # a process started, or a program run (`outside`)
_GONE = object()


def _callable_parts(path: str, fn, out: dict) -> None:
    """A function's code, defaults and closure contents (a property's or method's function's)."""
    if isinstance(fn, property):
        for part in ("fget", "fset", "fdel"):
            _callable_parts(f"{path}.{part}", getattr(fn, part), out)
        return
    fn = getattr(fn, "__func__", fn)
    if not isinstance(fn, types.FunctionType):
        return
    out[f"{path}.__code__"] = fn.__code__
    out[f"{path}.__defaults__"] = fn.__defaults__
    for key, value in (fn.__kwdefaults__ or {}).items():
        out[f"{path}.__kwdefaults__[{key}]"] = value
    for i, cell in enumerate(fn.__closure__ or ()):
        try:
            out[f"{path}.__closure__[{i}]"] = cell.cell_contents
        except ValueError:                     # an empty cell
            out[f"{path}.__closure__[{i}]"] = _GONE


def _course_module(name: str, module, out: dict) -> None:
    out[f"sys.modules[{name}]"] = module
    for attr, value in list(vars(module).items()):
        path = f"{name}.{attr}"
        out[path] = value
        if getattr(value, "__module__", None) != name:
            continue                           # imported: watched where it is defined
        if isinstance(value, type):
            for key, member in list(vars(value).items()):
                out[f"{path}.{key}"] = member
                _callable_parts(f"{path}.{key}", member, out)
        else:
            _callable_parts(path, value, out)


def _jax_modules() -> dict:
    """The JAX modules the course's modules hold, or hold something from."""
    found = {}
    for name, module in list(sys.modules.items()):
        if name != "grader" and not name.startswith("grader."):
            continue
        for value in list(vars(module).values()):
            owner = value.__name__ if isinstance(value, types.ModuleType) else \
                getattr(value, "__module__", None)
            if isinstance(owner, str) and owner.split(".")[0] == "jax" and owner in sys.modules:
                found[owner] = sys.modules[owner]
    return found


def _jax_module(name: str, module, out: dict) -> None:
    for attr, value in list(vars(module).items()):
        if isinstance(value, types.ModuleType):
            continue                           # submodules come and go with imports
        out[f"{name}.{attr}"] = value
        if getattr(value, "__module__", None) == name:
            _callable_parts(f"{name}.{attr}", value, out)


def take() -> dict:
    """``{module: {what: the object there}}`` for everything `changes` compares."""
    out: dict = {}
    for name, module in sorted(sys.modules.items()):
        if (name == "grader" or name.startswith("grader.")) and \
                isinstance(module, types.ModuleType):
            _course_module(name, module, out.setdefault(name, {}))
    # What every check here calls (getattr, isinstance, vars...) is looked up in builtins.
    for name, module in [("builtins", builtins)] + sorted(_jax_modules().items()):
        _jax_module(name, module, out.setdefault(name, {}))
    rules = out.setdefault("JAX's batching rule tables", {})
    for table, held in _jax.rule_tables().items():
        for prim, rule in list(held.items()):
            rules[f"{table}[{getattr(prim, 'name', prim)}]"] = rule
    return out


def _added_is_harmless(path: str, value, exported: dict) -> bool:
    """What may appear on a course module: a submodule imported since, or a name loaded lazily
    (the same object under the same name in another of the course's modules)."""
    return isinstance(value, types.ModuleType) or \
        exported.get((path.rpartition(".")[2], id(value)), 0) > 1


def changes(before: dict, after: dict) -> list[str]:
    """What differs: changed or removed entries; entries added to the course's modules, not
    submodules or lazy loads; nothing of modules imported since (they have no before)."""
    flat = {p: v for entries in after.values() for p, v in entries.items()}
    exported: dict = {}
    for p, v in flat.items():
        if p.startswith("grader") and "[" not in p:
            key = (p.rpartition(".")[2], id(v))
            exported[key] = exported.get(key, 0) + 1
    found = []
    for owner, entries in before.items():
        now = after.get(owner, {})
        found += [p for p, v in entries.items() if now.get(p, _GONE) is not v]
        if owner.startswith("grader"):
            found += [p for p, v in now.items()
                      if p not in entries and not _added_is_harmless(p, v, exported)]
    return sorted(set(found))


def pin(watch) -> dict:
    """The watch's own attributes as they stand: student code can find the live object (``gc``)
    and shadow a method or empty its sink (red team, round 12), which no module snapshot sees."""
    return dict(vars(watch))


def unpinned(watch, pins: dict) -> list[str]:
    """``[MONITOR]`` if an attribute of ``watch`` is another object than when pinned, or new."""
    now = vars(watch)
    moving = {"strict", "within"}               # (set and reset by each observation)
    if set(now) - moving != set(pins) - moving or any(
            now[k] is not v for k, v in pins.items() if k not in moving):
        return [MONITOR]
    return []


# ---- the trusted side ---------------------------------------------------------------------------

_NAME = re.compile(r"[A-Za-z_][\w.]*(\[[\w.<>-]{1,60}\])?")
SHOWN = 3


def reason(tampered) -> str:
    """The manual-grading reason for a child's ``tampered`` list ("" when there is none)."""
    if not isinstance(tampered, list) or not tampered:
        return ""
    parts = []
    if MONITOR in tampered:
        parts.append("it switched off the judge's watch on JAX's functions")
    if OUTSIDE in tampered:
        parts.append("it ran code from outside its cells and the installed packages (a file it "
                     "wrote, or a string compiled as it ran, as the methods of a dataclass or "
                     "namedtuple a cell makes are), which nothing read before it ran")
    if THREAD in tampered:
        parts.append("it started a thread, on which the judge cannot tell whose code runs "
                     "(what it calls there escapes the watch on JAX's functions)")
    if PROCESS in tampered:
        parts.append("it started another process or ran a program, where nothing the judge "
                     "watches can see what it does (the sandbox refuses it)")
    names = [t for t in tampered if isinstance(t, str) and t not in (MONITOR, OUTSIDE, THREAD, PROCESS)
             and len(t) < 160 and _NAME.fullmatch(t)]
    course = [n for n in names if n.startswith(("grader", "sys.modules[grader"))]
    python = [n for n in names if n.startswith("builtins.")]
    jax = [n for n in names if n not in course and n not in python]
    for owner, shown in (("the course's", course), ("JAX's", jax), ("Python's", python)):
        if shown:
            more = f" and {len(shown) - SHOWN} more" if len(shown) > SHOWN else ""
            parts.append(f"it changed {owner} {', '.join(shown[:SHOWN])}{more}")
    if not parts:
        parts.append("it changed the judge's tools while being graded")
    return "; ".join(parts) + " (the judge's observations of it cannot be trusted)"
