"""Normalise printed jaxprs across releases and colours, for display and nbval sanitising.

Checks never compare text (they compare `jaxprs.summarize`); this exists so a lesson can show a
jaxpr printed by an older JAX next to the student's and so nbval ignores cosmetic drift.
"""
from __future__ import annotations

import re

# (pattern, replacement) in the order applied; tests/nbval-sanitize.cfg mirrors the cosmetic ones.
RULES: tuple[tuple[str, str], ...] = (
    (r"\x1b\[[0-9;]*m", ""),                          # ANSI colours (Jupyter display of a jaxpr)
    (r"np\.(?:int|uint)\d+\((-?\d+)\)", r"\1"),       # numpy 2 scalar reprs in params
    (r"(\d(?:\.\d*)?(?:e[+-]?\d+)?):[a-z]+\d*\[\]", r"\1"),  # literals `2.0:f32[]` (0.6.1+)
    (r"\n?\s*(?:out_)?sharding=None\n?", "\n"),       # sharding params (0.4.36+ / 0.8.1+)
    (r"\bpjit\[", "jit["),                            # pjit renamed jit (0.7.0)
)


def normalize(text: str) -> str:
    """A printed jaxpr with version- and colour-dependent noise removed; whitespace collapsed."""
    for pattern, repl in RULES:
        text = re.sub(pattern, repl, text)
    return _collapse_params(text)


def _collapse_params(text: str) -> str:
    # Multi-line params `prim[\n  a=1\n  b=2\n]` and one-line `prim[a=1 b=2]` read the same.
    text = re.sub(r"\[\s+", "[", text)
    text = re.sub(r"\s+\]", "]", text)
    text = re.sub(r"[ \t]*\n[ \t]*(?=[a-z_]+=)", " ", text)
    text = re.sub(r"\[ ", "[", text)
    return re.sub(r"[ \t]+", " ", text).strip()
