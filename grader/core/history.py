"""The measured history of a release difference, with the installed JAX's own row asked live.

``ask("aval")`` measures the fact on this JAX and returns an `Answer`: print it for a compact
table (release range -> behaviour, the range holding this JAX marked), and assert ``.holds``,
which says the live answer is the one the history records for this release. On a release newer
than the history knows, the last row applies until someone measures again (``make test-latest``
says when that is needed).
"""
from __future__ import annotations

from dataclasses import dataclass

import jax

from ._jax import history as _history


@dataclass(frozen=True)
class Answer:
    fact: str
    question: str
    rows: tuple[tuple[str, object], ...]       # (release range, recorded value)
    version: str                               # the installed JAX
    value: object                              # what the installed JAX answered, live
    recorded: object                           # what the history says this release does

    @property
    def holds(self) -> bool:
        return self.value == self.recorded

    def __str__(self) -> str:
        width = max(len(r) for r, _ in self.rows)
        lines = [f"{self.question}:"]
        for span, value in self.rows:
            mark = "  <- your JAX's range" if value == self.recorded and _holds_range(
                span, self.version) else ""
            lines.append(f"  {span:<{width}}  {value}{mark}")
        lines.append(f"  your JAX, {self.version}, asked now: {self.value}")
        return "\n".join(lines)

    def line(self) -> str:
        """One line for a lesson: the question, this JAX's live answer, and its recorded range."""
        span = next((s for s, v in self.rows if v == self.recorded and _holds_range(s, self.version)), "?")
        return f"{self.question}: {self.value} (your JAX {self.version}; releases {span}; the appendix has all)"

    def _repr_pretty_(self, printer, cycle) -> None:
        printer.text(str(self))


def _holds_range(span: str, version: str) -> bool:
    first, _, last = span.partition(" - ")
    v = _history.release(version)
    if last:
        return _history.release(first) <= v <= _history.release(last)
    return _history.release(first.removesuffix(" and later")) <= v


def ask(fact: str) -> Answer:
    """Measure ``fact`` on the installed JAX, beside the history measured release by release."""
    known = _history.HISTORY[fact]
    return Answer(fact, known.question, tuple(known.rows()), jax.__version__,
                  _history.measure(fact), _history.expected(fact))


def facts() -> tuple[str, ...]:
    return tuple(_history.HISTORY)
