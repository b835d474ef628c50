"""Exercise 4: ``run_batched(f, xs, limit)``: every example's result, with no array larger than
``limit`` bytes and as many examples at once as fit: ``vmap`` when the whole batch fits, else
``lax.map`` with the largest ``batch_size`` that does, f's program written once per chunk kind."""
from __future__ import annotations

import jax
import numpy as np
from jax import lax

from ... import core
from ...core.jaxprs import Eqn
from ...exercise import Delegating, Delegation, Exercise, describe, fresh_cases
from ...feedback import Finding
from ...wire import pack, unpack
from .kit import FUNCTIONS, observe

# What each function computes for one example, in NumPy: the loop the answer must reproduce.
REFERENCES = {
    "outer": lambda x: np.sum(np.outer(x, x) * x[0]),
    "spread": lambda x: np.sum(np.tanh(x[:, None] - x[None, :])),
    "gram": lambda x: np.max(np.sin(x)[:, None] * np.cos(x)[None, :]),
}
FLOAT32 = 4

VISIBLE = (
    {"fn": "outer", "B": 12, "d": 32, "limit": 12 * 32 * 32 * 4, "_seed": 1},
    {"fn": "spread", "B": 20, "d": 40, "limit": 6 * 40 * 40 * 4 + 100, "_seed": 2},
    {"fn": "gram", "B": 16, "d": 24, "limit": 24 * 24 * 4 * 3, "_seed": 3},
)


def per_example(case) -> int:
    """Bytes of the largest array one example makes: its (d, d) float32 intermediate."""
    return case["d"] * case["d"] * FLOAT32


def chunk(case) -> int:
    """How many examples fit in the limit at once (the whole batch when it all fits)."""
    return max(1, min(case["B"], case["limit"] // per_example(case)))


def _draw(rng, fits: bool) -> dict:
    size = int(rng.integers(8, 41))
    d = int(rng.integers(size, 65))                  # d >= B: the (d, d) blocks are the largest
    fn = str(rng.choice(sorted(FUNCTIONS)))
    at_once = size if fits else int(rng.integers(2, size // 3 + 1))   # 3 chunks or more
    extra = int(rng.integers(0, d * d * FLOAT32))     # room for less than one more example
    limit = at_once * d * d * FLOAT32 + extra + (int(rng.integers(0, 5)) * d * d * FLOAT32 if fits
                                                 else 0)
    return {"fn": fn, "B": size, "d": d, "limit": int(limit), "_seed": int(rng.integers(2**31))}


def cases(rng, hidden: bool) -> list[dict]:
    if not hidden:
        return [dict(c) for c in VISIBLE]
    return fresh_cases(lambda i: _draw(rng, fits=i % 3 == 0), VISIBLE, 6)


def _reference_program(case):
    f, b = FUNCTIONS[case["fn"]], chunk(case)
    return jax.vmap(f) if b == case["B"] else (lambda xs: lax.map(f, xs, batch_size=b))


def expect(case) -> dict:
    xs = observe.map_inputs(case)
    values = np.array([REFERENCES[case["fn"]](x) for x in xs], dtype=np.float32)
    program = jax.make_jaxpr(_reference_program(case))(jax.ShapeDtypeStruct(xs.shape, xs.dtype))
    return {**pack(values), "blocks": blocks(case, core.summarize(program, recursive=True))}


def blocks(case, eqns) -> int:
    """Equations that make a batch of (d, d) blocks: f's own work, once per copy of f's batched
    program (an answer's own (d, d) arrays, made while it measures f, are not batches)."""
    d = case["d"]
    return sum(1 for e in eqns for shape in e.out_shapes if len(shape) == 3 and shape[1:] == (d, d))


def _close(a, b) -> bool:
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=1e-3, atol=1e-3))


def compare(case, exp, got) -> Finding | None:
    where, want, mine = describe(case), unpack(exp), unpack(got)
    per, b, size = per_example(case), chunk(case), case["B"]
    if not _close(mine, want):
        return Finding(where, f"f of every example, shape {want.shape}",
                       f"shape {mine.shape}" + (" (values differ)" if mine.shape == want.shape
                                                else ""),
                       "run_batched must return f applied to every row of xs, in order, "
                       "stacked: what vmap(f)(xs) returns.")
    largest = max((n for _, n in got["sizes"]), default=0)
    at_once = largest // per
    if largest > case["limit"]:
        prim = next(p for p, n in got["sizes"] if n == largest)
        return Finding(where, f"no array over {case['limit']} bytes",
                       f"{prim} makes {largest} bytes ({at_once} examples at once)",
                       f"one example makes a ({case['d']}, {case['d']}) float32 array, {per} "
                       f"bytes, and a program batching n examples at once makes n times that: "
                       f"the limit holds {b} at once, so lax.map with batch_size={b}"
                       + ("." if b < size else " (or vmap)."))
    if at_once < b:
        return Finding(where, f"{b} examples at once (as many as fit)",
                       f"{at_once} at once (largest array {largest} bytes)",
                       f"the limit holds {b} examples' ({case['d']}, {case['d']}) arrays at "
                       f"once ({b} x {per} <= {case['limit']}); fewer at a time means more "
                       f"sequential steps for nothing: "
                       + ("vmap, since the whole batch fits." if b == size else
                          f"lax.map(f, xs, batch_size={b}), with batch_size = limit // "
                          f"(bytes per example)."))
    eqns = [Eqn.from_plain(e) for e in got["eqns"]]
    if b == size and any(e.primitive == "scan" for e in eqns):
        return Finding(where, "vmap(f) alone: the whole batch fits", "a scan (lax.map) around it",
                       "when every example fits at once, vmap(f) is the whole program; lax.map "
                       "with batch_size=len(xs) has the same memory but wraps the same work in a "
                       "one-trip scan with reshapes around it (and, before JAX 0.6.2, a "
                       "remainder of 0 rows).")
    if blocks(case, eqns) > exp["blocks"]:
        return Finding(where, f"f's (d, d) work written at most {exp['blocks']} times",
                       f"{blocks(case, eqns)} equations making ({case['d']}, {case['d']}) blocks",
                       "your program holds f's equations once per chunk: a Python loop over "
                       "chunks writes them out each time; lax.map writes the chunk's program "
                       "once (and once more for the remainder), and vmap once.")
    return None


def failure_hint(case, failure) -> str:
    if failure.stage == "trace":
        return ("run_batched must trace under jax.make_jaxpr: keep xs a JAX array (no NumPy "
                "conversions, no Python branching on its values); only its shape and the limit "
                "may decide the batch size.")
    return "run_batched(f, xs, limit) should return f applied to every row of xs."


# A delegating answer, which the judge must send to a human (tests/lessons/test_contract.py): a
# real threat: it earns full marks where nothing reads it.
DELEGATING = Delegating("""\
import jax
from jax import lax
from grader.lessons.l3_batching_whole_programs import map_or_vmap as _course
def run_batched(f, xs, limit):
    b = _course.chunk({"B": xs.shape[0], "d": xs.shape[1], "limit": limit})
    return jax.vmap(f)(xs) if b == xs.shape[0] else lax.map(f, xs, batch_size=b)
""")

MAP_OR_VMAP = Exercise("l3_map_or_vmap", 3, ("run_batched",), observe.run_batched, cases, expect,
                       compare, name="check_run_batched", failure_hint=failure_hint,
                       delegation=Delegation(examples=(DELEGATING,)))
check_run_batched = MAP_OR_VMAP.checker()

__all__ = ["MAP_CASES", "MAP_OR_VMAP", "check_run_batched", "chunk", "per_example"]
MAP_CASES = tuple({k: v for k, v in c.items() if k != "_seed"} for c in VISIBLE)
