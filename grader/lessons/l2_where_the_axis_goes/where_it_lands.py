"""Exercise 1, ``where_it_lands(program, in_dims)``: predict, from the rules alone, where vmap
leaves the batch axis after every step of a small program, without running vmap.

The expectation is JAX's own: the program runs under ``jax.vmap`` here, in trusted code, and the
batch dim of each step's result tracer is read. The answer's code may not run vmap while it is
observed (the judge's watch, ``strict``): letting vmap say where the axis lands is the lookup
this exercise replaces with the rules.
"""
from __future__ import annotations

import jax

from ... import core
from ...exercise import Delegating, Delegation, Exercise, canonical, describe, fresh_cases
from ...feedback import Finding
from .kit import observe
from .kit.programs import example_shapes, run


def expect(case) -> dict:
    """Each step's batch dim under ``jax.vmap``, as the result tracers report it (shapes only)."""
    program, in_dims = case["program"], case["in_dims"]
    seen = {}

    def probe(*xs):
        values = run(program, *xs)
        for out, *_ in program["steps"]:
            seen[out] = core.view(values[out]).batch_dim
        return 0.0

    jax.eval_shape(jax.vmap(probe, in_axes=tuple(in_dims[n] for n, _ in program["inputs"])),
                   *observe.stacked_structs(case))
    return {name: seen[name] for name in (s[0] for s in program["steps"])}


# ---- drawing programs ----------------------------------------------------------------------------

def _options(rng, shapes: dict) -> list:
    """Every step one could add to values of these per-example shapes."""
    names, opts = list(shapes), []
    for a in names:
        opts.append(("sin", a))
        if shapes[a]:
            opts.append(("sum", a, int(rng.integers(0, len(shapes[a])))))
        for b in names:
            sa, sb = shapes[a], shapes[b]
            if a != b and sa == sb and sa:
                opts.append(("mul", a, b))
                opts.append(("concat", a, b, int(rng.integers(0, len(sa)))))
            ranks = (len(sa), len(sb))
            if set(ranks) <= {1, 2} and ranks != (1, 1) and sa[-1] == sb[0]:
                opts.append(("matmul", a, b))
    return opts


def _out_shape(op, operands, shapes):
    a = shapes[operands[0]]
    if op in ("sin", "mul"):
        return a
    if op == "sum":
        return tuple(d for i, d in enumerate(a) if i != operands[1])
    if op == "concat":
        k = operands[2]
        return tuple(d * 2 if i == k else d for i, d in enumerate(a))
    b = shapes[operands[1]]
    return tuple(a[:-1]) + tuple(b[1:])


INPUTS = (("A", "nm"), ("v", "m"), ("B", "nm"), ("u", "n"), ("C", "mk"))


def _draw(rng) -> dict | None:
    n, m, k = (int(d) for d in rng.choice([2, 3, 4, 5], size=3, replace=False))
    size = {"n": n, "m": m, "k": k}
    count = int(rng.integers(2, 4))
    picks = sorted(int(i) for i in rng.choice(len(INPUTS), size=count, replace=False))
    inputs = tuple((INPUTS[i][0], tuple(size[c] for c in INPUTS[i][1])) for i in picks)
    shapes, steps = dict(inputs), []
    for t in range(int(rng.integers(4, 7))):
        opts = [o for o in _options(rng, shapes) if len(_out_shape(o[0], o[1:], shapes)) <= 3]
        op, *operands = opts[int(rng.integers(0, len(opts)))]
        name = f"s{t + 1}"
        shapes[name] = _out_shape(op, operands, shapes)
        steps.append((name, op, *operands))
    in_dims = {name: (None if rng.random() < 0.3 else int(rng.integers(0, len(s) + 1)))
               for name, s in inputs}
    if all(d is None for d in in_dims.values()):
        return None
    return {"program": {"inputs": inputs, "steps": tuple(steps)}, "in_dims": in_dims,
            "_size": int(rng.integers(6, 10))}


def _kinds(case, dims) -> set:
    """What a case can tell apart: the rule branches its steps take with a mapped operand."""
    program, found = case["program"], set()
    known = {**case["in_dims"], **dims}
    for out, op, *operands in program["steps"]:
        ins = [known[v] for v in operands if isinstance(v, str)]
        if all(d is None for d in ins):
            continue
        if op == "sin" and dims[out] != 0:
            found.add("kept")
        if op == "mul" and (None in ins or len(set(ins)) > 1) and any(d for d in ins if d):
            found.add("fronted")
        if op == "sum" and operands[1] < ins[0]:
            found.add("shifted")
        if op == "matmul":
            found.add("dot")
        if op == "concat" and any(d for d in ins if d):
            found.add("concat")
    return found


ALL_KINDS = {"kept", "fronted", "shifted", "dot", "concat"}


VISIBLE = (
    {"program": {"inputs": (("A", (2, 3)), ("v", (3,))),
                 "steps": (("s1", "sin", "A"), ("s2", "matmul", "s1", "v"))},
     "in_dims": {"A": 1, "v": None}, "_size": 7},
    {"program": {"inputs": (("A", (2, 3)), ("B", (2, 3))),
                 "steps": (("s1", "mul", "A", "B"), ("s2", "sum", "s1", 0), ("s3", "sin", "A"))},
     "in_dims": {"A": 2, "B": None}, "_size": 7},
    {"program": {"inputs": (("u", (4,)), ("C", (4, 2))),
                 "steps": (("s1", "matmul", "u", "C"), ("s2", "concat", "s1", "s1", 0))},
     "in_dims": {"u": None, "C": 2}, "_size": 7},
)


def visible_programs() -> list[dict]:
    """The visible cases, as the exercise shows them."""
    return [dict(c) for c in VISIBLE]


def cases(rng, hidden: bool) -> list[dict]:
    visible = [dict(c) for c in VISIBLE]
    if not hidden:
        return visible
    while True:     # a set in which every rule branch is asked at least once
        drawn = fresh_cases(lambda i: _draw(rng), visible, 8,
                            key=lambda c: canonical((c["program"], c["in_dims"])))
        if set().union(*(_kinds(c, expect(c)) for c in drawn)) >= ALL_KINDS:
            return drawn


# ---- feedback ------------------------------------------------------------------------------------

def _rule_hint(case, step, known) -> str:
    out, op, *operands = step
    names = [v for v in operands if isinstance(v, str)]
    ins = [known[v] for v in names]
    shapes = example_shapes(case["program"])
    held = ", ".join(f"{v} at {known[v]}" if known[v] is not None else f"{v} unmapped"
                     for v in names)
    if all(d is None for d in ins):
        return (f"no operand of {out} ({held}) carries the batch, so neither does its result: "
                f"a primitive whose inputs are all unmapped gives an unmapped result.")
    if op == "sin":
        return (f"{out} = sin({held}): an elementwise rule binds the primitive on the batched "
                f"value as it arrived.")
    if op == "mul":
        agree = None not in ins and len(set(ins)) == 1
        return (f"{out} = mul({held}): " + (
            "both operands carry the batch at the same axis, so the broadcasting rule binds "
            "them as they are." if agree else
            "the operands do not agree (an operand is unmapped, or the batch axes differ), so "
            "the broadcasting rule first brings every operand to one layout; read "
            "broadcast_batcher's second branch."))
    if op == "sum":
        return (f"{out} = sum({held}, axis={operands[1]}): the reduction removes the example's "
                f"axis {operands[1]} from the batched operand; count what is left in front of the "
                f"batch axis.")
    if op == "concat":
        return (f"{out} = concatenate({held}): read concatenate's batching rule: where does it "
                f"put the batch axis of every operand, and of the result?")
    a, b = (shapes[v] for v in names)
    return (f"{out} = {names[0]} @ {names[1]} ({held}; per example {a} @ {b}): dot_general "
            f"writes its result as batch dimensions first, then the left operand's free axes, "
            f"then the right operand's; find where the batch axis is among those.")


def compare(case, expected, got) -> Finding | None:
    where = describe(case)
    steps = case["program"]["steps"]
    if not isinstance(got, dict) or set(got) != set(expected):
        missing = sorted(set(expected) - set(got)) if isinstance(got, dict) else []
        return Finding(where, f"a dict with one entry per step: {sorted(expected)}",
                       repr(got)[:200], "return {step name: batch dim (an int) or None} for every "
                       "step of the program" + (f"; missing {missing}" if missing else "") + ".")
    known = dict(case["in_dims"])
    for step in steps:
        name = step[0]
        if got[name] != expected[name]:
            return Finding(where, f"{name}: {expected[name]}", f"{name}: {got[name]}",
                           _rule_hint(case, step, known))
        known[name] = expected[name]
    return None


def failure_hint(case, failure) -> str:
    if failure.stage == "answer":
        return "return a dict {step name: batch dim (an int) or None}."
    return "where_it_lands(program, in_dims) should return {step name: batch dim or None}."


# vmap itself would answer (as would out_axes=infer, batching a jaxpr by the module's own entry
# points, or running each equation through JAX's rule from its tables): the answer reasons from
# the rules instead. Strict: whoever calls them while the answer
# is observed, the answer had JAX batch the program. A table named in ``calls`` watches every
# rule it holds (red team, round 9: each equation run through its rule by a small interpreter).
_BATCHING = "jax._src.interpreters.batching"
# A delegating answer, which the judge must send to a human (tests/lessons/test_contract.py): a
# real threat: it earns full marks where nothing reads it.
DELEGATING = Delegating("""\
import jax
def where_it_lands(program, in_dims):
    seen = {}
    def probe(*xs):
        values = dict(zip([n for n, _ in program["inputs"]], xs))
        for out, op, *args in program["steps"]:
            fn, n = L2.OPS[op]
            values[out] = fn(*(values[a] for a in args[:n]), *args[n:])
            seen[out] = getattr(values[out], "batch_dim", None)
        return 0.0
    structs = [jax.ShapeDtypeStruct(s if in_dims[n] is None else
                                    s[:in_dims[n]] + (7,) + s[in_dims[n]:], jnp.float32)
               for n, s in program["inputs"]]
    jax.eval_shape(jax.vmap(probe, in_axes=tuple(in_dims[n] for n, _ in program["inputs"])),
                   *structs)
    return {k: (None if v is None else int(v)) for k, v in seen.items()}
""")

WHERE_IT_LANDS = Exercise(
    "l2_where_it_lands", 5, ("where_it_lands",), observe.where_it_lands, cases, expect, compare,
    name="check_where_it_lands", failure_hint=failure_hint,
    delegation=Delegation(
        examples=(DELEGATING,),
        names=("batching", "BatchTrace", "batch_jaxpr", "batch_jaxpr2", "_batch_outer",
               "_batch_inner", "_batch_jaxpr_outer", "_batch_jaxpr_inner", *core.TABLE_NAMES),
        calls=("jax._src.api:vmap", *(f"{_BATCHING}:{n}" for n in (
            "_batch_outer", "_batch_inner", "batch", "batch_jaxpr", "batch_jaxpr2",
            "batch_jaxpr_axes", "_batch_jaxpr_outer", "_batch_jaxpr_inner",
            *core.TABLE_NAMES))),
        strict=True))
check_where_it_lands = WHERE_IT_LANDS.checker()

__all__ = ["WHERE_IT_LANDS", "check_where_it_lands", "visible_programs"]
