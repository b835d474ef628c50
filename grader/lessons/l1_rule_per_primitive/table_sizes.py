"""Exercise 3b, ``table_sizes``: how many rules each real table holds, on any layout."""
from __future__ import annotations

from ... import core
from ...exercise import Delegation, Exercise, fresh_cases
from . import draw
from .kit import TABLE_NAMES, observe, standin
from .which_table import LAYOUTS, VISIBLE as TABLE_CASES, proxy_hint, table_case


def cases(rng, hidden: bool) -> list[dict]:
    """Stand-ins only: the installed JAX's counts move with imports, so they differ by process."""
    if not hidden:
        return [dict(c) for c in TABLE_CASES if c["layout"] != "installed"][2:]
    return fresh_cases(lambda i: table_case(rng, LAYOUTS[i % len(LAYOUTS)]), TABLE_CASES, 8)


def expect(case) -> dict:
    module, _ = standin(case)
    return {name: len(table) for name, table in core.real_tables(module).items()}


def compare(case, expected, got):
    if got == expected:
        return None
    extra = sorted(set(got) - set(expected))
    others = [n for n in extra if n not in TABLE_NAMES]
    missing = sorted(set(expected) - set(got))
    if others:
        hint = (f"{', '.join(others)} {'is' if len(others) == 1 else 'are'} not among "
                f"TABLE_NAMES: only those tables hold rules; skippable_batchers, vmappables and "
                f"the rest are other bookkeeping.")
    elif extra:
        hint = (f"{', '.join(extra)} {'is a proxy' if len(extra) == 1 else 'are proxies'} here, "
                f"not {'a dict' if len(extra) == 1 else 'dicts'}, even though len() answers: a "
                f"proxy is not a table, so leave out every table that is not a real dict.")
    elif missing:
        hint = (f"{', '.join(missing)} {'is a real dict' if len(missing) == 1 else 'are real dicts'}"
                f" among TABLE_NAMES on this module, and your answer leaves "
                f"{'it' if len(missing) == 1 else 'them'} out: include every one.")
    else:
        wrong = next(n for n in sorted(expected) if got[n] != expected[n])
        hint = (f"{wrong} holds {expected[wrong]} rules, not {got[wrong]}: count its entries with "
                f"len(table).")
    return draw.finding(case, expected, got, hint)


def failure_hint(case, failure) -> str:
    if failure.stage == "answer":
        return "return a dict {table name: number of rules}."
    return proxy_hint(case, failure)


TABLE_SIZES = Exercise("table_sizes", 1, ("table_sizes",), observe.table_sizes, cases, expect,
                       compare, failure_hint=failure_hint, delegation=Delegation(dynamic=True))
check_table_sizes = TABLE_SIZES.checker()

__all__ = ["TABLE_SIZES", "check_table_sizes"]
