"""A student's notebook rendered as HTML is inert (grader.nbgrader_plugins.html), without a
browser: the payload corpus (tests/fixtures/xss.py), executed by a real kernel, rendered with
nbgrader's formgrade and feedback templates and the course's configuration, leaves nothing that
would run; the same notebook rendered as nbgrader ships it does (so the check can fail); and
ordinary formatting, the course's own check results among it, survives."""
import base64
import os
import pathlib

import nbformat
import pytest
from nbclient import NotebookClient
from nbconvert.exporters import HTMLExporter
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output
from nbgrader.server_extensions.formgrader import handlers
from traitlets.config import Config
from traitlets.config.loader import PyFileConfigLoader

from grader.nbgrader_plugins import html
from tests.fixtures import xss

ROOT = pathlib.Path(__file__).resolve().parents[2]
START, END = 'id="notebook-container"', 'id="statusmessage"'


@pytest.fixture(scope="module")
def executed():
    """The payloads, their outputs made by a real kernel, as autograde would leave them."""
    nb = xss.add_payloads(new_notebook(cells=[new_code_cell("answer = 42")]))
    NotebookClient(nb, kernel_name="python3", timeout=60).execute()
    return nb


def render(nb, template="formgrade", course=True):
    """``nb`` through nbconvert's HTMLExporter as nbgrader's formgrader makes it: the course's
    configuration (or none: nbgrader as it ships), and nbgrader's template."""
    cfg = Config()
    if course:
        cfg.merge(PyFileConfigLoader("nbgrader_config.py", path=str(ROOT / "course")).load_config())
    cfg.HTMLExporter.template_name = template
    cfg.HTMLExporter.extra_template_basedirs = [handlers.template_path]
    # as nbgrader's GenerateFeedback finds the feedback template's stylesheet
    cfg.HTMLExporter.extra_template_paths = [os.path.join(
        handlers.static_path, "node_modules", "bootstrap", "dist", "css")]
    grades = {"score": 1, "max_score": 2, "late_penalty": 0, "notebook": "nb"}   # GetGrades'
    out, _ = HTMLExporter(config=cfg).from_notebook_node(
        nbformat.from_dict(nb), resources={"base_url": "", "index": 0, "total": 1,
                                           "nbgrader": grades})
    return out


def test_nothing_a_student_wrote_or_printed_would_run_in_the_formgrader(executed):
    assert xss.active(render(executed), START, END) == []


def test_nbgrader_as_it_ships_would_run_each_of_them(executed):
    found = " ".join(xss.active(render(executed, course=False), START, END))
    for needle in ("<script> element", "onerror=", "ontoggle=", "<iframe> element",
                   "href=javascript:"):
        assert needle in found, needle


def test_the_feedback_template_is_inert_too(executed):
    assert xss.active(render(executed, "feedback"), "<body", "</body>") == []


def test_fields_the_templates_write_unescaped_are_retyped():
    cell = new_code_cell("x", execution_count=1)
    cell["execution_count"] = "<img src=x onerror=__xss('count')>"   # as a forged file holds it
    cell.outputs = [new_output("display_data", data={"image/png": "AAAA", "text/plain": "x"},
                               metadata={"width": "1 onerror=__xss('w')", "height": 20,
                                         "image/png": {"height": True}})]
    nb = new_notebook()
    nb.cells.append(cell)
    nb, _ = html.SanitizeSubmission().preprocess(nb, {})
    out = nb.cells[0]
    assert out.execution_count is None
    assert out.outputs[0].metadata == {"height": 20, "image/png": {}}


def test_ordinary_formatting_and_the_courses_own_results_survive():
    from grader.feedback import Finding, Result
    result = Result(check="check_spy", cases=4, findings=(
        Finding(case="in_axes=0", expected="(0, (3,))", got="None", hint="a <hint>"),))
    png = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 16).decode()
    md = ("# Notes\n\n> a quote & `a < b` in code\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n"
          "[docs](https://jax.readthedocs.io) and <b>bold</b>")
    cell = new_code_cell("show(result)")
    cell.outputs = [new_output("display_data", data={"text/html": result._repr_html_(),
                                                     "text/plain": "r"}),
                    new_output("display_data", data={"image/png": png, "text/plain": "fig"})]
    page = render(new_notebook(cells=[new_markdown_cell(md), cell]))
    body = page[page.index(START):]
    for kept in ("<h1>Notes", "<blockquote>", "<code>a &lt; b</code>", "<table>", "<td>1</td>",
                 'href="https://jax.readthedocs.io"', "<b>bold</b>", "check_spy",
                 "<th", "a &lt;hint&gt;", f"src=\"data:image/png;base64,{png}\"",
                 "border-left:4px solid"):
        assert kept in body, kept


@pytest.mark.parametrize("value, kept", [
    ("https://example.org/a.png", True), ("data:image/png;base64,AAAA", True),
    ("data:text/html;base64,PHNjcmlwdD4=", False), ("data:image/svg+xml;base64,AAAA", False),
])
def test_an_image_may_be_inline_nothing_else_may(value, kept):
    assert (f'src="{value}"' in html.clean(f'<img src="{value}">')) is kept
    assert "href" not in html.clean(f'<a href="{value}">x</a>') or value.startswith("https")


# Fourteenth round: cleaning grows faster than the markup (bleach's html5lib parser does work per
# tag in proportion to the open elements), so 40,000 nested <div> in one markdown cell held the
# feedback a minute and the formgrader's server two. What is parsed is bounded; the rest is text.
FLOODS = {
    "nested divs in markdown": lambda: [new_markdown_cell("Notes\n\n" + "<div>" * 40000)],
    "misnested tags in markdown": lambda: [new_markdown_cell("<b><i>x</b></i>" * 20000)],
    "nested quotes, no '<'": lambda: [new_markdown_cell(">" * 30000 + " x")],   # mistune caps it
    "HTML output": lambda: [_output_cell("text/html", "<div>" * 40000)],
    "markdown output": lambda: [_output_cell("text/markdown", "<b><i>x</b></i>" * 20000)],
    "many cells, each under the cell limit": lambda: [new_markdown_cell("<div>" * 3000)
                                                      for _ in range(40)],
}


def _output_cell(mime, text):
    cell = new_code_cell("show()")
    cell.outputs = [new_output("display_data", data={mime: text, "text/plain": "x"})]
    return cell


@pytest.mark.parametrize("flood", sorted(FLOODS))
def test_the_markup_a_rendering_parses_is_bounded_and_the_rest_is_text(flood, monkeypatch):
    parsed = []
    real = html.clean
    monkeypatch.setattr(html, "clean", lambda text: parsed.append(text.count("<")) or real(text))
    honest = new_markdown_cell("An honest <b>note</b> after it")
    page = render(new_notebook(cells=[*FLOODS[flood](), honest]))
    budget = html.MarkupBudget()
    assert max(parsed, default=0) <= budget.item_tags, parsed
    assert sum(parsed) <= budget.notebook_tags + 100, parsed
    if "quotes" not in flood:
        assert "more markup than the course renders" in page
    assert xss.active(page, START, END) == []


def test_an_honest_notebook_spends_little_of_the_budget():
    budget = html.MarkupBudget()
    for path in sorted(ROOT.glob("exercises/*/*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            assert budget.take(cell.source), (path, cell.source[:80])
    assert budget.left > budget.notebook_tags * 0.9


# Fifteenth round: nbconvert's ANSI colouring and Pygments' highlighting also grow faster than
# what they are given (4.4 MB of one cell's source and three outputs of 349,000 escapes held the
# formgrader's server 100 s). A page colours and highlights a bounded amount; the rest is plain.
def _floods():
    cell = new_code_cell("@" * 300_000)
    cell.outputs = [new_output("stream", name="stdout", text="\x1b[m" * 349_000),
                    new_output("display_data", data={"text/plain": "\x1b[31mx" * 100_000}),
                    new_output("error", ename="E", evalue="v",
                               traceback=["\x1b[0;31mline\x1b[0m"] * 50_000)]
    return [cell, new_code_cell("x = 1\n" * 200_000)]


def test_what_a_page_colours_and_highlights_is_bounded():
    nb, _ = html.SanitizeSubmission().preprocess(new_notebook(cells=_floods()), {})
    budget = html.MarkupBudget()
    sources = [c.source for c in nb.cells]
    assert all(len(s) <= budget.item_source + 300 for s in sources), [len(s) for s in sources]
    assert all("more characters not shown" in s for s in sources)
    stream, shown, error = nb.cells[0].outputs
    texts = [stream.text, shown.data["text/plain"], "\n".join(error.traceback)]
    assert all(t.count("\x1b") <= budget.item_escapes for t in texts), [t.count("\x1b") for t in texts]
    assert "line" in texts[2] and "x" in texts[1]             # the text itself is kept


def test_a_flooded_notebook_renders_with_its_note_and_an_honest_traceback_keeps_its_colours():
    page = render(new_notebook(cells=_floods()))
    assert "more characters not shown" in page
    honest = new_code_cell("1/0")
    honest.outputs = [new_output("error", ename="ZeroDivisionError", evalue="division by zero",
                                 traceback=["\x1b[0;31mZeroDivisionError\x1b[0m: division by zero"])]
    assert 'class="ansi-red-fg"' in render(new_notebook(cells=[honest]))


@pytest.mark.parametrize("text", [
    "\x1b[" + "0;" * 100_000 + "m",                          # one sequence, 100,000 parameters
    "\x1b[" * 1_000 + "0" * 200_000,                         # unterminated, then digits
], ids=["long parameters", "unterminated"])
def test_an_odd_escape_sequence_loses_the_colours_rather_than_costing_the_page(text):
    shown = html.MarkupBudget().shown_text(text)
    assert "\x1b" not in shown and len(shown) <= len(text)
    honest = "\x1b[0;31mValueError\x1b[0m: bad"
    assert html.MarkupBudget().shown_text(honest) == honest
