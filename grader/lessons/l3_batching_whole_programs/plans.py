"""What the three prediction exercises share: their cases are plain-data programs, their answers
plain data, and JAX's own batched program (`programs`) is the expectation. An answer that asks JAX
(vmap, make_jaxpr, a batching rule) has looked the answer up: the judge watches for that."""
from __future__ import annotations

from ...exercise import Delegation, describe
from ...feedback import Finding

# Tracing the spec under vmap is the lookup these exercises grade against.
NO_JAX = Delegation(
    names=("cond_plan", "scan_plan", "while_plan", "cond_program", "scan_program",
           "while_program"),
    calls=("jax._src.interpreters.batching:batch", "jax._src.interpreters.batching:batch_jaxpr",
           "jax._src.interpreters.batching:batch_jaxpr_axes",
           "jax._src.interpreters.partial_eval:trace_to_jaxpr_dynamic"),
    strict=True)


def where(case) -> str:
    return describe({k: v for k, v in case.items() if k != "B"}) + f", batch of {case['B']}"


def batched_closure(carries, batched_inputs) -> list[bool]:
    """Which carries end batched: a start that is batched, or an update that reads a batched
    input or a carry already batched, repeated until nothing changes (the rules' fixpoint)."""
    on = [bool(c["init"]) for c in carries]
    changed = True
    while changed:
        changed = False
        for i, c in enumerate(carries):
            if not on[i] and (any(on[j] for j in c["reads"]) or
                              any(c.get(key) and batched for key, batched in batched_inputs.items())):
                on[i] = changed = True
    return on


def chain(carries, i, batched_inputs) -> str:
    """How carry ``i`` becomes batched, as the student can follow it: c_i <- c_j <- ... <- input."""
    on = batched_closure(carries, batched_inputs)
    path, seen = [f"c{i}"], {i}
    while True:
        c = carries[i]
        if c["init"]:
            return " <- ".join(path) + " (batched from the start)"
        direct = [k for k, b in batched_inputs.items() if c.get(k) and b]
        if direct:
            return " <- ".join(path + [direct[0]])
        nxt = next((j for j in c["reads"] if on[j] and j not in seen), None)
        if nxt is None:
            return " <- ".join(path)
        path.append(f"c{nxt}")
        seen.add(nxt)
        i = nxt


def shaped(answer, keys: dict) -> str | None:
    """What is wrong with the answer's form (keys and list lengths), or None."""
    if not isinstance(answer, dict):
        return f"a dict with the keys {sorted(keys)}"
    for key, kind in keys.items():
        if key not in answer:
            return f"a dict with the keys {sorted(keys)} (no {key!r} in yours)"
        value = answer[key]
        if kind == "bool" and not isinstance(value, bool):
            return f"{key!r}: True or False"
        if kind == "int" and (isinstance(value, bool) or not isinstance(value, int)):
            return f"{key!r}: an int"
        if isinstance(kind, tuple):
            item, n = kind
            if not isinstance(value, list) or (n is not None and len(value) != n):
                return f"{key!r}: a list" + (f" of {n}" if n is not None else "")
            if not all(isinstance(v, bool) if item == "bool" else
                       isinstance(v, int) and not isinstance(v, bool) for v in value):
                return f"{key!r}: a list of {'True/False' if item == 'bool' else 'ints'}"
    return None


def form_finding(case, got, keys) -> Finding | None:
    problem = shaped(got["answer"], keys)
    if problem is None:
        return None
    return Finding(where(case), problem, repr(got["answer"])[:200],
                   "Return the prediction in the form the exercise shows.")
