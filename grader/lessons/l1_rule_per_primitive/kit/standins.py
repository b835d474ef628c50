"""Stand-ins for the batching module of every table layout, for exercise 3.

A stand-in is a plain namespace with the attributes a real ``batching`` module has in that layout:
real dicts where the layout has real tables, and objects shaped like JAX's compatibility proxies
where it has those. The check hands the student's ``which_table`` / ``table_sizes`` either the
installed module or one of these.
"""
from __future__ import annotations

import types

import jax.extend.core.primitives as _public_primitives

from ....core import _jax

# The names a batching-rule table has had in some release, in lookup order.
TABLE_NAMES = _jax.TABLE_NAMES


class WriteOnlyProxy:
    """Like JAX's write-only compatibility proxies (``history`` fact ``proxy_in``): they support
    assignment and deletion, and nothing else."""

    def __init__(self, fancy):
        self._fancy = fancy

    def __setitem__(self, prim, rule):
        self._fancy[prim] = rule

    def __delitem__(self, prim):
        del self._fancy[prim]


class ReadableProxy(WriteOnlyProxy):
    """Like the first collapsed layout's ``primitive_batchers``: readable with ``[]``, but ``in``
    raises KeyError(0) (Python falls back to iterating with ``[0]``) and ``len`` TypeError."""

    def __getitem__(self, prim):
        return self._fancy[prim]

    def __contains__(self, prim):
        raise KeyError(0)

    def __len__(self):
        raise TypeError("object of type 'PrimitiveBatchersProxy' has no len()")


class ReadThroughProxy(WriteOnlyProxy):
    """A proxy that answers everything by reading through to the real table: ``in``, ``[]``,
    ``len`` and iteration all work, and it is still not a table. No measured release has one; it
    is here so that a reader which relies on proxies raising, rather than on ``isinstance(table,
    dict)``, is seen to be wrong on every layout."""

    def __getitem__(self, prim):
        return self._fancy[prim]

    def __contains__(self, prim):
        return prim in self._fancy

    def __len__(self):
        return len(self._fancy)

    def __iter__(self):
        return iter(self._fancy)


def _rule_stub(*args, **params):
    raise NotImplementedError("a stand-in rule: never called")


def standin(case):
    """A module shaped like one batching layout, and its primitives: ``(module, {table: [prims]})``.

    ``case["layout"]`` is ``"installed"`` (the real module) or a layout name, and
    ``case["tables"]`` names the primitives of each real table of the stand-in."""
    if case["layout"] == "installed":
        return _jax.batching, {}
    objects = {t: [_jax.new_primitive(n) for n in names] for t, names in case["tables"].items()}
    dicts = {t: {p: _rule_stub for p in prims} for t, prims in objects.items()}
    attrs = dict(dicts, BatchTracer=_jax.BatchTracer, defvectorized=_rule_stub,
                 vmappables={}, spec_types=set())
    fancy = dicts.get("fancy_primitive_batchers")
    if case["layout"] == "split":
        attrs["axis_primitive_batchers"] = WriteOnlyProxy(fancy)
        # A real dict whose name ends in "batchers" but holds predicates, not rules.
        attrs["skippable_batchers"] = {p: _rule_stub for p in objects["fancy_primitive_batchers"][:2]}
    elif case["layout"] == "collapsed-readable":
        attrs["primitive_batchers"] = ReadableProxy(fancy)
        attrs["axis_primitive_batchers"] = WriteOnlyProxy(fancy)
    elif case["layout"] == "collapsed-readthrough":
        attrs["primitive_batchers"] = ReadThroughProxy(fancy)
        attrs["axis_primitive_batchers"] = WriteOnlyProxy(fancy)
    elif case["layout"] == "collapsed-writeonly":
        attrs["primitive_batchers"] = WriteOnlyProxy(fancy)
        attrs["axis_primitive_batchers"] = WriteOnlyProxy(fancy)
    return types.SimpleNamespace(**attrs), objects


def installed_primitive(name: str):
    """The installed JAX's primitive called ``name`` (``jax.extend.core.primitives``)."""
    prim = getattr(_public_primitives, f"{name}_p", None)
    if prim is None:
        raise LookupError(f"jax.extend.core.primitives has no {name}_p on this JAX")
    return prim


def query_prim(case, objects):
    """The Primitive object a case asks about: one held by a table, or a fresh look-alike."""
    where, key = case["query"]
    if where == "fresh":
        return _jax.new_primitive(key)
    if case["layout"] == "installed":
        return installed_primitive(key)
    return objects[where][key]
