"""Feedback without hidden tests: a ``GenerateFeedback.preprocessors`` entry (upstream nbgrader
shows hidden tests verbatim in the feedback, #917)."""
from __future__ import annotations

from nbgrader import utils
from nbgrader.preprocessors import ClearHiddenTests, GetGrades
from traitlets import List, Unicode

from ..core.text import strip_ansi


class ClearHiddenTestsInFeedback(ClearHiddenTests):
    """Feedback preprocessor: hidden-test regions leave the grade cells' source, and any output
    line that quotes a hidden-test line (a traceback, say) is replaced, while the grader's own
    messages (expected, got, hint) stay. Only grade cells are read for regions (their source is
    the instructor's, restored from the gradebook): a student's own cell that mentions the
    delimiters stays as the student wrote it, and never stops the feedback (nbgrader's
    ClearHiddenTests raised on it, failing that student and ``make feedback`` for everyone).

    Put it in ``GenerateFeedback.preprocessors`` after ``GetGrades``.
    """

    # nbconvert's HTML exporter configures this for every NbConvertBase; declared configurable
    # here (as nbgrader's GetGrades does) so traitlets does not warn about it.
    display_data_priority = List(GetGrades.display_data_priority.default_value,
                                 help="Output formats in order of preference.").tag(config=True)

    replacement = Unicode(
        "[hidden test]",
        help="Shown in the feedback in place of an output line that quotes a hidden test.",
    ).tag(config=True)

    def preprocess_cell(self, cell, resources, cell_index):
        if not utils.is_grade(cell):
            return cell, resources
        before = cell.source
        cell, resources = super().preprocess_cell(cell, resources, cell_index)
        hidden = _removed_lines(before, cell.source)
        if hidden and cell.cell_type == "code":
            for output in cell.get("outputs", []):
                self._scrub(output, hidden)
        return cell, resources

    def _scrub(self, output, hidden):
        def clean(text: str) -> str:
            return "\n".join(self.replacement if any(h in _plain(line) for h in hidden) else line
                             for line in text.split("\n"))
        if "traceback" in output:
            output["traceback"] = [clean(t) for t in output["traceback"]]
        if "text" in output:
            output["text"] = clean(output["text"])
        for mime, value in output.get("data", {}).items():
            if isinstance(value, str) and mime.startswith("text/"):
                output["data"][mime] = clean(value)

def _plain(line: str) -> str:
    """A line without ANSI colour codes (IPython colours tracebacks token by token)."""
    return strip_ansi(line)


def _removed_lines(before: str, after: str) -> list[str]:
    kept = {line.strip() for line in after.split("\n")}
    return [s for s in (line.strip() for line in before.split("\n"))
            if s and s not in kept and not s.startswith("#")]
