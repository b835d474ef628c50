"""Lesson 2's self-checks: predictions of the mv table, of dot_general's dimension_numbers and of
reduce_sum's axes after batching. Ungraded: they show a verdict and never raise. Only the entries
answered so far are checked, so a student can predict one at a time."""
from __future__ import annotations

import numpy as np

from ...feedback import Finding, Result, selfcheck
from .live import DOT_CALLS, REDUCE_CALLS, dot_numbers, mv_table, reduce_axes


def _mv_hint(row, shape_pred, prims_pred) -> str:
    has_t, said_t = "transpose" in row["prims"], "transpose" in prims_pred
    if prims_pred == row["prims"]:
        return (f"The equations are right; the result's shape is the example's (2,) with the "
                f"batch of 5 inserted where out_axes={row['out_axes']} says.")
    if row["in_axes"][0] is not None and row["in_axes"][0] < 0:
        return ("A negative in_axes counts from the right of that argument: -2 on a rank-3 A "
                "is axis 1, so this row is the same call as the row written with 1.")
    if has_t and not said_t:
        return ("dot_general puts A's free axes first and v's after them; when that leaves the "
                "batch somewhere other than out_axes, vmap's final matchaxis moves it with a "
                "transpose.")
    if said_t and not has_t:
        return ("Here the batch already sits where out_axes asks for it (or dot_general keeps "
                "it in its batch dimensions, which come first), so nothing has to move.")
    return "Trace the batch axis through dot_general: A's free axes come first, then v's."


def selfcheck_mv_table(predictions) -> Result:
    """Compare predicted ``{row: (result_shape, [primitives])}`` with the live table."""
    rows = {r["row"]: r for r in mv_table()}
    predictions = dict(predictions or {})
    findings = []
    for number, pred in sorted(predictions.items(), key=lambda item: str(item[0])):
        row = rows.get(number)
        if row is None:
            findings.append(Finding(f"row {number}", "a row number 1..8", str(number), ""))
            continue
        try:
            shape, prims = tuple(int(d) for d in pred[0]), [str(p) for p in pred[1]]
        except (TypeError, ValueError, IndexError):
            findings.append(Finding(f"row {number}", "(shape, [primitive names])", repr(pred),
                                    "Write each prediction as ((5, 2), ['dot_general'])."))
            continue
        if shape != row["shape"] or prims != row["prims"]:
            findings.append(Finding(
                f"row {number}: vmap(mv, in_axes={row['in_axes']}, out_axes={row['out_axes']})"
                f" on A{row['A']}, v{row['v']}",
                f"{row['shape']} {row['prims']}", f"{shape} {prims}", _mv_hint(row, shape, prims)))
    missing = sorted(set(rows) - set(predictions))
    return selfcheck("selfcheck_mv_table", len(predictions), findings,
                     f"not predicted yet: rows {missing}" if missing else "",
                     complete=not missing)


def _as_int_tree(x):
    if isinstance(x, (list, tuple)):
        return tuple(_as_int_tree(v) for v in x)
    if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
        return int(x)
    return x


def _numbered(name: str, answer, count: int, finding_for) -> Result:
    """A self-check over numbered calls 1..count; ``finding_for(number, got)`` judges one answer."""
    given = {n: v for n, v in dict(answer or {}).items() if v is not None}
    missing = [n for n in range(1, count + 1) if n not in given]
    findings = []
    for number in sorted(given, key=str):
        if not isinstance(number, int) or not 1 <= number <= count:
            findings.append(Finding(f"call {number}", f"a call number 1..{count}", str(number), ""))
            continue
        finding = finding_for(number, _as_int_tree(given[number]))
        if finding is not None:
            findings.append(finding)
    return selfcheck(name, len(given), findings,
                     f"not answered yet: {missing}" if missing else "", complete=not missing)


def selfcheck_dimension_numbers(answer) -> Result:
    """``answer = {call: ((lhs_contract, rhs_contract), (lhs_batch, rhs_batch))}`` for DOT_CALLS."""
    def finding_for(number, got):
        in_axes, shapes = DOT_CALLS[number - 1]
        expected = dot_numbers(number)
        if got == expected:
            return None
        hint = ("Both operands batched: the batch becomes a batch-dimension pair in the second "
                "half." if None not in in_axes else
                "One operand batched: its batch axis is one more free axis, and the "
                "contracting axis number shifts past it; the batch dimensions stay empty.")
        return Finding(f"call {number}: vmap(dot, in_axes={in_axes}) on "
                       f"a{shapes[0]}, b{shapes[1]}", str(expected), str(got), hint)
    return _numbered("selfcheck_dimension_numbers", answer, len(DOT_CALLS), finding_for)


def selfcheck_reduce_axes(answer) -> Result:
    """``answer = {call: axes tuple}``: reduce_sum's ``axes`` after batching, for REDUCE_CALLS."""
    def finding_for(number, got):
        axis, in_axes, shape = REDUCE_CALLS[number - 1]
        expected = reduce_axes(number)
        if got == expected:
            return None
        return Finding(
            f"call {number}: vmap(lambda x: jnp.sum(x, axis={axis}), in_axes={in_axes}) on "
            f"{shape}", str(expected), str(got),
            "Number the axes of the stacked array: every per-example axis at or after the "
            "batch axis moves one to the right; the batch axis itself is never reduced.")
    return _numbered("selfcheck_reduce_axes", answer, len(REDUCE_CALLS), finding_for)


__all__ = ["selfcheck_dimension_numbers", "selfcheck_mv_table", "selfcheck_reduce_axes"]
