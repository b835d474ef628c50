"""The child's watch on the JAX functions an exercise must not hand its work to.

On Python 3.12+ the functions' code objects are watched with `sys.monitoring`: any route that
runs one (a wrapper read out of a rule table's `functools.partial`, a name assembled at run time)
starts its code and is seen, and there is no wrapper to read the original out of. The monitor can
be switched off from student code, so `intact` says whether it still stands. On 3.11, which has no
`sys.monitoring`, the functions are replaced by wrappers (a closure can hand out the original
there: the reading of the answer is the first line on that release).
"""
from __future__ import annotations

import contextlib
import importlib
import os
import sys

NAME = "inside-vmap-judge"
_frame = sys._getframe                         # (held: an answer can rebind sys's names)
# The builtins, held before any student code runs: rebinding ``sys.monitoring``'s names later
# changes nothing here.
_MON = getattr(sys, "monitoring", None)
if _MON is not None:
    _PY_START = _MON.events.PY_START
    _use, _free, _get_tool = _MON.use_tool_id, _MON.free_tool_id, _MON.get_tool
    _register, _set_local, _get_local = (_MON.register_callback, _MON.set_local_events,
                                         _MON.get_local_events)
    _set_events = _MON.set_events


MAX_FRAMES = 64


def _owners() -> tuple[str, ...]:
    """The folders of JAX's and the course's code: frames there call JAX on their own account."""
    found = []
    for name in ("jax", "jaxlib", "grader"):
        module = sys.modules.get(name)
        path = getattr(module, "__file__", None)
        if path:
            for folder in {os.path.dirname(path), os.path.dirname(os.path.realpath(path))}:
                found.append(folder + os.sep)
    return tuple(found)


def target(spec: str):
    module, _, attr = spec.partition(":")
    return importlib.import_module(module), attr


def chain(obj) -> list:
    """``obj`` and what it wraps: partials' ``func``, methods' ``__func__``, ``__wrapped__``."""
    out = []
    while obj is not None and len(out) < 8:
        out.append(obj)
        obj = (getattr(obj, "func", None) or getattr(obj, "__func__", None) or
               getattr(obj, "__wrapped__", None))
    return out


def _resolved(specs) -> dict:
    found = {}
    for spec in sorted(set(specs)):
        try:
            module, attr = target(spec)
            found[spec] = getattr(module, attr)
        except (ImportError, AttributeError):
            continue                           # not in this release: nothing to watch
    return found


class _Watch:
    """What both kinds share: the hits of one observation, and ``is_one``."""

    def __init__(self, specs, answer_prefix: str):
        self.originals = _resolved(specs)
        self.prefix, self.hits, self.strict = answer_prefix, set(), False
        self.owners = _owners()
        self.codes = {}                        # code object -> spec
        self.skip = set()                      # code of wrappers around a watched function
        for spec, original in self.originals.items():
            codes = [c for c in (getattr(f, "__code__", None) for f in chain(original)) if c]
            if codes:
                self.codes[codes[-1]] = spec   # the innermost: what every route ends up running
                self.skip.update(codes[:-1])

    def is_one(self, obj, specs) -> list[str]:
        """The specs ``obj`` is (or wraps, through partials, methods and ``__wrapped__``)."""
        seen = set()
        for link in chain(obj):
            for spec in specs:
                if spec in self.originals and link is self._face(spec):
                    seen.add(spec)
            code = getattr(link, "__code__", None)
            if code is not None and self.codes.get(code) in specs:
                seen.add(self.codes[code])     # code is compared by value: a copy counts too
        return sorted(seen)

    def _face(self, spec):
        return self.originals[spec]

    def _note(self, spec, caller) -> None:
        if self.strict or self._from_answer(caller):
            self.hits.add(spec)

    def _from_answer(self, frame) -> bool:
        """Whether an answer cell made this call, through whatever plain Python stands between
        (a ``functools.singledispatch`` or ``partial`` wrapper, ``map``): the frames are walked up
        to the first that is an answer cell's (its call) or JAX's or the course's own (JAX
        batching the answer's function, say: not its call)."""
        for _ in range(MAX_FRAMES):
            if frame is None:
                return False
            name = frame.f_code.co_filename
            if name.startswith(self.prefix):
                return True
            if frame.f_code not in self.skip and name.startswith(self.owners):
                return False
            frame = frame.f_back
        return False

    @contextlib.contextmanager
    def watching(self, strict: bool = False):
        self.hits.clear()
        self.strict = strict
        try:
            yield self.hits
        finally:
            self.strict = False


class Monitor(_Watch):
    """Python 3.12+: a `sys.monitoring` tool of our own, PY_START on each watched code object."""

    def __init__(self, specs, answer_prefix: str):
        super().__init__(specs, answer_prefix)
        self.tool = next(t for t in (4, 3, 2, 1, 0, 5) if _get_tool(t) is None)
        _use(self.tool, NAME)
        self._callback = self._started
        _register(self.tool, _PY_START, self._callback)
        for code in self.codes:
            _set_local(self.tool, code, _PY_START)

    def _started(self, code, offset):
        spec = self.codes.get(code)
        if spec is not None:
            self._note(spec, _frame(1).f_back)   # frame 1 is the started function's
        elif self.strict:
            spec = self._copy_of(code)
            if spec is not None:
                self.hits.add(spec)

    def _copy_of(self, code):
        """The spec whose code ``code`` copies (same bytecode; names, lines and file may differ:
        ``code.replace(co_name=...)`` made it)."""
        for watched, spec in self.codes.items():
            if (code.co_argcount == watched.co_argcount and code.co_nlocals == watched.co_nlocals
                    and code.co_code == watched.co_code):
                return spec
        return None

    @contextlib.contextmanager
    def watching(self, strict: bool = False):
        # While a strict exercise is observed every function start is looked at, so that a copy
        # of a watched function's code is seen too (only then: it costs every call a lookup).
        if strict:
            with contextlib.suppress(ValueError):   # a freed tool: `broken` reports it
                _set_events(self.tool, _PY_START)
        try:
            with super().watching(strict) as hits:
                yield hits
        finally:
            if strict:
                with contextlib.suppress(ValueError):
                    _set_events(self.tool, 0)

    def broken(self) -> list[str]:
        """What of the watch no longer stands (student code can switch a tool off)."""
        try:
            if _get_tool(self.tool) != NAME:
                return ["monitor"]
            if _register(self.tool, _PY_START, self._callback) is not self._callback:
                return ["monitor"]              # (and ours is back for the exercises after)
            if any(_get_local(self.tool, c) & _PY_START == 0 for c in self.codes):
                return ["monitor"]
        except ValueError:                      # the tool id was freed
            return ["monitor"]
        return []

    def remove(self) -> None:
        with contextlib.suppress(ValueError):
            for code in self.codes:
                _set_local(self.tool, code, 0)
            _register(self.tool, _PY_START, None)
            _free(self.tool)


class Wrappers(_Watch):
    """Python 3.11: each watched function replaced by a wrapper that notes its caller."""

    def __init__(self, specs, answer_prefix: str):
        super().__init__(specs, answer_prefix)
        self.wrappers = {spec: self._wrap(spec, f) for spec, f in self.originals.items()}
        for spec, wrapper in self.wrappers.items():
            module, attr = target(spec)
            setattr(module, attr, wrapper)

    def _wrap(self, spec, original):
        def watched(*args, **kwargs):
            self._note(spec, _frame(1))
            return original(*args, **kwargs)
        watched.__name__ = getattr(original, "__name__", "watched")
        return watched

    def is_one(self, obj, specs) -> list[str]:
        faces = [s for s in specs if s in self.wrappers and
                 any(link is self.wrappers[s] for link in chain(obj))]
        return sorted(set(super().is_one(obj, specs)) | set(faces))

    def broken(self) -> list[str]:
        return ["monitor"] if any(getattr(target(s)[0], target(s)[1], None) is not w
                                  for s, w in self.wrappers.items()) else []

    def remove(self) -> None:
        for spec, original in self.originals.items():
            module, attr = target(spec)
            setattr(module, attr, original)


def install(specs, answer_prefix: str) -> _Watch:
    return (Monitor if _MON is not None else Wrappers)(specs, answer_prefix)
