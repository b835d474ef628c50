"""Lesson 3's answers: the right ones are the exercise notebook's own solution cells (read from
the source notebook, so there is one copy of each), and the wrong ones are the mistakes and
pattern-matching students each exercise must give nothing to, named after what they do."""
import math

import jax
import jax.numpy as jnp
from jax import lax

from grader.lessons import l3_batching_whole_programs as L3
from tests.fixtures.solutions import solved

_RIGHT = solved("03-batching-whole-programs", jax=jax, jnp=jnp, lax=lax, math=math, L3=L3)
cond_plan, scan_plan = _RIGHT["cond_plan"], _RIGHT["scan_plan"]
while_plan, run_batched = _RIGHT["while_plan"], _RIGHT["run_batched"]


def lookup(visible, answer_of, fallback):
    """The pattern-matching student: the answers of the visible cases, learnt by heart."""
    table = {repr(sorted(c.items())): answer_of(c) for c in visible}
    return lambda spec: table.get(repr(sorted(spec.items())), fallback(spec))


# ---- wrong: cond ---------------------------------------------------------------------------------

def cond_always_kept(spec):
    """Believes vmap keeps every cond."""
    return {**cond_plan(spec), "kept": True, "widened": []} if spec["pred"] else cond_plan(spec)


def cond_size_one(spec):
    """Believes unbatched operands only ever get a size-1 axis (lesson 2's broadcasting rule)."""
    return {**cond_plan(spec), "widened": []}


def cond_all_outputs_batched(spec):
    """Believes every output of a batched program is batched."""
    return {**cond_plan(spec), "out_batched": [True] * len(spec["true"])}


def cond_rule_of_thumb(spec):
    """Kept unless the predicate is batched, nothing widened, outputs batched if anything is."""
    return {"kept": not spec["pred"], "widened": [],
            "out_batched": [spec["pred"] or any(spec["operands"])] * len(spec["true"])}


def cond_one_branch(spec):
    """Reads only the true branch to decide which outputs are batched."""
    plan = cond_plan(spec)
    if not spec["pred"]:
        plan["out_batched"] = [any(spec["operands"][j] for j in t) for t in spec["true"]]
    return plan


# ---- wrong: scan ---------------------------------------------------------------------------------

def scan_one_pass(spec):
    """Batches a carry only when it reads a batched input directly: no fixpoint."""
    plan = scan_plan(spec)
    direct = [c["init"] or (c["x"] and spec["xs"]) or (c["k"] and spec["const"]) or
              any(spec["carries"][j]["init"] for j in c["reads"]) for c in spec["carries"]]
    broadcast = [i for i, c in enumerate(spec["carries"]) if direct[i] and not c["init"]]
    return {**plan, "carry": direct, "broadcast": broadcast}


def scan_no_broadcast(spec):
    """Believes an unbatched initial carry gets a size-1 axis, never a broadcast."""
    return {**scan_plan(spec), "broadcast": []}


# ---- wrong: while --------------------------------------------------------------------------------

def while_as_scan(spec):
    """Forgets that a batched predicate makes every carry batched."""
    plan = while_plan(spec)
    right = scan_plan({"xs": False, "const": spec["const"], "ys": [],
                       "carries": [{**c, "x": False} for c in spec["carries"]]})["carry"]
    return {**plan, "carry": [False] + right}


def while_every_example_runs_max(spec):
    """Believes no example is ever held: held is all zeros."""
    return {**while_plan(spec), "held": [0] * spec["B"]}


def while_trips_per_example(spec):
    """Believes the batched loop runs as often as the fastest example."""
    plan = while_plan(spec)
    own = spec["limits"] if spec["limit"] else spec["limits"] * spec["B"]
    return {**plan, "trips": min(own), "held": [0] * spec["B"]}


# ---- wrong: run_batched --------------------------------------------------------------------------

def always_vmap(f, xs, limit):
    return jax.vmap(f)(xs)


def always_map(f, xs, limit):
    return lax.map(f, xs)


def fixed_batch_size(f, xs, limit):
    """The batch size of the first visible case, learnt by heart."""
    return lax.map(f, xs, batch_size=min(xs.shape[0], 6))


def map_when_it_fits(f, xs, limit):
    """The right chunk, but lax.map even when the whole batch fits (batch_size = len(xs))."""
    b = max(1, min(xs.shape[0], limit // (xs.shape[1] ** 2 * 4)))
    return lax.map(f, xs, batch_size=b)


def python_chunks(f, xs, limit):
    """The right chunk, but written out chunk by chunk in a Python loop."""
    b = max(1, min(xs.shape[0], limit // (xs.shape[1] ** 2 * 4)))
    return jnp.concatenate([jax.vmap(f)(xs[i:i + b]) for i in range(0, xs.shape[0], b)])


def off_by_one_chunk(f, xs, limit):
    """One example fewer at a time than fit (a `<` where `<=` was meant)."""
    per = xs.shape[1] ** 2 * 4
    b = max(1, min(xs.shape[0], (limit - 1) // per))
    b = max(1, b - 1) if b * per == limit or b < xs.shape[0] else b
    return jax.vmap(f)(xs) if b == xs.shape[0] else lax.map(f, xs, batch_size=b)
