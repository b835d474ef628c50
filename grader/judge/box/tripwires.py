"""The child's watch on the JAX functions an exercise must not hand its work to.

On Python 3.12+ the functions' code objects are watched with `sys.monitoring`: any route that
runs one (a wrapper read out of a rule table's `functools.partial`, a name assembled at run time)
starts its code and is seen, and there is no wrapper to read the original out of. The monitor can
be switched off from student code, so `broken` says whether it still stands. On 3.11, which has
no `sys.monitoring`, the functions are replaced by wrappers (a closure can hand out the original
there: the reading of the answer is the first line on that release).

A spec naming one of JAX's rule tables (``batching:primitive_batchers``) watches every rule the
table holds (a rule maker's ``partial`` unwrapped). While a strict exercise is observed, the code
of a function a watched function defines is watched too: what ``jax.jacrev`` returned, wherever
and whenever it was called, runs ``jacfun`` (red team, round 9).

Every call is told to ``sink(spec, direct, own)`` as it happens (the child reports it at once):
``direct`` when an answer made it, through whatever stands between (plain Python, or JAX code
that only passes a function on, as ``traceback_util.api_boundary`` does); not when JAX's own code
made it, by the function's name or out of a rule table (vmap batching a primitive with its rule,
moving an axis with matchaxis). ``own``: a rule maker (its first parameter is ``prim``, in JAX's
source on every release) run on a primitive that JAX's own tables do not give it, such as the
exercise's primitive: whoever called it, the answer handed that primitive to JAX's rule maker.
"""
from __future__ import annotations

import contextlib
import importlib
import sys

from . import callers
from .callers import chain

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
# What can switch a tool off, swap its callback or take its events away.
_SWITCHES = ("use_tool_id", "free_tool_id", "register_callback", "set_events", "set_local_events",
             "restart_events", "clear_tool_id")


def target(spec: str):
    module, _, attr = spec.partition(":")
    return importlib.import_module(module), attr


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
    """What both kinds share: the hits of one observation, the walk and ``is_one``."""

    def __init__(self, specs, answer_prefix: str, sink=None):
        self.originals = _resolved(specs)
        self.prefix, self.hits, self.strict, self.within = answer_prefix, set(), False, False
        self.sink = sink
        self.owners = callers.owners()
        self.codes = {}                        # code object -> spec
        self.skip = set()                      # code of wrappers around a watched function
        self.names = {}                        # spec -> what JAX's own code calls it by
        self.rules = {}                        # code of a rule in a watched table -> its spec
        self.products = {}                     # code a watched function defines -> its spec
        for spec, original in self.originals.items():
            if isinstance(original, dict):     # one of JAX's rule tables: every rule it holds
                self.rules.update(dict.fromkeys(callers.table_rules(original), spec))
            codes = callers.codes_of(original)
            if codes:
                self.codes[codes[-1]] = spec   # the innermost: what every route ends up running
                self.skip.update(codes[:-1])
                self.products.update(dict.fromkeys(callers.inner_codes(codes[-1]), spec))
            self.names[spec] = frozenset({target(spec)[1]} | callers.table_names() |
                                         ({callers.CALLED_AS} if callers.transformed(original)
                                          else set()))
        self._calls_by_name: dict = {}         # (code, spec) -> whether it names the function

    def is_one(self, obj, specs) -> list[str]:
        """The specs ``obj`` is (or wraps, through partials, methods and ``__wrapped__``)."""
        seen = set()
        for link in chain(obj):
            for spec in specs:
                if spec in self.originals and link is self._face(spec):
                    seen.add(spec)
            code = getattr(link, "__code__", None)
            for known in (self.codes, self.rules):
                if code is not None and known.get(code) in specs:
                    seen.add(known[code])      # code is compared by value: a copy counts too
        return sorted(seen)

    def _face(self, spec):
        return self.originals[spec]

    def _note(self, spec, caller, prim=None) -> None:
        direct = self._from_answer(caller, spec) or (self.within and self._under_answer(caller))
        own = prim is not None and self._not_jaxs(spec, prim)
        if self.strict or direct or own:
            self.hits.add(spec)
        if self.sink is not None:
            self.sink(spec, direct, own)

    def _from_answer(self, frame, spec) -> bool:
        """Whether an answer cell made this call, through whatever stands between: plain Python
        (a ``functools.singledispatch`` or ``partial`` wrapper, ``map``) and the frames of JAX
        or the course that only pass a function on. The walk stops, not the answer's, at the
        first frame of JAX or the course whose code calls the function by its name or out of a
        rule table (JAX batching a primitive, moving an axis)."""
        while frame is not None:
            code = frame.f_code
            name = code.co_filename
            if name.startswith(self.prefix):
                return True
            if code not in self.skip and name.startswith(self.owners) and \
                    self._calls_it(code, spec):
                return False
            frame = frame.f_back
        return False

    def _under_answer(self, frame) -> bool:
        """Whether an answer cell's code is running anywhere below this call, through any chain
        of JAX's own functions: for an exercise whose answer is a rule JAX calls back (a
        custom_vjp's bwd), JAX's machinery run from inside it is the answer's, by any route."""
        while frame is not None:
            if frame.f_code.co_filename.startswith(self.prefix):
                return True
            frame = frame.f_back
        return False

    def _calls_it(self, code, spec) -> bool:
        key = (code, spec)
        found = self._calls_by_name.get(key)
        if found is None:
            found = self._calls_by_name[key] = bool(self.names[spec] & set(code.co_names))
        return found

    def _not_jaxs(self, spec, prim) -> bool:
        return callers.not_jaxs(prim, lambda f: self.codes.get(getattr(f, "__code__", None))
                                == spec)

    def takes_primitive(self, spec) -> bool:
        code = next((c for c, s in self.codes.items() if s == spec), None)
        return code is not None and code.co_argcount > 0 and code.co_varnames[0] == callers.RULE_ARG

    @contextlib.contextmanager
    def watching(self, strict: bool = False, within: bool = False):
        self.hits.clear()
        self.strict, self.within = strict, within
        try:
            yield self.hits
        finally:
            self.strict = self.within = False


class Monitor(_Watch):
    """Python 3.12+: a `sys.monitoring` tool of our own, PY_START on each watched code object."""

    def __init__(self, specs, answer_prefix: str, sink=None):
        super().__init__(specs, answer_prefix, sink)
        self.takes = {c for c, s in self.codes.items() if self.takes_primitive(s)}
        self.tool = next(t for t in (4, 3, 2, 1, 0, 5) if _get_tool(t) is None)
        _use(self.tool, NAME)
        self._callback = self._started
        _register(self.tool, _PY_START, self._callback)
        for code in (*self.codes, *self.rules):
            _set_local(self.tool, code, _PY_START)
        self.touched = False
        self._switches = {n: getattr(_MON, n) for n in _SWITCHES if hasattr(_MON, n)}
        for name, switch in self._switches.items():
            setattr(_MON, name, self._guarded(switch))

    def _guarded(self, switch):
        """``sys.monitoring``'s own function as student code sees it: any use is noted (an answer
        has no business with monitoring; one that switched the watch off and back on between two
        checks left nothing else to see), and on the judge's tool it is refused. The judge holds
        the builtins themselves (`_register` and the rest)."""
        def guarded(*args, **kwargs):
            self.touched = True
            if args and args[0] == self.tool:
                raise ValueError(f"tool {self.tool} is in use")
            return switch(*args, **kwargs)
        guarded.__name__, guarded.__qualname__ = switch.__name__, switch.__qualname__
        return guarded

    def _started(self, code, offset):
        spec, rule = self.codes.get(code), self.rules.get(code)
        if spec is not None or rule is not None:
            started = _frame(1)                  # the started function's frame
            if spec is not None:
                prim = callers.first_arg(started, code) if code in self.takes else None
                self._note(spec, started.f_back, prim)
            if rule is not None:                 # a rule out of a watched table
                self._note(rule, started.f_back)
        elif self.strict:
            spec = self._copy_of(code)
            if spec is not None:                 # JAX never runs a copy: the answer's call
                self.hits.add(spec)
                if self.sink is not None:
                    self.sink(spec, True, False)
            elif code in self.products:          # what a watched function made, made whenever:
                self.hits.add(self.products[code])   # run while a strict exercise is observed
                if self.sink is not None:
                    self.sink(self.products[code], False, False)

    def _copy_of(self, code):
        """The spec whose code ``code`` copies (same bytecode; names, lines and file may differ:
        ``code.replace(co_name=...)`` made it)."""
        for watched, spec in self.codes.items():
            if (code.co_argcount == watched.co_argcount and code.co_nlocals == watched.co_nlocals
                    and code.co_code == watched.co_code):
                return spec
        return None

    @contextlib.contextmanager
    def watching(self, strict: bool = False, within: bool = False):
        # While a strict exercise is observed every function start is looked at, so that a copy
        # of a watched function's code is seen too (only then: it costs every call a lookup).
        if strict:
            with contextlib.suppress(ValueError):   # a freed tool: `broken` reports it
                _set_events(self.tool, _PY_START)
        try:
            with super().watching(strict, within) as hits:
                yield hits
        finally:
            if strict:
                with contextlib.suppress(ValueError):
                    _set_events(self.tool, 0)

    def broken(self) -> list[str]:
        """What of the watch no longer stands (student code can switch a tool off)."""
        if self.touched:
            return ["monitor"]
        try:
            if _get_tool(self.tool) != NAME:
                return ["monitor"]
            if _register(self.tool, _PY_START, self._callback) is not self._callback:
                return ["monitor"]              # (and ours is back for the exercises after)
            if any(_get_local(self.tool, c) & _PY_START == 0 for c in (*self.codes, *self.rules)):
                return ["monitor"]
        except ValueError:                      # the tool id was freed
            return ["monitor"]
        return []

    def remove(self) -> None:
        for name, switch in self._switches.items():
            setattr(_MON, name, switch)
        with contextlib.suppress(ValueError):
            for code in (*self.codes, *self.rules):
                _set_local(self.tool, code, 0)
            _register(self.tool, _PY_START, None)
            _free(self.tool)


class Wrappers(_Watch):
    """Python 3.11: each watched function replaced by a wrapper that notes its caller."""

    def __init__(self, specs, answer_prefix: str, sink=None):
        super().__init__(specs, answer_prefix, sink)
        self.wrappers = {spec: self._wrap(spec, f) for spec, f in self.originals.items()
                         if not isinstance(f, dict)}       # (a table's rules: 3.12+ only)
        for spec, wrapper in self.wrappers.items():
            module, attr = target(spec)
            setattr(module, attr, wrapper)

    def _wrap(self, spec, original):
        takes = self.takes_primitive(spec)

        def watched(*args, **kwargs):
            prim = (args[0] if args else kwargs.get(callers.RULE_ARG)) if takes else None
            self._note(spec, _frame(1), prim)
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


def install(specs, answer_prefix: str, sink=None) -> _Watch:
    """Watch the JAX functions ``specs`` (``module:attribute``); every call goes to ``sink``."""
    return (Monitor if _MON is not None else Wrappers)(specs, answer_prefix, sink)
