"""The introspection core: the course's one window into JAX's batching internals.

Only ``grader.core._jax`` imports ``jax._src``; everything here works on jax 0.4.36 .. 0.10.x.
"""
from . import _jax
from .axes import Outcome, matchaxis, outcome
from .jaxprs import Eqn, diff, primitives, summarize, summarize_fn, signature
from .paths import Step, trace_routes, watch
from .tables import (Reading, layout, read_fresh, read_here, real_tables, register_rule,
                     rule_for, tables_holding, unregister_rule)
from .text import normalize
from .tracers import ArgView, Level, observe, view

JAX_VERSION = _jax.JAX_VERSION

__all__ = [
    "ArgView", "Eqn", "JAX_VERSION", "Level", "Outcome", "Reading", "Step", "diff", "layout",
    "matchaxis", "normalize", "observe", "outcome", "primitives", "read_fresh", "read_here",
    "real_tables", "register_rule", "rule_for", "signature", "summarize", "summarize_fn",
    "tables_holding", "trace_routes", "unregister_rule", "view", "watch",
]
