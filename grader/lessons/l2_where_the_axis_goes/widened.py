"""Exercise 2, ``widened(jaxpr, in_axes, size)``: a tool that reads a batched program and says
which equations widened a value that carries no batch to the full batch, and from which unmapped
inputs that value came.

A value *carries the batch* when it derives from a mapped input (or from a widened value); an
equation *widens* when none of its inputs carries the batch and one of its outputs has an axis of
the batch size. The broadcasting rule's size-1 axis is no widening (the batch size appears only
in the next equation's output, whose other input carries the batch); concatenate's, select_n's,
a scan carry's and vmap's own out_axes broadcast are. The expectation is this definition applied,
in trusted code, to the batched program's data flow (`widenings`).
"""
from __future__ import annotations

from ...exercise import Delegating, Delegation, Exercise, canonical, describe, fresh_cases
from ...feedback import Finding
from .kit import observe

# ---- the definition, on a program's plain data flow (kit.observe.graph) -------------------------


def widenings(graph: dict, levels, sizes, recursive: bool = False) -> list:
    """``[(equation path, level, unmapped input positions)]`` of every widening, in order.

    ``levels`` holds each vmap level's in_axes (outermost first) and ``sizes`` its batch size:
    argument i carries level l when ``levels[l][i]`` is not None. An equation widens at level l
    when no input carries l and an output has an axis of that level's size. A path is the
    equation's index (inside a jit's program too, with ``recursive``)."""
    state = {v: (frozenset(l for l, axes in enumerate(levels) if axes[i] is not None),  # noqa: E741  (level l)
                 frozenset([i]))
             for i, v in enumerate(graph["invars"])}
    found: list = []
    _walk(graph, state, levels, sizes, found, (), recursive)
    return found


def _walk(graph, state, levels, sizes, found, path, recursive) -> None:
    for k, (_, ins, outs, sub) in enumerate(graph["eqns"]):
        if sub is not None and recursive:
            _walk(sub, state, levels, sizes, found, path + (k,), recursive)
            for inner, outer in sub.get("links", []):
                state[outer] = state.get(inner, (frozenset(), frozenset()))
            continue
        held = [state.get(v, (frozenset(), frozenset())) for v in ins if v != -1]
        carried = frozenset().union(*(c for c, _ in held))
        deps = frozenset().union(*(d for _, d in held))
        for level, size in enumerate(sizes):
            if level not in carried and any(size in tuple(shape) for _, shape in outs):
                unmapped = tuple(sorted(i for i in deps if levels[level][i] is None))
                found.append((path + (k,), level, unmapped))
                carried = carried | {level}             # from here on it carries that level
        for o, _ in outs:
            state[o] = (carried, deps)


def expect(case) -> list:
    in_axes = tuple(case["in_dims"][n] for n, _ in case["program"]["inputs"])
    graph = observe.graph(observe.batched_program(case))
    return sorted([path[0], list(deps)] for path, _, deps in
                  widenings(graph, [in_axes], [case["size"]]))


# ---- drawing programs from motifs ----------------------------------------------------------------

# Each motif adds steps to a program of batched inputs x, y and unmapped inputs u, w, all of one
# per-example shape; what it shows is in its name.
MOTIFS = {
    "concat widens": lambda u, x, t: [(t, "concat", u, x, 0)],
    "select widens": lambda u, x, t: [(t, "select", x, u, x)],
    "scan carry widens": lambda u, x, t: [(t, "accumulate", u, x)],
    "cond widens": lambda u, x, t: [(t, "cond", x, u)],
    "size-1 only": lambda u, x, t: [(t, "mul", u, x)],
    "batched spread": lambda u, x, t: [(t, "spread", x, 3)],
    "unmapped spread": lambda u, x, t: [(t + "a", "spread", u, 2), (t + "b", "sum", t + "a", -1),
                                        (t, "mul", t + "b", x)],
    "unmapped output": lambda u, x, t: [(t, "sin", u)],
}
WIDENS = ("concat widens", "select widens", "scan carry widens", "cond widens", "unmapped output")
DECOYS = ("size-1 only", "batched spread", "unmapped spread")


def _program(rng, motifs, shape) -> dict:
    steps, outputs = [], []
    for k, motif in enumerate(motifs):
        u, x = str(rng.choice(["u", "w"])), str(rng.choice(["x", "y"]))
        if rng.random() < 0.5 and motif not in ("unmapped spread", "unmapped output"):
            steps.append((f"{u}{k}", "sin", u))        # widened only after a step of its own
            u = f"{u}{k}"
        steps += MOTIFS[motif](u, x, f"t{k}")
        outputs.append(f"t{k}")
    return {"inputs": tuple((n, shape) for n in ("u", "x", "w", "y")), "steps": tuple(steps),
            "outputs": tuple(outputs)}


def _draw(rng) -> dict:
    widens = [str(m) for m in rng.choice(WIDENS, size=int(rng.integers(1, 3)), replace=False)]
    decoys = [str(m) for m in rng.choice(DECOYS, size=int(rng.integers(1, 3)), replace=False)]
    motifs = [widens[0], *decoys, *widens[1:]]
    shape = tuple(int(d) for d in rng.choice([2, 3, 4, 5], size=int(rng.integers(1, 3)),
                                             replace=False))
    in_dims = {"u": None, "w": None, "x": int(rng.integers(0, len(shape) + 1)),
               "y": int(rng.integers(0, len(shape) + 1))}
    return {"program": _program(rng, motifs, shape), "in_dims": in_dims,
            "size": int(rng.integers(6, 10)), "_motifs": tuple(motifs)}


VISIBLE = (
    {"program": {"inputs": (("u", (3,)), ("x", (3,))),
                 "steps": (("t0", "concat", "u", "x", 0), ("t1", "mul", "u", "x")),
                 "outputs": ("t0", "t1")},
     "in_dims": {"u": None, "x": 0}, "size": 7},
    {"program": {"inputs": (("u", (2, 3)), ("x", (2, 3)), ("w", (2, 3))),
                 "steps": (("s", "sin", "w"), ("t0", "select", "x", "s", "x"),
                           ("t1", "spread", "x", 4)),
                 "outputs": ("t0", "t1")},
     "in_dims": {"u": None, "x": 1, "w": None}, "size": 7},
)


def visible_widened() -> list[dict]:
    """The visible cases, as the exercise shows them."""
    return [dict(c) for c in VISIBLE]


def cases(rng, hidden: bool) -> list[dict]:
    visible = [dict(c) for c in VISIBLE]
    if not hidden:
        return visible
    while True:   # every kind of widening and every decoy, somewhere in the set
        drawn = fresh_cases(lambda i: _draw(rng), visible, 6,
                            key=lambda c: canonical((c["program"], c["in_dims"])))
        if set(m for c in drawn for m in c["_motifs"]) >= set(WIDENS) | set(DECOYS):
            return drawn


# ---- feedback ------------------------------------------------------------------------------------

def _eqn(case, k) -> tuple:
    graph = observe.graph(observe.batched_program(case))
    prim, ins, outs, _ = graph["eqns"][k]
    return prim, [s for _, s in outs]


def _hint(case, expected, got) -> str:
    want, mine = dict((k, v) for k, v in expected), dict((k, v) for k, v in got)
    size = case["size"]
    extra = sorted(set(mine) - set(want))
    if extra:
        k = extra[0]
        prim, shapes = _eqn(case, k)
        if not any(size in s for s in shapes):
            return (f"equation {k} ({prim}, output {shapes[0]}) has no axis of the batch size "
                    f"{size}: nothing was widened there. A size-1 axis is how the broadcasting "
                    f"rule lets an unmapped value meet the batch without a copy.")
        return (f"equation {k} ({prim}, output {shapes[0]}) takes a value that already carries "
                f"the batch: it widens nothing that was unmapped. Follow which values carry the "
                f"batch through the program, from the mapped inputs on.")
    missing = sorted(set(want) - set(mine))
    if missing:
        prim, shapes = _eqn(case, missing[0])
        return (f"your tool missed a widening: a {prim} equation takes only values that carry no "
                f"batch and gives one of shape {shapes[0]}, with the batch size {size}.")
    k = next(k for k in sorted(want) if want[k] != mine[k])
    return (f"equation {k} widens a value; you traced it back to the inputs {mine[k]}: follow its "
            f"operands back through every equation before it, to the unmapped inputs they were "
            f"computed from.")


def compare(case, expected, got) -> Finding | None:
    expected = [[int(k), list(v)] for k, v in expected]
    if [[int(k), list(v)] for k, v in got] == expected:
        return None
    return Finding(describe(case), str({k: tuple(v) for k, v in expected}),
                   str({k: tuple(v) for k, v in got}), _hint(case, expected, got))


def failure_hint(case, failure) -> str:
    if failure.stage == "answer":
        return "return a dict {equation index: tuple of unmapped input positions}."
    if failure.kind in ("TypeError", "AttributeError") and "Literal" in failure.error:
        return ("an equation's input may be a literal (a constant written into the program, like "
                "2.0), not a variable: it carries no batch and comes from no input.")
    return "widened(jaxpr, in_axes, size) should return {equation index: tuple of input positions}."


# A delegating answer, which the judge must send to a human (tests/lessons/test_contract.py): a
# real threat: it earns full marks where nothing reads it.
DELEGATING = Delegating("""\
from grader.lessons.l2_where_the_axis_goes.widened import widenings as _widenings
def widened(jaxpr, in_axes, size):
    graph = L2.kit.observe.graph(jaxpr)
    return {path[0]: deps for path, _, deps in _widenings(graph, [in_axes], [size])}
""")

WIDENED = Exercise("l2_widened", 4, ("widened",), observe.widened, cases, expect, compare,
                   name="check_widened", failure_hint=failure_hint,
                   delegation=Delegation(examples=(DELEGATING,)))
check_widened = WIDENED.checker()

__all__ = ["WIDENED", "check_widened", "visible_widened"]
