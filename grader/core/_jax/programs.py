"""Adapters for lesson 3: the rules and functions that batch programs inside programs (jit, cond,
while, scan), found on every release by what they are rather than where a release keeps them."""
from __future__ import annotations

import jax
from jax import lax
from jax._src.interpreters import partial_eval as pe
from jax._src.lax.control_flow import conditionals, loops

from . import B

# A primitive's names over the releases (jit's was pjit until 0.7.0).
SPELLINGS = {"jit": ("jit", "pjit"), "cond": ("cond",), "while": ("while",), "scan": ("scan",)}


def _primitive(table, name: str):
    return next(p for p in table if p.name in SPELLINGS.get(name, (name,)))


def rule_named(name: str):
    """The batching rule of the primitive ``name`` (every one of these is in the fancy table)."""
    return B.fancy_primitive_batchers[_primitive(B.fancy_primitive_batchers, name)]


def jit_staging_rule():
    """What a jit equation does when a jaxpr is being built: where an inlined jit disappears."""
    return pe.custom_staging_rules[_primitive(pe.custom_staging_rules, "jit")]


def while_lowering():
    """The while primitive's lowering: where a batched predicate's finished examples are held."""
    return loops._while_lowering


def batch_jaxpr2_cache():
    """The memo behind batch_jaxpr2 (a weakref_lru_cache: ``cache_info()``, ``cache_clear()``)."""
    return B._batch_jaxpr2


def batching_calls():
    """The names of the batching module's jaxpr-batching entry points a loop rule calls."""
    return ("batch_jaxpr", "batch_jaxpr_axes", "batch_jaxpr2")


def platform_cond(index, x):
    """``lax.platform_dependent(x, cpu=sin, default=cos)``'s cond equation bound again with
    ``index`` as its index: the only way a vmap can hand a platform-dependent cond a batched
    index (its own index comes from ``platform_index``, which reads no input)."""
    traced = jax.make_jaxpr(lambda v: lax.platform_dependent(v, cpu=lax.sin, default=lax.cos))(x)
    eqn = next(e for e in getattr(traced, "jaxpr", traced).eqns
               if e.primitive is conditionals.cond_p)
    return conditionals.cond_p.bind(index, x, **eqn.params)[0]
