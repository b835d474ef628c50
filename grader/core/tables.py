"""The batching-rule tables: which layout this JAX has, what each holds, read safely.

Two layouts exist in the supported releases (history fact ``layout``): *split*
(``primitive_batchers`` plus ``fancy_primitive_batchers``, whose rules take ``axis_data`` first)
and *collapsed* (every rule in ``fancy_primitive_batchers``; ``primitive_batchers`` is a
compatibility proxy on which ``in`` and ``len`` raise). Older releases had a *legacy* layout
(``primitive_batchers`` plus ``axis_primitive_batchers``). Tables are keyed by Primitive *object*:
two primitives may share a name (``pbroadcast`` did).

``python -m grader.core.tables [--no-warmup] [--import MODULE ...]`` prints a reading as JSON; a
fresh process is the only honest place to read counts, because rules register as modules import.
"""
from __future__ import annotations

import argparse
import importlib
import json
import os
import subprocess
import sys
from dataclasses import asdict, dataclass, field

from .. import repo
from . import _jax


def real_tables(module=None) -> dict[str, dict]:
    """The tables of ``module`` (default: JAX's batching module) that are genuine dicts.

    A proxy is recognised by not being a dict: we never call ``len`` or ``in`` on it.
    """
    module = _jax.batching if module is None else module
    found = {}
    for name in _jax.TABLE_NAMES:
        table = getattr(module, name, None)
        if isinstance(table, dict):
            found[name] = table
    return found


def layout(module=None) -> str:
    """``legacy``, ``split`` or ``collapsed`` for the tables of ``module``."""
    tables = real_tables(module)
    if "fancy_primitive_batchers" not in tables:
        return "legacy"
    return "split" if "primitive_batchers" in tables else "collapsed"


def tables_holding(prim, module=None) -> tuple[str, ...]:
    """Names of the real tables in which the Primitive object ``prim`` has a rule."""
    return tuple(n for n, t in real_tables(module).items() if any(k is prim for k in t))


def rule_for(prim, module=None):
    """``(table_name, rule)`` for ``prim``, or ``(None, None)`` when vmap would refuse it."""
    for name, table in real_tables(module).items():
        for key, rule in table.items():
            if key is prim:
                return name, rule
    return None, None


register_rule = _jax.register_rule
unregister_rule = _jax.unregister_rule


@dataclass(frozen=True)
class Reading:
    """Rule tables as read in one process: layout, entries per table, member names per table."""
    jax_version: str
    layout: str
    counts: dict[str, int]
    members: dict[str, list[str]] = field(repr=False)
    imports: tuple[str, ...] = ()
    warmed_up: bool = True

    def holders(self, name: str) -> list[str]:
        """Tables holding a primitive called ``name`` (a name, since objects don't cross processes)."""
        return [t for t, names in self.members.items() if name in names]

    def to_dict(self) -> dict:
        return asdict(self)


def read_here(imports=(), warmup=True) -> Reading:
    """Read the tables of *this* process (after optional imports and one warm-up vmap)."""
    import jax
    for mod in imports:
        importlib.import_module(mod)
    if warmup:
        import jax.numpy as jnp
        jax.vmap(lambda x: jnp.sum(jnp.tanh(x)))(jnp.ones((2, 2)))
    tables = real_tables()
    return Reading(
        jax_version=jax.__version__,
        layout=layout(),
        counts={n: len(t) for n, t in tables.items()},
        members={n: sorted(p.name for p in t) for n, t in tables.items()},
        imports=tuple(imports),
        warmed_up=warmup,
    )


def read_fresh(imports=(), warmup=True, python=None, timeout=120) -> Reading:
    """Read the tables in a fresh interpreter (default: this one), so earlier imports don't count."""
    cmd = [python or sys.executable, "-m", "grader.core.tables"]
    cmd += [] if warmup else ["--no-warmup"]
    for mod in imports:
        cmd += ["--import", mod]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([repo.ROOT, os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=True, env=env)
    data = json.loads(out.stdout.strip().splitlines()[-1])
    data["imports"] = tuple(data["imports"])
    return Reading(**data)


def _main(argv=None) -> None:
    parser = argparse.ArgumentParser(description="Print a reading of JAX's batching-rule tables.")
    parser.add_argument("--no-warmup", action="store_true", help="skip the warm-up vmap")
    parser.add_argument("--import", dest="imports", action="append", default=[],
                        help="import this module first (repeatable)")
    args = parser.parse_args(argv)
    print(json.dumps(read_here(args.imports, not args.no_warmup).to_dict()))


if __name__ == "__main__":
    _main()
