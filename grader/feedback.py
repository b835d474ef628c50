"""Results of a check, shown as HTML in JupyterLab and as plain text everywhere else.

A check returns a `Result`; in a notebook the test cell calls `.raise_if_failed()` (or the
lesson module does it) so nbgrader sees a failed cell, while the student sees what was expected,
what came back and the likely misconception. Everything put into HTML is escaped: tracer reprs
contain ``<``.
"""
from __future__ import annotations

import html
from dataclasses import asdict, dataclass, field


# JupyterLab right-aligns table cells; expected and got must line up under each other.
_TH = 'style="text-align:left;vertical-align:top;padding-right:1em"'
_TD = 'style="text-align:left"'


class CheckFailed(AssertionError):
    """Raised by a failed visible check, so nbgrader marks the test cell as failed."""

    def _render_traceback_(self):
        # IPython shows this instead of a traceback into the grader's internals.
        return [str(self)]


@dataclass
class Finding:
    """One failed case: what was expected, what came back, and the likely misconception."""
    case: str
    expected: str
    got: str
    hint: str = ""


@dataclass
class Result:
    """The outcome of one exercise check over a number of generated cases."""
    check: str
    passed: bool
    cases: int = 0
    findings: list[Finding] = field(default_factory=list)
    note: str = ""

    @property
    def failed(self) -> int:
        return len(self.findings)

    def summary(self) -> str:
        if self.passed:
            head = f"PASSED {self.check}: {self.cases} case(s) checked"
            return head + (f"\n  {self.note}" if self.note else "")
        counts = f": {self.failed} of {self.cases} case(s) wrong" if self.cases > 1 else ""
        lines = [f"FAILED {self.check}{counts}"]
        for f in self.findings[:3]:
            lines += [f"  case: {f.case}", f"    expected: {f.expected}", f"    got:      {f.got}"]
            if f.hint:
                lines.append(f"    hint: {f.hint}")
        if self.failed > 3:
            lines.append(f"  ... and {self.failed - 3} more")
        if self.note:
            lines.append(f"  {self.note}")
        return "\n".join(lines)

    __str__ = summary

    def _repr_pretty_(self, printer, cycle) -> None:
        # IPython's text view (terminals, CI logs, nbval's text/plain) is the same summary.
        printer.text(self.summary())

    def _repr_html_(self) -> str:
        esc = html.escape
        colour, word = ("#1a7f37", "Passed") if self.passed else ("#cf222e", "Not yet")
        parts = [f'<div class="inside-vmap-result" style="border-left:4px solid {colour};'
                 f'padding:4px 10px;margin:4px 0">',
                 f'<b style="color:{colour}">{word}</b> &mdash; <code>{esc(self.check)}</code> '
                 f'({self.cases} case(s){"" if self.passed else f", {self.failed} wrong"})']
        for f in self.findings[:3]:
            rows = [("case", f"<code>{esc(f.case)}</code>"),
                    ("expected", f"<code>{esc(f.expected)}</code>"),
                    ("got", f"<code>{esc(f.got)}</code>")] + ([("hint", esc(f.hint))] if f.hint else [])
            parts.append('<table style="margin:6px 0;font-size:90%">' + "".join(
                f"<tr><th {_TH}>{label}</th><td {_TD}>{value}</td></tr>" for label, value in rows)
                + "</table>")
        if self.failed > 3:
            parts.append(f"<div>&hellip; and {self.failed - 3} more</div>")
        if self.note:
            parts.append(f"<div>{esc(self.note)}</div>")
        return "".join(parts) + "</div>"

    def to_dict(self) -> dict:
        return asdict(self)

    def raise_if_failed(self) -> "Result":
        if not self.passed:
            raise CheckFailed(self.summary())
        return self


def result(check: str, cases: int, findings: list[Finding], note: str = "") -> Result:
    return Result(check, not findings, cases, list(findings), note)


def crashed(check: str, err: BaseException, hint: str = "") -> Result:
    """A student's code raised: report it as a finding, never as a grader traceback."""
    got = f"{type(err).__name__}: {err}".strip()
    return result(check, 1, [Finding("calling your code", "it runs without raising", got[:500],
                                     hint or "Run your function on the example above and read "
                                             "the error it raises.")])


def show(res: Result) -> None:
    """Display ``res`` (HTML in Jupyter, text elsewhere), then raise if it failed.

    Returns nothing, so a test cell ending in ``show(...)`` does not display the result twice.
    """
    try:
        from IPython import get_ipython
        from IPython.display import display
        if get_ipython() is not None:
            display(res)
        else:
            print(res.summary())
    except ImportError:
        print(res.summary())
    res.raise_if_failed()
