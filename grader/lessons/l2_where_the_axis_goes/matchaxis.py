"""Exercise 1: ``my_matchaxis(src, dst, x, size, sum_match=False)``, compared with JAX's own."""
from __future__ import annotations

import jax
import numpy as np

from ... import core
from ...exercise import Delegation, Exercise, describe, fresh_cases
from ...feedback import Finding
from ...wire import Failure, pack
from .kit import observe


def kind(src, dst, sum_match) -> str:
    """Which of matchaxis's cases applies, tested in JAX's order."""
    if src == dst:
        return "same"
    if isinstance(src, int) and isinstance(dst, int):
        return "move"
    if src is None:
        return "broadcast"
    return "sum" if sum_match else "error"


def _case(rng, rank=None) -> dict:
    rank = int(rng.integers(0, 4)) if rank is None else rank
    shape = tuple(int(d) for d in rng.integers(2, 5, size=rank))
    src = None if rank == 0 or rng.random() < 0.35 else int(rng.integers(0, rank))
    out_rank = rank if src is not None else rank + 1
    dst = None if rng.random() < 0.3 else int(rng.integers(-out_rank, out_rank))
    size = shape[src] if src is not None else int(rng.integers(1, 6))
    return {"shape": shape, "src": src, "dst": dst, "size": size,
            "sum_match": bool(rng.random() < 0.5)}


def _case_of(rng, wanted: str) -> dict | None:
    case = _case(rng, rank=int(rng.integers(1, 4)))
    return case if kind(case["src"], case["dst"], case["sum_match"]) == wanted else None


VISIBLE = (
    {"shape": (2, 3), "src": 1, "dst": 1, "size": 3, "sum_match": False},
    {"shape": (4, 2, 3), "src": 0, "dst": 2, "size": 4, "sum_match": False},
    {"shape": (2, 3, 4), "src": 2, "dst": -3, "size": 4, "sum_match": False},
    {"shape": (2, 3), "src": None, "dst": 1, "size": 4, "sum_match": False},
    {"shape": (3,), "src": None, "dst": -1, "size": 2, "sum_match": False},
    {"shape": (4, 3), "src": 0, "dst": None, "size": 4, "sum_match": True},
    {"shape": (4, 3), "src": 0, "dst": None, "size": 4, "sum_match": False},
    {"shape": (2, 3), "src": None, "dst": None, "size": 5, "sum_match": False},
)


def cases(rng, hidden: bool) -> list[dict]:
    if not hidden:
        return [dict(c) for c in VISIBLE]
    drawn = fresh_cases(lambda i: _case(rng), VISIBLE, 24)
    kinds = {kind(c["src"], c["dst"], c["sum_match"]) for c in drawn}
    for wanted in ("move", "broadcast", "sum", "error"):       # every case kind, every draw
        if wanted not in kinds:
            drawn += fresh_cases(lambda i: _case_of(rng, wanted), [*VISIBLE, *drawn], 1)
    return drawn


def expect(case):
    """JAX's own matchaxis on the case: an array, or a Failure when it raises."""
    x = jax.device_put(observe.matchaxis_input(case))
    try:
        return pack(core.matchaxis(case["src"], case["dst"], x, case["size"], case["sum_match"]))
    except Exception as err:  # raising *is* the answer in the error case
        return Failure("call", f"{type(err).__name__}: {err}"[:300])


def _shape_str(o) -> str:
    if isinstance(o, Failure):
        return f"raised {o.error}"
    return f"array of shape {tuple(o['shape'])}"


def _hint(case, exp, got) -> str:
    """What the answer did differently on this case, in JAX's order of matchaxis's cases."""
    src, dst, size = case["src"], case["dst"], case["size"]
    which = kind(src, dst, case["sum_match"])
    x = observe.matchaxis_input(case)
    if isinstance(exp, Failure):
        summed = not isinstance(got, Failure) and tuple(got["shape"]) == x.sum(src).shape
        return (f"src={src} is mapped and dst=None is not, and sum_match is False: JAX raises "
                f"here, and your function returned {_shape_str(got)}"
                f"{' (it summed the axis away, which only sum_match=True asks for)' if summed else ''}"
                f". This is the error out_axes=None gives for an output that really was batched.")
    if isinstance(got, Failure):
        return {"same": f"src == dst ({src!r}) comes first, and None == None counts: nothing to "
                        f"do, return x.",
                "sum": f"With sum_match=True a mapped axis going to 'not mapped' is summed away: "
                       f"x.sum({src}).",
                "broadcast": f"Not mapped to mapped is a broadcast: insert an axis of length "
                             f"size={size} at dst={dst}.",
                "move": f"Two different ints: one moveaxis, from {src} to {dst}."}[which] + \
            f" Your function raised {got.kind}."
    shape, want = tuple(got["shape"]), tuple(exp["shape"])
    if shape == want and got["dtype"] != exp["dtype"]:
        return f"Right shape but dtype {got['dtype']}: keep x's dtype ({exp['dtype']})."
    if which == "same":
        return (f"src == dst ({src!r}): the axis is already where it was asked for, so return x "
                f"unchanged, shape {want}; yours has shape {shape}.")
    if which == "move":
        if shape != want and shape == np.swapaxes(x, src, dst).shape:
            return (f"swapaxes exchanges two axes: axes {src} and {dst} of {x.shape} swapped give "
                    f"{shape}. matchaxis uses moveaxis, which takes axis {src} out and reinserts "
                    f"it at {dst}, shifting the axes in between: {want}.")
        if shape == want and got["data"] == x.reshape(want).tobytes():
            return (f"reshape to {want} keeps the element order, so the elements are not where a "
                    f"moved axis puts them; moving axis {src} to {dst} needs moveaxis (a "
                    f"transpose).")
        return f"Two different ints: move axis {src} to position {dst} (jnp.moveaxis): {want}."
    if which == "broadcast":
        if dst < 0 and dst + x.ndim >= 0 and shape != want and \
                shape == tuple(np.insert(np.array(x.shape, dtype=int), dst + x.ndim, size)):
            return (f"A negative dst counts from the end of the RESULT, which has one more axis "
                    f"than x: dst={dst} is axis {dst + x.ndim + 1} of a rank-{x.ndim + 1} "
                    f"result, not axis {dst + x.ndim}; canonicalise it with ndim + 1, as JAX "
                    f"does.")
        return (f"Not mapped to mapped: insert an axis of length size={size} at position "
                f"dst={dst}: {want}, not {shape}.")
    return f"With sum_match=True, sum over the mapped axis: x.sum({src}), shape {want}."


def compare(case, exp, got) -> Finding | None:
    if isinstance(exp, Failure) and isinstance(got, Failure):
        return None
    if not isinstance(exp, Failure) and not isinstance(got, Failure):
        if (tuple(exp["shape"]), exp["dtype"], exp["data"]) == \
                (tuple(got["shape"]), got["dtype"], got["data"]):
            return None
    expected = ("raises (mapped output, unmapped destination)" if isinstance(exp, Failure)
                else _shape_str(exp))
    if not isinstance(exp, Failure) and not isinstance(got, Failure) and \
            tuple(exp["shape"]) == tuple(got["shape"]):
        expected += " (same shape, different elements)"
    return Finding(describe(case), expected, _shape_str(got), _hint(case, exp, got))


MATCHAXIS = Exercise(
    "l2_matchaxis", 3, ("my_matchaxis",), observe.matchaxis, cases, expect, compare,
    name="check_matchaxis", accepts_failures=True,
    # JAX's own matchaxis (and its helpers) is the thing to write.
    delegation=Delegation(names=("matchaxis", "_matchaxis_symzeros", "_match_axes_and_sum",
                                 "call_matchaxis"),
                          calls=("jax._src.interpreters.batching:matchaxis",), strict=True))
check_matchaxis = MATCHAXIS.checker()

__all__ = ["MATCHAXIS", "check_matchaxis", "kind"]
