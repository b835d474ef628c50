"""Why a batching rule's result is not a loop over examples, named from what the rule did.

The observer records, for each call of the student's rule, the dims it was given and the shape and
out_dim it returned (``calls``), and the batched jaxpr (``eqns``). Each hint here compares those
with the case and names the first thing that went astray: which axis, which parameter, which
operand. A hint that fits none of them says so in general terms, never the wrong specific thing.
"""
from __future__ import annotations

import numpy as np

from ...core.jaxprs import Eqn

# Primitives whose batch axis may stay wherever it arrives: not moving it is no mistake there.
ELEMENTWISE = ("softsign",)
# Parameters a rule passes on unchanged (sumsq's axes, by contrast, must change).
PASSED_ON = ("scale",)


def batch_size(call) -> int | None:
    """The batch size at one call's level: the length of a mapped operand's batch axis."""
    for d, shape in zip(call["dims"], call["in_shapes"]):
        if isinstance(d, int) and shape is not None and 0 <= d < len(shape):
            return shape[d]
    return None


def arrived(call) -> tuple[int, int] | None:
    """``(operand index, batch dim)`` of the first mapped operand of a call."""
    return next(((i, d) for i, d in enumerate(call["dims"]) if isinstance(d, int)), None)


def moved(eqns) -> bool:
    return any(e.primitive == "transpose" for e in eqns)


def _never_moved(name, call, size, at, eqns) -> str:
    i, d = arrived(call)
    where = f"dims[{i}] = {d}"
    fix = (f"Move it to the front first (jnp.moveaxis(x, d, 0)), then " +
           ("fold it into the rows, bind once and unfold." if name == "rowmax" else "bind once."))
    if at is None:
        mine = [e for e in eqns if e.primitive == name]
        lost = ""
        if name == "rowmax" and mine and mine[0].in_shapes[0][-1:] == (size,):
            lost = (f" (rowmax's operand was {mine[0].in_shapes[0]}: the batch became its "
                    f"columns and was reduced away)")
        return (f"the batch axis arrives at {where} and your rule never moved it, so it did not "
                f"survive: the value your rule returned, shape {call['out_shape']}, has no axis of "
                f"the batch size {size}{lost}. {fix}")
    return (f"the batch axis arrives at {where} and your rule never moved it: in the value your "
            f"rule returned, shape {call['out_shape']}, the batch (size {size}) is still at axis "
            f"{at}, while your rule says out_dim {call['out_dim']}. {fix}")


def _wrong_out_dim(name, call, size, at) -> str:
    _, d = arrived(call)
    text = (f"the out_dim you returned ({call['out_dim']}) does not name the batch axis of the "
            f"value you returned: in shape {call['out_shape']} the batch (size {size}) is at axis "
            f"{at}")
    if name in ELEMENTWISE and at == d:
        return text + (f", where it arrived (dims[0] = {d}): an elementwise primitive leaves it in "
                       f"place, so return d.")
    return text + ": return that index."


def _read_at(got, out_dim, at, expected) -> bool:
    """Would the rule's result, read with its batch at ``at`` instead of ``out_dim``, be the loop's?

    vmap (out_axes=0) moved the rule's axis ``out_dim`` to the front of what we observed, so the
    rule returned ``moveaxis(observed, 0, out_dim)``."""
    observed = np.asarray(got["values"], dtype=np.float32).reshape(tuple(got["shape"]))
    if not isinstance(out_dim, int) or not 0 <= out_dim < observed.ndim:
        return False
    candidate = np.moveaxis(np.moveaxis(observed, 0, out_dim), at, 0)
    want = np.asarray(expected["values"], dtype=np.float32).reshape(tuple(expected["shape"]))
    return candidate.shape == want.shape and bool(np.allclose(candidate, want, rtol=1e-5,
                                                              atol=1e-6))


def _scrambled(name, call, size, at) -> str:
    text = (f"in the value your rule returned, shape {call['out_shape']}, the batch (size {size}) "
            f"sits at axis {at}, not at the out_dim {call['out_dim']} you gave, and even read from "
            f"axis {at} its values are not the loop's: ")
    if name == "rowmax":
        return text + ("the unfold after binding must undo the fold exactly: with the batch "
                       "folded in front of the rows (batch * rows), reshape the result to "
                       "(batch, rows).")
    return text + "check each reshape and moveaxis of your rule against the axes it moves."


def misplaced_batch(name, calls, eqns, got=None, expected=None) -> str | None:
    """A hint for the first call of the rule whose out_dim is not where its result's batch is.

    With ``got`` and ``expected`` (a case without an outer vmap: the rule's one call is all
    there is), a wrong out_dim is named only when reading the batch where it really is gives the
    loop's values; otherwise the values are scrambled, and the hint says so."""
    for call in calls:
        size, shape, out_dim = batch_size(call), call["out_shape"], call["out_dim"]
        if size is None or shape is None or arrived(call) is None:
            continue
        if isinstance(out_dim, str):
            return (f"your rule returned an out_dim of type {out_dim}: return the output batch "
                    f"dim as a plain Python int (int(...)), or None.")
        at = [k for k, s in enumerate(shape) if s == size]
        if len(at) > 1 or (at and out_dim == at[0]):
            continue                                     # ambiguous, or right at this call
        _, d = arrived(call)
        if name not in ELEMENTWISE and not moved(eqns) and d != 0 and (not at or at[0] == d):
            return _never_moved(name, call, size, at[0] if at else None, eqns)
        if at and got is not None and not _read_at(got, out_dim, at[0], expected):
            return _scrambled(name, call, size, at[0])
        if at:
            return _wrong_out_dim(name, call, size, at[0])
    return None


def sumsq_axes(case, size, eqn: Eqn) -> str | None:
    """Where the axes a sumsq rule bound are not the example's axes, shifted past the batch."""
    operand, axes = eqn.in_shapes[0], eqn.param("axes")
    asked = dict(case["params"])["axes"]
    at = [k for k, s in enumerate(operand) if s == size]
    if axes is None or len(at) != 1:
        return None
    p = at[0]
    right = tuple(a + 1 if a >= p else a for a in asked)
    if tuple(axes) == right:
        return None
    head = (f"your rule bound sumsq with axes={tuple(axes)} on the batched operand {operand}, "
            f"whose batch axis (size {size}) is at {p}")
    if p in axes:
        return (f"{head}: axis {p} is that batch axis, and it was summed away. One example's "
                f"axes {asked} are axes {right} of the batched operand: an axis at or after "
                f"batch_dim moves up by one, one before it keeps its number.")
    for a, mine, want in zip(asked, tuple(axes) + (None,) * len(asked), right):
        if mine != want:
            rule = ("it is at or after batch_dim, so it moves up by one" if a >= p else
                    "it is before batch_dim, so it keeps its number")
            return f"{head}: the example's axis {a} is axis {want} there, not {mine} ({rule})."
    return f"{head}: one example's axes {asked} are axes {right} of the batched operand."


def wrong_values(name, case, got_values, expected, bound_params) -> str:
    """Same shape as the loop, different numbers: a parameter not passed on, or which example."""
    for key, want in case["params"]:
        if key not in PASSED_ON:
            continue
        for params in bound_params:
            if key in params and params[key] != want:
                return (f"your rule bound {name} with {key}={params[key]}, but this call asked "
                        f"for {key}={want}: pass **params on to prim.bind unchanged.")
            if key not in params:
                return (f"your rule bound {name} without its {key} parameter (this call has "
                        f"{key}={want}): pass **params on to prim.bind.")
    if sorted(got_values) == sorted(expected["values"]):
        return ("your rule computes the loop's numbers but puts them in the wrong places: " +
                ("the unfold after binding must undo the fold exactly: with the batch folded in "
                 "front of the rows (batch * rows), reshape the result to (batch, rows)."
                 if name == "rowmax" else
                 "check each reshape and moveaxis of your rule against the axes it moves."))
    per = max(1, len(expected["values"]) // max(1, expected["shape"][0])) if expected["shape"] else 1
    first = next((k // per for k, (g, e) in enumerate(zip(got_values, expected["values"]))
                  if abs(g - e) > 1e-5 + 1e-5 * abs(e)), 0)
    return (f"same shape as a loop over examples but different numbers, first at example {first}: "
            f"check that the operands' batch axes line up before binding and that the out_dim you "
            f"return names the batch axis.")
