"""Text a student influenced, made safe to show: the one helper every output path uses.

A student chooses more of what the course prints than it seems: their id (a folder name in the
exchange), the cells' metadata (a grade id nbgrader quotes in its messages), what their code
makes an exception say, the names in an LMS roster. Shown raw, a newline forges a line of the
terminal or of autograde.log, an ANSI escape repaints one ("FAILED" drawn as "graded 13/13"), a
bidi override reverses what an instructor reads, and a cell starting with ``=`` is a formula to
the spreadsheet that opens the CSV (OWASP, "CSV Injection").

* `text`: one line, every control character shown as an escape (``\\x1b``, ``\\u202e``) instead
  of acting, trimmed and cut to a length: every value a student influenced (a reason, an id, a
  name), wherever it goes (the grading status, an export, the terminal).
* `line`: the same escaping of a whole line the course formats itself (a terminal line, one
  line of a log record), its indentation kept: what every sink applies last.
* `cell`: `text`, then a leading ``=``, ``+``, ``-``, ``@``, tab or carriage return disarmed with
  a ``'`` (OWASP's advice), for every cell of every CSV the course writes.
"""
from __future__ import annotations

import unicodedata

LIMIT = 500                     # characters of one shown value, by default
FORMULA = ("=", "+", "-", "@", "\t", "\r")
# Line breaks become one space, so a reason stays readable on its line; anything else that is a
# control or a format character (C0, DEL, C1, bidi overrides and isolates, zero-width marks,
# the line and paragraph separators) is written as its escape.
_BREAKS = {"\n", "\r", "\t", "\v", "\f", "\x85", "\u2028", "\u2029"}
_UNSHOWN = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}


def text(value, limit: int = LIMIT) -> str:
    """``value`` as one line a terminal, a log, a browser or a spreadsheet shows as written."""
    shown = line(value).strip()
    if limit and len(shown) > limit:
        shown = shown[:limit] + f" [... {len(shown) - limit} more characters]"
    return shown


def line(value) -> str:
    """``value`` with every line break made a space and every other control character an
    escape; nothing else changes."""
    raw = value if isinstance(value, str) else str(value)
    if raw.isprintable():               # the common case, at C speed
        return raw
    out = []
    for ch in raw:
        if ch in _BREAKS:
            out.append(" ")
        elif unicodedata.category(ch) in _UNSHOWN:
            out.append(_escape(ch))
        else:
            out.append(ch)
    return "".join(out)


def cell(value) -> str:
    """``value`` for a CSV cell: `text`, with a formula's first character disarmed."""
    shown = text("" if value is None else value)
    return "'" + shown if shown.startswith(FORMULA) else shown


def _escape(ch: str) -> str:
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 \
        else f"\\U{code:08x}"
