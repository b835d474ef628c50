"""Exercise 2: ``choose_axes(layout) -> (in_axes, out_axes)``: the values of a loop over the
examples, with no transpose in the batched program and no output widened to the batch size."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ... import core
from ...core.jaxprs import Eqn
from ...exercise import Exercise, canonical, describe, fresh_cases
from ...feedback import Finding
from ...wire import pack, unpack
from .kit import FUNCTIONS, observe
from .kit.observe import canon

# What each layout function computes for one example, in NumPy: the loop vmap must reproduce.
REFERENCES = {
    "scale": lambda x: np.sin(x) * 2.0,
    "mul": lambda x, y: x * y + x,
    "mv": lambda A, v: A @ v,
    "colsum": lambda x: x.sum(axis=0),
    "pair": lambda x, y: (np.sin(y), x * 2.0),
}


def _example_dims(rng, fn) -> tuple[tuple[int, ...], ...]:
    """Per-example shapes of the arguments of ``fn`` (sizes 2..5; the batch is 6..9)."""
    d = [int(v) for v in rng.permutation([2, 3, 4, 5])]
    if fn == "scale":
        return (tuple(d[:int(rng.integers(1, 4))]),)
    if fn == "mul":
        shape = tuple(d[:int(rng.integers(1, 3))])
        return (shape, shape)
    if fn == "mv":
        return ((d[0], d[1]), (d[1],))
    if fn == "colsum":
        return (tuple(d[:int(rng.integers(2, 4))]),)
    return ((d[0],), (d[1],))                    # pair


def _in_axes(layout) -> tuple:
    return tuple(a["batch"] for a in layout["args"])


def natural(fn, in_axes, args) -> tuple:
    """Where the primitives leave each output's batch axis: read off the output tracers."""
    seen = []

    def spy(*xs):
        out = fn(*xs)
        seen[:] = [core.view(o).batch_dim for o in jax.tree_util.tree_leaves(out)]
        return out

    jax.eval_shape(jax.vmap(spy, in_axes=in_axes), *args)
    return tuple(seen)


def _spec(values, fn_name):
    """One spec per output as vmap takes it: a tuple for the two-output function."""
    return tuple(values) if fn_name == "pair" else values[0]


def _draw(rng) -> dict | None:
    fn = str(rng.choice(list(FUNCTIONS)))
    dims = _example_dims(rng, fn)
    batches = [None if rng.random() < 0.3 else int(rng.integers(0, len(d) + 1)) for d in dims]
    if all(b is None for b in batches):
        return None
    batches = [b - (len(d) + 1) if b is not None and rng.random() < 0.3 else b
               for b, d in zip(batches, dims)]
    case = {"layout": {"fn": fn, "args": [{"rank": len(d) + (b is not None), "batch": b}
                                          for d, b in zip(dims, batches)], "out": "free"},
            "dims": dims, "B": int(rng.integers(6, 10)), "_seed": int(rng.integers(0, 2**31))}
    args = observe.layout_args(case)
    where = natural(FUNCTIONS[fn], tuple(batches), args)
    g = jax.vmap(FUNCTIONS[fn], in_axes=tuple(batches), out_axes=_spec(where, fn))
    if "transpose" in core.primitives(core.summarize_fn(g, *args, recursive=True)):
        return None                               # no spec avoids a move: not a fair question
    if rng.random() < 0.4:                        # a required position instead of a free one
        out_ranks = [len(np.shape(o)) for o in jax.eval_shape(
            lambda *a: jax.tree_util.tree_leaves(FUNCTIONS[fn](*a)),
            *[jnp.ones(d) for d in dims])]
        req = [n if n is None or rng.random() < 0.6 else n - (r + 1)
               for n, r in zip(where, out_ranks)]
        case["layout"]["out"] = _spec(req, fn)
    return case


VISIBLE = (
    ("scale", ((3, 4),), (1,), "free"),
    ("mul", ((2, 3), (2, 3)), (0, None), 0),
    ("mv", ((2, 3), (3,)), (None, 0), "free"),
    ("mv", ((2, 3), (3,)), (-1, None), "free"),
    ("colsum", ((4, 3, 2),), (2,), "free"),
    ("pair", ((3,), (4,)), (0, None), "free"),
)


def visible_cases() -> list[dict]:
    return [{"layout": {"fn": fn, "args": [{"rank": len(d) + (b is not None), "batch": b}
                                           for d, b in zip(dims, batches)], "out": out},
             "dims": dims, "B": 7, "_seed": 100 + i}
            for i, (fn, dims, batches, out) in enumerate(VISIBLE)]


def visible_layouts() -> list[dict]:
    """The visible cases, as the exercise shows them."""
    return visible_cases()


def cases(rng, hidden: bool) -> list[dict]:
    if not hidden:
        return visible_cases()
    return fresh_cases(lambda i: _draw(rng), visible_cases(), 10,
                       key=lambda c: canonical((c["layout"], c["dims"])))


def expect(case) -> dict:
    """Each output stacked over the examples with the batch axis in front (a NumPy loop)."""
    fn = case["layout"]["fn"]
    args = observe.layout_args(case)
    batches = _in_axes(case["layout"])
    per_example = []
    for b in range(case["B"]):
        xs = [a if ax is None else np.take(a, b, axis=ax) for a, ax in zip(args, batches)]
        out = REFERENCES[fn](*xs)
        per_example.append(out if isinstance(out, tuple) else (out,))
    outs = [np.stack([np.asarray(o[i], dtype=np.float32) for o in per_example])
            for i in range(len(per_example[0]))]
    where = natural(FUNCTIONS[fn], batches, [jax.device_put(a) for a in args])
    return {"outs": [pack(o) for o in outs], "natural": where}


def _close(a, b, tol=1e-4) -> bool:
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=tol, atol=tol))


def _per_output(spec, n) -> tuple:
    """A student's out_axes as one entry per output (vmap broadcasts a single int or None)."""
    if isinstance(spec, tuple):
        return spec if len(spec) == n else (spec + (None,) * n)[:n]
    return (spec,) * n


def _in_axes_hint(case, got) -> str | None:
    """What the first in_axes entry that misdescribes the layout's data got wrong, or None."""
    args, in_axes = case["layout"]["args"], got["in_axes"]
    spec = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args)
    refused = "vmap refused the spec: " if "refused" in got else ""
    data = "in_axes describes the data you hand to vmap, not where you would like the batch to be"
    if len(spec) != len(args):
        return (f"{refused}the layout has {len(args)} argument(s) and your in_axes has "
                f"{len(spec)} entries: {data}, one entry per argument.")
    for i, (s, a) in enumerate(zip(spec, args)):
        rank, batch = a["rank"], a["batch"]
        if s is not None and not isinstance(s, int):
            return f"{refused}argument {i}'s in_axes entry {s!r} is not an int or None: {data}."
        if s is not None and not -rank <= s < rank:
            held = "does not batch it" if batch is None else f"puts its batch axis at {batch}"
            return (f"{refused}your in_axes gives argument {i}, of rank {rank}, the axis {s}, "
                    f"which it does not have: {data}, and the layout {held}.")
        if canon(s, rank) == canon(batch, rank):
            continue
        if batch is None:
            return (f"{refused}argument {i} is not batched in the layout, and your in_axes maps "
                    f"it at {s}: {data}, so give it None.")
        if s is None:
            return (f"{refused}argument {i} is batched at {batch} in the layout, and your in_axes "
                    f"says None: {data}.")
        negative = "; a negative entry counts from the right of that argument" if batch < 0 else ""
        return (f"{refused}argument {i}, of rank {rank}, has its batch axis at {batch}, and your "
                f"in_axes says {s}: {data}{negative}.")
    return None


def _refused_hint(case, exp, got) -> str:
    """vmap refused a spec whose in_axes are right: name the out_axes entry it refused."""
    natural, out_axes = exp["natural"], got["out_axes"]
    ranks = [len(p["shape"]) for p in exp["outs"]]
    if isinstance(out_axes, tuple) and len(out_axes) != len(natural):
        return (f"vmap refused the spec: {case['layout']['fn']} has {len(natural)} output(s) and "
                f"your out_axes has {len(out_axes)} entries.")
    for i, (o, n) in enumerate(zip(_per_output(out_axes, len(natural)), natural)):
        if o is None and n is not None:
            return (f"vmap refused the spec: output {i} depends on a batched input (the "
                    f"primitives leave its batch at axis {n}), and out_axes=None is only allowed "
                    f"for an output that does not depend on a batched input.")
        if isinstance(o, int) and not -ranks[i] <= o < ranks[i]:
            return (f"vmap refused the spec: output {i} has {ranks[i]} axes with its batch, and "
                    f"your out_axes gives it axis {o}, which it does not have.")
    return f"vmap refused the spec ({got['refused']}): check each out_axes entry against its output."


def _where(case) -> str:
    return describe({"layout": case["layout"], "dims": case["dims"], "B": case["B"]})


def _values_finding(case, exp, got, where, spec_text) -> Finding | None:
    layout, outs = case["layout"], [unpack(p) for p in exp["outs"]]
    n = len(outs)
    student_out = _per_output(got["out_axes"], n)
    for i, (ref, packed) in enumerate(zip(outs, got["outs"])):
        mine = unpack(packed)
        o = student_out[i] if i < len(student_out) else None
        if layout["out"] != "free":
            req = _per_output(layout["out"], n)[i]
            want = ref[0] if req is None else np.moveaxis(ref, 0, canon(req, ref.ndim))
            if not _close(mine, want):
                return Finding(where, f"output {i} with its batch axis at {req}",
                               f"{spec_text} -> shape {mine.shape}",
                               f"the layout's 'out' asks for output {i}'s batch at {req}, and "
                               f"your out_axes puts it at {o}: out_axes is where the caller "
                               f"wants the batch axis, and the layout's 'out' says where that is.")
            continue
        batched = (np.moveaxis(mine, canon(o, mine.ndim), 0) if o is not None and mine.ndim
                   else None)
        if o is None:
            if not all(_close(mine, r) for r in ref):
                return Finding(where, f"output {i} batched (it depends on a batched input)",
                               f"{spec_text} -> unbatched output", "")
        elif batched is None or not _close(batched, ref):
            return Finding(where, f"output {i}: the per-example results, stacked",
                           f"{spec_text} -> different values (shape {mine.shape})",
                           "Check in_axes against the layout: the values of the loop must come "
                           "back.")
    return None


def compare(case, exp, got) -> Finding | None:
    where = _where(case)
    spec_text = f"in_axes={got['in_axes']}, out_axes={got['out_axes']}"
    hint = _in_axes_hint(case, got)
    if hint:
        batches = tuple(a["batch"] for a in case["layout"]["args"])
        return Finding(where, f"in_axes that say where each argument's batch axis IS: {batches}",
                       spec_text, hint)
    finding = _values_finding(case, exp, got, where, spec_text)
    if finding:
        return finding
    eqns = [Eqn.from_plain(e) for e in got["eqns"]]
    prims, widened = core.primitives(eqns), core.widening_broadcasts(eqns)
    natural = exp["natural"]
    mine = _per_output(got["out_axes"], len(natural))
    ranks = [len(p["shape"]) for p in exp["outs"]]
    if "transpose" in prims:
        leave = natural[0] if len(natural) == 1 else natural
        i = next((k for k, (o, nat) in enumerate(zip(mine, natural))
                  if nat is not None and canon(o, ranks[k]) != nat), 0)
        return Finding(where, f"no transpose (the primitives leave the batch at {leave})",
                       f"{spec_text} -> {prims}",
                       f"the primitives leave output {i}'s batch at axis {natural[i]}, and your "
                       f"out_axes asks for it at {mine[i]}, so vmap's matchaxis moves it with a "
                       f"transpose. Follow the batch axis through the function and ask for "
                       f"{natural[i]}.")
    if widened:
        i = next((k for k, (o, nat) in enumerate(zip(mine, natural))
                  if nat is None and o is not None), 0)
        return Finding(where, "no output widened to the batch size",
                       f"{spec_text} -> broadcast_in_dim {widened[0][0]} -> {widened[0][1]}",
                       f"output {i} never depended on a batched input, and your out_axes gave it "
                       f"a batch axis at {mine[i]}, so vmap broadcast it {widened[0][0]} -> "
                       f"{widened[0][1]} (matchaxis's broadcast case); out_axes=None keeps it "
                       f"unmapped.")
    return None


def failure_hint(case, failure) -> str:
    if failure.stage == "answer":
        return "Return exactly two things: in_axes, out_axes (ints, None and tuples of them)."
    if failure.stage == "vmap" and isinstance(failure.detail, dict):
        # The spec the answer returned, which vmap refused: name the entry.
        got = {**failure.detail, "refused": failure.error}
        return _in_axes_hint(case, got) or _refused_hint(case, expect(case), got)
    return "choose_axes(layout) should return (in_axes, out_axes)."


CHOOSE_AXES = Exercise("l2_choose_axes", 3, ("choose_axes",), observe.choose_axes, cases, expect,
                       compare, name="check_choose_axes", failure_hint=failure_hint)
check_choose_axes = CHOOSE_AXES.checker()

__all__ = ["CHOOSE_AXES", "check_choose_axes", "natural", "visible_layouts"]
