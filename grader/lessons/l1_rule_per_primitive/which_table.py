"""Exercise 3a, ``which_table``: the table holding a Primitive object, on any layout."""
from __future__ import annotations

import functools

import jax.extend.core.primitives as public_primitives

from ... import core
from ...exercise import Delegation, Exercise, fresh_cases
from . import draw
from .kit import TABLE_NAMES, observe, query_prim, standin

# Names stand-in tables are filled from (stand-ins hold fresh primitives of these names).
POOL = ("sin", "cos", "tanh", "exp", "add", "mul", "sub", "max", "reduce_sum", "reduce_max",
        "transpose", "dot_general", "reshape", "broadcast_in_dim", "concatenate", "select_n")
AXIS_POOL = ("psum", "pmax", "all_gather", "all_to_all", "ppermute", "axis_index", "pbroadcast",
             "cond", "while", "scan", "jit", "remat2", "custom_vjp_call_jaxpr")
LAYOUTS = ("split", "collapsed-readable", "collapsed-readthrough", "collapsed-writeonly", "legacy")


@functools.lru_cache(maxsize=1)
def installed_pool() -> tuple[str, ...]:
    """Primitives of the installed JAX asked about by name: public (``jax.extend.core.primitives``)
    and with a rule in exactly one table of a fresh process before anything runs, so the
    student's process, which may have imported less, holds the same rule in the same table."""
    fresh = core.read_fresh(warmup=False)
    holders: dict[str, list[str]] = {}
    for table, names in fresh.members.items():
        for name in names:
            holders.setdefault(name, []).append(table)
    return tuple(sorted(n for n, tables in holders.items() if len(tables) == 1 and
                        getattr(getattr(public_primitives, f"{n}_p", None), "name", None) == n))


def _members(rng, pool, low, high):
    k = int(rng.integers(low, high + 1))
    return tuple(str(n) for n in rng.choice(pool, size=min(k, len(pool)), replace=False))


def tables_for(layout, rng) -> dict:
    """Member names per table for one stand-in layout (``pbroadcast`` twice, as old releases had)."""
    plain = _members(rng, POOL, 3, 8)
    axis = tuple(n for n in _members(rng, AXIS_POOL, 3, 8) if n != "pbroadcast") + ("pbroadcast",)
    if layout == "split":
        return {"primitive_batchers": plain + ("pbroadcast",), "fancy_primitive_batchers": axis}
    if layout == "legacy":
        tables = {"primitive_batchers": plain + ("pbroadcast",), "axis_primitive_batchers": axis}
        if rng.random() < 0.5:
            tables["spmd_axis_primitive_batchers"] = _members(rng, ("psum_spmd", "pmax_spmd"), 1, 2)
        return tables
    return {"fancy_primitive_batchers": plain + axis}


def table_case(rng, layout) -> dict:
    tables = tables_for(layout, rng)
    names = list(tables)
    roll = rng.random()
    if layout == "collapsed-readthrough":
        # A look-alike is in no table, so the proxy says so too: only a member tells apart an
        # answer that never checks for a real dict (drawn 1 in 25 hidden sets before).
        roll = 0.2 + 0.8 * roll
    if roll < 0.2:    # a look-alike: same name as a member, but not the same object
        query = ("fresh", str(rng.choice(tables[names[0]])))
    elif roll < 0.45:  # one of the two same-named primitives
        holder = [t for t in names if "pbroadcast" in tables[t]]
        t = holder[int(rng.integers(0, len(holder)))]
        query = (t, tables[t].index("pbroadcast"))
    else:
        t = names[int(rng.integers(0, len(names)))]
        query = (t, int(rng.integers(0, len(tables[t]))))
    return {"layout": layout, "tables": tables, "query": query}


VISIBLE = (
    {"layout": "split", "query": ("fancy_primitive_batchers", 1),
     "tables": {"primitive_batchers": ("sin", "add", "reduce_sum", "pbroadcast"),
                "fancy_primitive_batchers": ("psum", "cond", "pbroadcast")}},
    {"layout": "split", "query": ("primitive_batchers", 3),
     "tables": {"primitive_batchers": ("sin", "add", "reduce_sum", "pbroadcast"),
                "fancy_primitive_batchers": ("psum", "cond", "pbroadcast")}},
    {"layout": "split", "query": ("fresh", "sin"),
     "tables": {"primitive_batchers": ("sin", "add", "reduce_sum", "pbroadcast"),
                "fancy_primitive_batchers": ("psum", "cond", "pbroadcast")}},
    {"layout": "collapsed-readable", "query": ("fancy_primitive_batchers", 0),
     "tables": {"fancy_primitive_batchers": ("sin", "add", "psum", "scan")}},
    {"layout": "collapsed-readthrough", "query": ("fancy_primitive_batchers", 1),
     "tables": {"fancy_primitive_batchers": ("cos", "mul", "all_gather", "cond")}},
    {"layout": "collapsed-writeonly", "query": ("fancy_primitive_batchers", 2),
     "tables": {"fancy_primitive_batchers": ("sin", "transpose", "dot_general", "while")}},
    {"layout": "legacy", "query": ("axis_primitive_batchers", 1),
     "tables": {"primitive_batchers": ("sin", "add", "pbroadcast"),
                "axis_primitive_batchers": ("psum", "pbroadcast", "all_gather")}},
    {"layout": "installed", "query": ("registered", "sin"), "tables": {}},
    {"layout": "installed", "query": ("registered", "psum"), "tables": {}},
    {"layout": "installed", "query": ("fresh", "add"), "tables": {}},
)


def _installed_case(rng, where: str) -> dict:
    return {"layout": "installed", "tables": {},
            "query": (where, str(rng.choice(installed_pool())))}


def cases(rng, hidden: bool) -> list[dict]:
    if not hidden:
        return [dict(c) for c in VISIBLE]
    return fresh_cases(lambda i: table_case(rng, LAYOUTS[i % len(LAYOUTS)]) if i < 11 else
                       _installed_case(rng, "fresh" if i == 13 else "registered"), VISIBLE, 14)


def expect(case):
    module, objects = standin(case)
    holders = core.tables_holding(query_prim(case, objects), module)
    return holders[0] if holders else None


def proxies(case) -> list[str]:
    """The tables named in TABLE_NAMES that this case's module has but that are not dicts."""
    module, _ = standin(case)
    return [n for n in TABLE_NAMES if hasattr(module, n) and not isinstance(getattr(module, n), dict)]


def proxy_hint(case, failure) -> str:
    if failure.kind in ("KeyError", "TypeError"):
        names = proxies(case)
        which = (f"here {' and '.join(names)} {'is a proxy' if len(names) == 1 else 'are proxies'}"
                 if names else "one of the tables is a proxy")
        return (f"your code asked a table that is not a dict, and it raised {failure.kind}: "
                f"{which}, and a proxy may raise on `in`, len() or [] (KeyError: 0 on one kind, "
                f"TypeError on another). Check isinstance(table, dict) before asking a table "
                f"anything.")
    if failure.kind == "AttributeError":
        module, _ = standin(case)
        absent = [n for n in TABLE_NAMES if not hasattr(module, n)]
        return (f"not every layout has every table (this one has no {', '.join(absent)}): use "
                f"getattr(module, name, None) and skip what is missing.")
    return "run your function on the example and read the error."


def compare(case, expected, got):
    if got == expected:
        return None
    module, objects = standin(case)
    prim = query_prim(case, objects)
    table = getattr(module, got, None) if isinstance(got, str) else None
    if got is not None and got not in TABLE_NAMES:
        hint = (f"{got!r} is not one of the rule tables: only the names in TABLE_NAMES hold "
                f"rules (skippable_batchers, vmappables and the rest are other bookkeeping).")
    elif got is not None and not isinstance(table, dict):
        reads = (" that answers `in` by reading through to the real table"
                 if table is not None and _answers_in(table, prim) else "")
        hint = (f"{got} here is not a dict but a proxy{reads}: a proxy holds no rules of its own, "
                f"however it answers. Ask only tables for which isinstance(table, dict) is true.")
    elif expected is None:
        hint = (f"this {prim.name!r} is a fresh primitive that only shares its name with a "
                f"registered one, and {got} holds the other: tables are keyed by the Primitive "
                f"object, so test `prim in table` (identity), not names.")
    elif got is not None:
        hint = (f"{got} holds a different primitive that is also called {prim.name!r} (two "
                f"primitives can share a name, as pbroadcast did in old releases), while this "
                f"object is in {expected}: look the object up (`prim in table`), never its name.")
    else:
        hint = (f"this primitive object is in {expected}, a real dict, and your function did not "
                f"find it there: ask every real dict among TABLE_NAMES, in that order.")
    return draw.finding(case, repr(expected), repr(got), hint)


def _answers_in(table, prim) -> bool:
    try:
        return prim in table
    except Exception:  # a proxy that raises: the other kind of proxy
        return False


def failure_hint(case, failure) -> str:
    if failure.stage == "answer":
        return "return the table's name (a str) or None."
    return proxy_hint(case, failure)


# Reading modules by name is the exercise, so a computed getattr is fine; the course's own
# table helpers are not (answers may not import the course's package at all).
WHICH_TABLE = Exercise("which_table", 2, ("which_table",), observe.which_table, cases, expect,
                       compare, failure_hint=failure_hint,
                       delegation=Delegation(dynamic=True))
check_which_table = WHICH_TABLE.checker()

__all__ = ["WHICH_TABLE", "check_which_table", "installed_pool"]
