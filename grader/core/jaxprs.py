"""Jaxprs as plain data: equations with primitive names, shapes and whitelisted parameters.

Checks compare these structures, never printed text, so they hold on every release: primitives
go by their newest names (``_jax.primitive_name``), parameters become plain ints and tuples, and
sharding or other objects that print differently between releases are left out.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

import jax
import numpy as np

from . import _jax

# Parameters that carry axis bookkeeping, the part of a batched jaxpr a lesson talks about.
PARAMS = ("axes", "dimension_numbers", "permutation", "broadcast_dimensions", "shape",
          "new_sizes", "dimensions", "axis", "start_indices", "limit_indices", "strides")


@dataclass(frozen=True)
class Eqn:
    """One equation: primitive, input and output shapes, plain parameters, sub-jaxpr depth."""
    primitive: str
    in_shapes: tuple[tuple[int, ...], ...]
    out_shapes: tuple[tuple[int, ...], ...]
    params: tuple[tuple[str, object], ...] = ()
    depth: int = 0

    def param(self, name, default=None):
        return dict(self.params).get(name, default)

    def __str__(self) -> str:
        ins = " ".join(_fmt_shape(s) for s in self.in_shapes)
        outs = " ".join(_fmt_shape(s) for s in self.out_shapes)
        ps = "".join(f" {k}={v}" for k, v in self.params)
        return f"{'  ' * self.depth}{self.primitive}{ps} : {ins} -> {outs}"

    def to_dict(self) -> dict:
        return asdict(self)

    def to_plain(self) -> tuple:
        """The equation as nested tuples (what crosses from the judge's child)."""
        return (self.primitive, self.in_shapes, self.out_shapes, self.params, self.depth)

    @classmethod
    def from_plain(cls, data) -> Eqn:
        """Rebuild an equation from `to_plain`'s tuple; TypeError/ValueError on anything else."""
        primitive, ins, outs, params, depth = data
        shapes = lambda ss: tuple(tuple(int(d) for d in s) for s in ss)  # noqa: E731
        return cls(str(primitive), shapes(ins), shapes(outs),
                   tuple((str(k), v) for k, v in params), int(depth))


def _fmt_shape(shape) -> str:
    return str(tuple(shape)).replace(" ", "")


def plain(value):
    """``value`` as nested tuples of Python ints, or ``None`` if it is not that kind of thing."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (tuple, list)):
        items = [plain(v) for v in value]
        return None if any(i is None and v is not None for i, v in zip(items, value)) else tuple(items)
    return None


def _shape(atom) -> tuple[int, ...]:
    return tuple(int(d) for d in getattr(atom.aval, "shape", ()))


def _params(eqn) -> tuple[tuple[str, object], ...]:
    out = []
    for name in PARAMS:
        if name in eqn.params:
            value = plain(eqn.params[name])
            if value is not None:
                out.append((name, value))
    return tuple(out)


def sub_jaxprs(params) -> list:
    """Jaxprs inside an equation's parameters, however nested (cond branches are a tuple)."""
    found = []

    def visit(v):
        if _jax.is_jaxpr(v):
            found.append(_jax.open_jaxpr(v))
        elif isinstance(v, (tuple, list)):
            for item in v:
                visit(item)
        elif isinstance(v, dict):
            for item in v.values():
                visit(item)

    for value in params.values():
        visit(value)
    return found


def summarize(jaxpr, recursive: bool = False, _depth: int = 0) -> tuple[Eqn, ...]:
    """The equations of ``jaxpr`` (whatever ``make_jaxpr`` returns); with ``recursive``, sub-jaxprs too."""
    eqns = []
    for eqn in _jax.open_jaxpr(jaxpr).eqns:
        name = _jax.primitive_name(eqn.primitive)
        eqns.append(Eqn(name, tuple(_shape(v) for v in eqn.invars),
                        tuple(_shape(v) for v in eqn.outvars), _params(eqn), _depth))
        if recursive:
            for sub in sub_jaxprs(eqn.params):
                eqns.extend(summarize(sub, True, _depth + 1))
    return tuple(eqns)


def summarize_fn(fn, *args, recursive: bool = False, **kwargs) -> tuple[Eqn, ...]:
    """Trace ``fn(*args)`` with ``jax.make_jaxpr`` and summarise it."""
    return summarize(jax.make_jaxpr(fn)(*args, **kwargs), recursive)


def primitives(eqns) -> list[str]:
    return [e.primitive for e in eqns]


# Primitives that only rearrange or relabel their operand's elements.
LAYOUT = frozenset({"reshape", "transpose", "broadcast_in_dim", "squeeze", "expand_dims",
                    "convert_element_type", "copy", "copy_p", "tile"})
# Equations that join copies of their operands (newer releases bind jnp.stack as ``stack``).
_JOINING = frozenset({"concatenate", "stack"})


def flow(jaxpr) -> dict:
    """The top-level equations as a data-flow graph of plain ints: ``{"eqns": [(primitive, input
    ids, output ids, layout_only)], "outs": output ids, "calls": [...]}``; a literal input is -1.
    An equation with sub-jaxprs (a jit) is ``layout_only`` when everything inside it is. ``calls``
    holds, per equation, the flow of the one program it calls (a jit, a custom_vmap_call, a
    custom_jvp_call: one sub-jaxpr whose outputs are the equation's), else None; ``n_in``: the
    number of inputs (ids 0 to n_in - 1)."""
    ids: dict = {}

    def num(v) -> int:
        return -1 if _jax.is_literal(v) else ids.setdefault(id(v), len(ids))

    j = _jax.open_jaxpr(jaxpr)
    for v in j.invars:
        num(v)
    eqns = [(_jax.primitive_name(e.primitive), tuple(num(v) for v in e.invars),
             tuple(num(v) for v in e.outvars), _layout_only(e)) for e in j.eqns]
    return {"eqns": eqns, "outs": tuple(num(v) for v in j.outvars),
            "calls": [_called(e) for e in j.eqns], "n_in": len(j.invars)}


def _called(eqn) -> dict | None:
    subs = sub_jaxprs(eqn.params)
    if len(subs) == 1 and len(subs[0].outvars) == len(eqn.outvars):
        return flow(subs[0])
    return None


def _layout_only(eqn) -> bool:
    subs = sub_jaxprs(eqn.params)
    if not subs:
        return _jax.primitive_name(eqn.primitive) in LAYOUT
    return all(_layout_only(e) for sub in subs for e in sub.eqns)


def computed_by(graph: dict, primitive: str) -> bool:
    """Whether every output of the program is an equation of ``primitive``'s output, moved or
    reshaped only (through equations that are layout only), or the output of a called program
    (a jit, a custom_vmap_call) that is itself computed so. An equation computed beside it and
    returned instead, with the primitive's own result dropped, is not."""
    return bool(graph["outs"]) and all(_source(graph, v, primitive) is True for v in graph["outs"])


def _source(graph: dict, var: int, primitive: str):
    """Follow ``var`` back through layout-only equations and into called programs: True where it
    reaches ``primitive``'s output, the position of the program's input it reaches (an int), or
    False where anything else computed it."""
    made, n_in = _producers(graph), graph.get("n_in", 0)
    while True:
        if var not in made:
            return var if 0 <= var < n_in else False
        name, ins, layout, call, position = made[var]
        if name == primitive:
            return True
        if call is not None and call["outs"]:
            inner = _source(call, call["outs"][position], primitive)
            if inner is True or inner is False:
                return inner
            var = ins[inner] if inner < len(ins) else -1      # through the call, to its operand
            continue
        real = [i for i in ins if i >= 0]
        if not (layout and len(real) == 1):
            return False
        var = real[0]


def fed_by_inputs(graph: dict, primitive: str) -> bool:
    """Whether every operand of every ``primitive`` equation (in called programs too) is the
    program's input data, only moved, broadcast, reshaped or copied on the way (a concatenate
    of copies, an add or a multiply with a constant that holds no data, which cannot carry a
    result computed from the data): the primitive does the work, on the data itself, rather
    than being handed a result computed before it."""
    return _fed(graph, primitive, lambda position: True)


# Equations that copy data when every operand but one holds none (``zeros + a``, ``ones * a``).
_COPYING = frozenset({"add", "sub", "mul", "max", "min"})


def _fed(graph: dict, primitive: str, outer) -> bool:
    for (name, ins, _, _), call in zip(graph["eqns"], _calls(graph)):
        if name == primitive and not all(_to_input(graph, v, outer) for v in ins):
            return False
        if call is not None:
            def inner(position, ins=ins):
                return position >= len(ins) or _to_input(graph, ins[position], outer)
            if not _fed(call, primitive, inner):
                return False
    return True


def _calls(graph: dict) -> list:
    """Each equation's called program (None where it calls none, or the flow predates calls)."""
    return graph.get("calls") or [None] * len(graph["eqns"])


def _producers(graph: dict) -> dict:
    """``{output id: (primitive, input ids, layout_only, called flow, output position)}``."""
    return {out: (name, ins, layout, call, outs.index(out))
            for (name, ins, outs, layout), call in zip(graph["eqns"], _calls(graph)) for out in outs}


def _to_input(graph: dict, var: int, outer, made=None, depth: int = 0) -> bool:
    """Whether ``var`` is ``graph``'s input data (inputs ``outer`` accepts) moved or copied only."""
    made = _producers(graph) if made is None else made
    if var < 0:
        return True                              # a literal: no data computed before
    if var not in made:
        return var < graph.get("n_in", 0) and outer(var)
    if depth > 200:
        return False
    name, ins, layout, call, position = made[var]
    if call is not None and call["outs"] and layout:
        reached = _source(call, call["outs"][position], None)
        if reached is True or reached is False:
            return False
        return reached >= len(ins) or _to_input(graph, ins[reached], outer, made, depth + 1)
    real = [i for i in ins if i >= 0]
    if layout and len(real) == 1:
        return _to_input(graph, real[0], outer, made, depth + 1)
    if name in _JOINING and real:
        return all(_to_input(graph, v, outer, made, depth + 1) for v in real)
    if name in _COPYING:
        data = [v for v in real if not _data_free(made, v)]
        return len(data) == 1 and _to_input(graph, data[0], outer, made, depth + 1)
    return False


def _data_free(made: dict, var: int, depth: int = 0) -> bool:
    """Whether ``var`` is computed from literals alone (a zeros or ones array), no input."""
    if var < 0:
        return True
    if var not in made or depth > 200:
        return False                             # an input: data
    _, ins, _, _, _ = made[var]
    return all(_data_free(made, v, depth + 1) for v in ins)


def widening_broadcasts(eqns) -> list[tuple]:
    """``(in_shape, out_shape)`` of every broadcast_in_dim whose output has more elements."""
    return [(e.in_shapes[0], e.out_shapes[0]) for e in eqns
            if e.primitive == "broadcast_in_dim"
            and int(np.prod(e.out_shapes[0])) > int(np.prod(e.in_shapes[0]))]


def signature(jaxpr) -> dict:
    """Input and output shapes of a (closed) jaxpr, for comparing whole programs."""
    j = _jax.open_jaxpr(jaxpr)
    return {"in": tuple(_shape(v) for v in j.invars), "out": tuple(_shape(v) for v in j.outvars)}
