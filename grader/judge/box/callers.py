"""Who made a call the judge's child watches, and on what (`tripwires`' reading of the stack).

A call is an answer's when walking up from it meets an answer cell's frame before a frame of JAX
or the course whose code calls the function by name or out of a rule table: JAX's own code using
its own function. Frames between that only pass a function on (plain Python, a
``functools.partial``, JAX's ``traceback_util.api_boundary``) hide nothing. A rule maker run on a
primitive that JAX's tables do not give it (`not_jaxs`) is the answer's too, whatever the stack.
"""
from __future__ import annotations

import functools
import os
import sys

from ...core import _jax

RULE_ARG = "prim"            # a rule maker's first parameter, in JAX's source on every release
CALLED_AS = "call_wrapped"   # how JAX's code runs a transformed function (linear_util.WrappedFun)


def owners() -> tuple[str, ...]:
    """The folders of JAX's and the course's code: frames there call JAX on their own account."""
    found = []
    for name in ("jax", "jaxlib", "grader"):
        module = sys.modules.get(name)
        path = getattr(module, "__file__", None)
        if path:
            for folder in {os.path.dirname(path), os.path.dirname(os.path.realpath(path))}:
                found.append(folder + os.sep)
    return tuple(found)


def chain(obj) -> list:
    """``obj`` and what it wraps: partials' ``func``, methods' ``__func__``, ``__wrapped__``; for
    a function JAX decorated with one of ``linear_util``'s transformations, the function itself."""
    out = []
    while obj is not None and len(out) < 8:
        out.append(obj)
        obj = (transformed(obj) or getattr(obj, "func", None) or
               getattr(obj, "__func__", None) or getattr(obj, "__wrapped__", None))
    return out


def transformed(obj):
    """``@lu.transformation2 def _batch_outer(f, ...)`` leaves ``partial(transformation2,
    _batch_outer)`` in the module: its ``func`` is the decorator, which every transformation shares
    (watching that would watch them all); the generator it holds is what runs. JAX's code never
    calls a generator by its name: it runs inside ``WrappedFun.call_wrapped``, which the frame
    that had the function transformed calls by name (`CALLED_AS`)."""
    if isinstance(obj, functools.partial) and obj.args and callable(obj.args[0]) and \
            getattr(obj.func, "__module__", None) == "jax._src.linear_util":
        return obj.args[0]
    return None


def table_names() -> set[str]:
    return set(_jax.TABLE_NAMES)


def not_jaxs(prim, is_maker) -> bool:
    """A rule maker (``is_maker(f)`` tells it) run on ``prim`` that JAX's tables
    do not hold as ``partial(maker, prim)``, or on one of the course's own primitives."""
    if _made_by_course(prim):
        return True
    for table in _jax.rule_tables().values():
        try:
            entry = table.get(prim)
        except TypeError:                      # not hashable: no primitive of JAX's
            return True
        if isinstance(entry, functools.partial) and entry.args[:1] == (prim,) and \
                any(is_maker(f) for f in chain(entry.func)):
            return False
    return True


def _made_by_course(prim) -> bool:
    """A primitive whose implementation is the course's own (the exercises' primitives)."""
    impl = getattr(prim, "impl", None)
    return any(str(getattr(f, "__module__", "") or "").startswith("grader.") for f in chain(impl))


def first_arg(frame, code):
    """The value of a starting function's first parameter (its arguments are bound by now)."""
    try:
        return frame.f_locals.get(code.co_varnames[0])
    except Exception:  # a frame we cannot read: no primitive to go by
        return None


def codes_of(obj) -> list:
    """The code along every route to ``obj`` (past partials and wrappers), outermost first."""
    return [c for c in (getattr(f, "__code__", None) for f in chain(obj)) if c]


def innermost_code(obj):
    """The code that every route to ``obj`` ends up running."""
    codes = codes_of(obj)
    return codes[-1] if codes else None


def inner_codes(code) -> list:
    """The code of the functions defined inside ``code`` (what it makes and returns: jacrev's
    ``jacfun``, vmap's ``vmap_f``), at any depth."""
    found, todo = [], [c for c in code.co_consts if hasattr(c, "co_code")]
    while todo:
        inner = todo.pop()
        found.append(inner)
        todo += [c for c in inner.co_consts if hasattr(c, "co_code")]
    return found


def table_rules(table: dict) -> list:
    """The code of every rule a rule table holds, a ``partial`` of a rule maker unwrapped, and of
    the functions a rule of the batching module's own closes over (JAX 0.5+ files a plain rule
    under a shared ``wrapped`` closure that calls it)."""
    found = []
    for rule in list(table.values()):
        held = [f for link in chain(rule) for f in _closed_over(link)
                if getattr(link, "__module__", None) == _jax.BATCHING_MODULE]
        found += [c for c in map(innermost_code, [rule, *held]) if c is not None]
    return found


def _closed_over(fn) -> list:
    cells = getattr(fn, "__closure__", None) or ()
    out = []
    for cell in cells:
        try:
            value = cell.cell_contents
        except ValueError:                     # an empty cell
            continue
        if callable(value) and not isinstance(value, type):
            out.append(value)
    return out
