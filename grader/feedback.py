"""Results of a check, shown as HTML in JupyterLab and as plain text everywhere else.

A check returns a frozen `Result` with three views (``_repr_html_``, the text ``summary``,
``to_dict``). ``show`` displays it once; a failed *graded* check then raises, so nbgrader marks
its test cell, while a self-check never raises, so "Run All" never stops at one; nor does a graded
check that is not answered yet, which says so on stderr (nbgrader still counts the cell failed).
Everything put into HTML is escaped: tracer reprs contain ``<``.
"""
from __future__ import annotations

import html
import sys
from dataclasses import asdict, dataclass

# JupyterLab right-aligns table cells; expected and got must line up under each other.
_TH = 'style="text-align:left;vertical-align:top;padding-right:1em"'
_TD = 'style="text-align:left"'


class CheckFailed(AssertionError):
    """Raised by a failed graded check, so nbgrader marks the test cell as failed."""

    def __init__(self, message: str, shown: bool = False):
        super().__init__(message)
        self.shown = shown

    def _render_traceback_(self):
        # IPython shows this instead of a traceback into the grader's internals; when the result
        # was just displayed above, one line says so rather than repeating it.
        if self.shown:
            return [str(self).partition("\n")[0] + " (details above)"]
        return [str(self)]


@dataclass(frozen=True)
class Finding:
    """One failed case: what was expected, what came back, and the likely misconception."""
    case: str
    expected: str
    got: str
    hint: str = ""


@dataclass(frozen=True)
class Result:
    """The outcome of one check over a number of cases.

    ``passed`` is derived, never stored: no finding, nothing left unanswered (``complete``) and
    nothing sent to an instructor (``manual``, the reason an answer needs grading by hand).
    """
    check: str
    cases: int = 0
    findings: tuple[Finding, ...] = ()
    note: str = ""
    graded: bool = True           # False for a self-check: feedback only, never raises
    complete: bool = True         # False while a self-check is only partly answered
    manual: str = ""

    @property
    def passed(self) -> bool:
        return self.complete and not self.findings and not self.manual

    @property
    def failed(self) -> int:
        return len(self.findings)

    # A graded check over many hidden cases shows its first few; a self-check has a handful of
    # predictions, and every wrong one is explained (the last of them was once "... and 1 more").
    SHOWN = 3

    def shown(self) -> tuple[Finding, ...]:
        return self.findings if not self.graded else self.findings[:self.SHOWN]

    def summary(self) -> str:
        if self.manual:
            return f"NEEDS MANUAL GRADING {self.check}: {self.manual}"
        if self.passed:
            head = f"PASSED {self.check}: {self.cases} case(s) checked"
            return head + (f"\n  {self.note}" if self.note else "")
        counts = f": {self.failed} of {self.cases} case(s) wrong" if self.cases > 1 else ""
        lines = [f"{'FAILED' if self.findings or self.graded else 'NOT YET'} {self.check}{counts}"]
        for f in self.shown():
            lines += [f"  case: {f.case}", f"    expected: {f.expected}", f"    got:      {f.got}"]
            if f.hint:
                lines.append(f"    hint: {f.hint}")
        if self.failed > len(self.shown()):
            lines.append(f"  ... and {self.failed - len(self.shown())} more")
        if self.note:
            lines.append(f"  {self.note}")
        return "\n".join(lines)

    __str__ = summary

    def _repr_pretty_(self, printer, cycle) -> None:
        # IPython's text view (terminals, CI logs, nbval's text/plain) is the same summary.
        printer.text(self.summary())

    def _repr_html_(self) -> str:
        esc = html.escape
        colour, word = (("#1a7f37", "Passed") if self.passed else
                        ("#9a6700", "Needs manual grading") if self.manual else ("#cf222e", "Not yet"))
        parts = [f'<div class="inside-vmap-result" style="border-left:4px solid {colour};'
                 f'padding:4px 10px;margin:4px 0">',
                 f'<b style="color:{colour}">{word}</b> &mdash; <code>{esc(self.check)}</code> '
                 f'({self.cases} case(s){"" if not self.findings else f", {self.failed} wrong"})']
        if self.manual:
            parts.append(f"<div>{esc(self.manual)}</div>")
        for f in self.shown():
            rows = [("case", f"<code>{esc(f.case)}</code>"),
                    ("expected", f"<code>{esc(f.expected)}</code>"),
                    ("got", f"<code>{esc(f.got)}</code>")] + ([("hint", esc(f.hint))] if f.hint else [])
            parts.append('<table style="margin:6px 0;font-size:90%">' + "".join(
                f"<tr><th {_TH}>{label}</th><td {_TD}>{value}</td></tr>" for label, value in rows)
                + "</table>")
        if self.failed > len(self.shown()):
            parts.append(f"<div>&hellip; and {self.failed - len(self.shown())} more</div>")
        if self.note:
            parts.append(f"<div>{esc(self.note)}</div>")
        return "".join(parts) + "</div>"

    def to_dict(self) -> dict:
        return dict(asdict(self), passed=self.passed)

    def raise_if_failed(self, shown: bool = False) -> Result:
        """Raise `CheckFailed` when a graded check failed; a self-check never raises."""
        if self.graded and not self.passed:
            raise CheckFailed(self.summary(), shown)
        return self


def result(check: str, cases: int, findings, note: str = "", **kw) -> Result:
    return Result(check, cases, tuple(findings), note, **kw)


def selfcheck(check: str, cases: int, findings, note: str = "", complete: bool = True) -> Result:
    """An ungraded result: shown, never raised."""
    return Result(check, cases, tuple(findings), note, graded=False, complete=complete)


def show(res: Result) -> None:
    """Display ``res`` once (HTML in Jupyter, text elsewhere); a failed graded check then raises.

    Returns nothing, so a test cell ending in ``show(...)`` does not display the result twice.
    """
    shown = True
    try:
        from IPython import get_ipython
        from IPython.display import display
        if get_ipython() is not None:
            display(res)
        else:
            print(res.summary())
    except ImportError:
        print(res.summary())
    if res.graded and not res.complete and not res.passed:
        # Not answered yet: nbgrader (and Validate) count a grade cell with output on stderr as
        # failed, and "Run All" goes on to the next exercise instead of stopping here.
        print(res.summary(), file=sys.stderr)
        return
    res.raise_if_failed(shown)
