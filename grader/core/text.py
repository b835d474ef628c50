"""Normalise printed jaxprs across releases and colours, for display and nbval sanitising.

Checks never compare text (they compare `jaxprs.summarize`); this exists so a lesson can show a
jaxpr printed by an older JAX next to the student's and so nbval ignores cosmetic drift.
"""
from __future__ import annotations

import re

# Colour codes, as IPython and Jupyter paint jaxprs and tracebacks (tests/nbval-sanitize.cfg says
# the same for nbval). Importing this module imports no JAX: nbgrader's plugins use it.
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def strip_ansi(text: str) -> str:
    return ANSI.sub("", text)


def normalize(text: str) -> str:
    """A printed jaxpr with release- and colour-dependent noise removed; whitespace collapsed."""
    from ._jax import PRINT_DRIFT
    text = strip_ansi(text)
    for pattern, repl in PRINT_DRIFT:
        text = re.sub(pattern, repl, text)
    return _collapse_params(text)


def _collapse_params(text: str) -> str:
    # Multi-line params `prim[\n  a=1\n  b=2\n]` and one-line `prim[a=1 b=2]` read the same.
    text = re.sub(r"\[\s+", "[", text)
    text = re.sub(r"\s+\]", "]", text)
    text = re.sub(r"[ \t]*\n[ \t]*(?=[a-z_]+=)", " ", text)
    text = re.sub(r"\[ ", "[", text)
    return re.sub(r"[ \t]+", " ", text).strip()
