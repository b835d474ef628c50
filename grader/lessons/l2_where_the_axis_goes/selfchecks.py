"""Lesson 2's self-checks: predictions of the mv table, of dot_general's dimension_numbers and of
reduce_sum's axes after batching. Ungraded: they show a verdict and never raise. Only the entries
answered so far are checked, so a student can predict one at a time."""
from __future__ import annotations

import numpy as np

from ...feedback import Finding, Result, selfcheck
from .live import DOT_CALLS, REDUCE_CALLS, dot_numbers, mv_table, reduce_axes


def _negative_note(row) -> str:
    notes = [f"in_axes {a} on {'A' if i == 0 else 'v'}{shape} is axis {a % len(shape)}"
             for i, (a, shape) in enumerate(zip(row["in_axes"], (row["A"], row["v"])))
             if a is not None and a < 0]
    return f" ({'; '.join(notes)}: a negative in_axes counts from the right)" if notes else ""


def _mv_hint(row, shape_pred, prims_pred) -> str:
    """The first of (result shape, primitives) the prediction got wrong, explained for this row."""
    size, out_axes = row["A"][row["in_axes"][0]] if row["in_axes"][0] is not None else \
        row["v"][row["in_axes"][1]], row["out_axes"]
    dot = next(e for e in row["eqns"] if e.primitive == "dot_general")
    left = dot.out_shapes[0].index(size) if size in dot.out_shapes[0] else None
    note = _negative_note(row)
    if shape_pred != row["shape"]:
        where = shape_pred.index(size) if size in shape_pred else None
        if sorted(shape_pred) == sorted(row["shape"]) and where is not None:
            return (f"the result's batch (size {size}) goes where out_axes={out_axes} puts it, "
                    f"axis {out_axes}: {row['shape']}; you put it at axis {where}.")
        return (f"the result is one example's {row['shape'][:out_axes] + row['shape'][out_axes + 1:]}"
                f" with the batch of {size} inserted at out_axes={out_axes}: {row['shape']}.")
    if "transpose" in row["prims"] and "transpose" not in prims_pred:
        return (f"dot_general leaves the batch at axis {left} of its {dot.out_shapes[0]} result"
                f"{note}, and out_axes={out_axes} asks for it at axis {out_axes}: vmap's final "
                f"matchaxis moves it there with a transpose.")
    if "transpose" in prims_pred and "transpose" not in row["prims"]:
        return (f"dot_general already leaves the batch at axis {left} of its "
                f"{dot.out_shapes[0]} result{note}, where out_axes={out_axes} asks for it, so "
                f"nothing has to move: no transpose.")
    return (f"the batched program holds {row['prims']}{note}; you listed {prims_pred}. Trace the "
            f"batch axis through dot_general: its batch dimensions first, then A's free axes, "
            f"then v's.")


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


OPERANDS = ("a", "b")


def _dot_parts(got):
    """``((lc, rc), (lb, rb))`` as tuples of ints, or None."""
    try:
        (lc, rc), (lb, rb) = got
        return tuple(tuple(int(d) for d in part) for part in (lc, rc, lb, rb))
    except (TypeError, ValueError):
        return None


def _dot_hint(in_axes, shapes, expected, got) -> str:
    parts = _dot_parts(got)
    if parts is None:
        return ("Write ((lhs_contract, rhs_contract), (lhs_batch, rhs_batch)) with tuples of "
                "ints, e.g. (((1,), (0,)), ((), ())).")
    (elc, erc), (elb, erb) = expected
    want = (elc, erc, elb, erb)
    for k in (0, 1):                               # the contracting axes, a's then b's
        if parts[k] != tuple(want[k]):
            name, axis, shape = OPERANDS[k], in_axes[k], shapes[k]
            if axis is None:
                return (f"{name} is not batched here (in_axes None), so its contracting axis keeps "
                        f"its per-example number: {tuple(want[k])}, not {parts[k]}.")
            p = axis % len(shape)
            c = want[k][0]
            if p <= c:
                return (f"{name}'s batch axis is at {p} of the stacked {shape}, before its "
                        f"contracting axis, so that axis moves up by one: {tuple(want[k])}, not "
                        f"{parts[k]}.")
            return (f"{name}'s batch axis is at {p} of the stacked {shape}, after its contracting "
                    f"axis, so that axis keeps its number: {tuple(want[k])}, not {parts[k]}.")
    batched = [OPERANDS[k] for k in (0, 1) if in_axes[k] is not None]
    if len(batched) == 2:
        return (f"both operands are batched, so the batch becomes a batch-dimension pair: a's "
                f"batch axis {tuple(elb)} and b's {tuple(erb)}, in the second half.")
    return (f"only {batched[0]} is batched: its batch axis is one more free axis of the result, "
            f"so the batch dimensions stay empty: ((), ()).")


def selfcheck_dimension_numbers(answer) -> Result:
    """``answer = {call: ((lhs_contract, rhs_contract), (lhs_batch, rhs_batch))}`` for DOT_CALLS."""
    def finding_for(number, got):
        in_axes, shapes = DOT_CALLS[number - 1]
        expected = dot_numbers(number)
        if got == expected:
            return None
        return Finding(f"call {number}: vmap(dot, in_axes={in_axes}) on "
                       f"a{shapes[0]}, b{shapes[1]}", str(expected), str(got),
                       _dot_hint(in_axes, shapes, expected, got))
    return _numbered("selfcheck_dimension_numbers", answer, len(DOT_CALLS), finding_for)


def _reduce_hint(axis, in_axes, shape, expected, got) -> str:
    try:
        mine = tuple(int(a) for a in got)
    except (TypeError, ValueError):
        return "Write the axes as a tuple of ints, e.g. (1,)."
    p = in_axes % len(shape)
    example = tuple(range(len(shape) - 1)) if axis is None else (axis,)
    kept = [a for a in example if a >= p]            # axes that should have moved up, not moved
    if mine == example and kept:
        return (f"you kept the example's axis numbers {example}, but the batch axis is at {p} of "
                f"the stacked {shape}, and axis {kept[0]} is at or after it, so it moves up by "
                f"one: {expected}.")
    early = [a for a in example if a < p]             # axes that keep their number, moved anyway
    if mine == tuple(a + 1 for a in example) and early:
        return (f"you moved every axis up by one, but the batch axis is at {p} of the stacked "
                f"{shape}, and axis {early[0]} comes before it, so it keeps its number: "
                f"{expected}.")
    if p in mine:
        return (f"axis {p} of the stacked {shape} is the batch axis (in_axes={in_axes}), and the "
                f"batch axis is never reduced: the example's axes {example} are {expected} there.")
    if len(mine) != len(expected):
        return (f"jnp.sum(x{'' if axis is None else f', axis={axis}'}) reduces {len(expected)} "
                f"axes of each example: {example}, which are {expected} of the stacked {shape}.")
    for a, g, w in zip(example, mine, expected):
        if g != w:
            why = ("is at or after the batch axis, so it moves up by one" if a >= p else
                   "comes before the batch axis, so it keeps its number")
            return (f"the batch axis is at {p} of the stacked {shape}; the example's axis {a} "
                    f"{why}: {w}, not {g}.")
    return f"the reduce_sum's axes are {expected}."


def selfcheck_reduce_axes(answer) -> Result:
    """``answer = {call: axes tuple}``: reduce_sum's ``axes`` after batching, for REDUCE_CALLS."""
    def finding_for(number, got):
        axis, in_axes, shape = REDUCE_CALLS[number - 1]
        expected = reduce_axes(number)
        if got == expected:
            return None
        return Finding(
            f"call {number}: vmap(lambda x: jnp.sum(x, axis={axis}), in_axes={in_axes}) on "
            f"{shape}", str(expected), str(got), _reduce_hint(axis, in_axes, shape, expected, got))
    return _numbered("selfcheck_reduce_axes", answer, len(REDUCE_CALLS), finding_for)


__all__ = ["selfcheck_dimension_numbers", "selfcheck_mv_table", "selfcheck_reduce_axes"]
