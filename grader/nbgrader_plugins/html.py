"""A student's notebook rendered as HTML is inert: no script, no active content, wherever.

nbgrader renders an autograded notebook with nbconvert's ``HTMLExporter`` in the formgrader
(the instructor's browser, on the Jupyter server's origin) and in generated feedback, and by
default passes the student's markdown, HTML, JavaScript and SVG through as they are: opened by
the instructor, a submission ran script as the instructor (a root terminal, the formgrader's
grade API). ``course/nbgrader_config.py`` configures every ``HTMLExporter`` nbgrader makes:

* `SanitizeSubmission` (``HTMLExporter.preprocessors``, ``GenerateFeedback.preprocessors``):
  nbconvert's own ``SanitizeHTML`` preprocessor, which runs bleach over raw cells and every
  output's HTML and markdown and drops JavaScript, SVG and any type not known to be inert, with
  an allow-list that keeps ordinary formatting (`TAGS`, `ATTRIBUTES`, `PROTOCOLS`, `STYLES`),
  plus the fields nbconvert's templates write into the page unescaped, rebuilt from their types
  (an image's ``width=`` and ``height=``, an execution count): ``width=1 onload=...`` was markup.
* `SafeMarkdown` (``HTMLExporter.filters["markdown2html"]``): markdown (cells and outputs) is
  rendered by nbconvert's own renderer, then the HTML it made goes through the same bleach
  cleaning; nbgrader's formgrade template renders markdown cells itself, ignoring nbconvert's
  ``sanitize_html``, and the renderer keeps ``javascript:`` links.
* ``HTMLExporter.sanitize_html = True``: nbconvert's switch, for the templates that honour it.

Cleaning costs more than the size of what is cleaned: bleach's parser (html5lib) does work in
proportion to the open elements for each tag, so 40,000 nested ``<div>`` in a 200 KB markdown
cell held a student's feedback 65 s and the formgrader's whole server 137 s, and a misnested
``<b><i>x</b></i>`` grows as fast (red team, round 14). `MarkupBudget` bounds it: a cell or output
holding more markup than the course renders (`MarkupBudget.item_tags` tags, `item_bytes` bytes),
or a notebook past `notebook_tags` in all, is shown as escaped text with a note, never parsed.
The two other passes over what a student wrote or printed that grow faster than it are bounded
the same way (red team, round 15: 100 s of the formgrader's server for one 4.4 MB notebook):
nbconvert's ANSI colouring re-slices the text per escape sequence, so an output past
`item_escapes` (or the notebook past `notebook_escapes`) loses its colours; Pygments highlights
a long line slower than it grows, so a code cell's source past `item_source` characters (or the
notebook past `notebook_source`) is shown cut, with a note. The notebook on disk is unchanged:
this is what a page shows.
"""
from __future__ import annotations

import html as _html
import numbers
import re

import bleach
import jinja2
from bleach.css_sanitizer import ALLOWED_CSS_PROPERTIES, CSSSanitizer
from nbconvert.preprocessors.sanitize import SanitizeHTML
from traitlets import Integer
from traitlets.config import LoggingConfigurable

# What formatting survives: text structure, tables, images, links. No element that runs,
# loads or submits anything (script, iframe, object, embed, form, input, style, base, meta,
# svg, math, audio, video), no event attribute, no ``id`` or ``name`` (a student's element
# named like one of the formgrader's own would take its place for the page's scripts).
TAGS = sorted({"a", "abbr", "acronym", "b", "blockquote", "br", "caption", "code", "col",
               "colgroup", "dd", "del", "details", "div", "dl", "dt", "em", "figcaption",
               "figure", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "img", "ins", "kbd", "li",
               "mark", "ol", "p", "pre", "q", "s", "samp", "small", "span", "strong", "sub",
               "summary", "sup", "table", "tbody", "td", "tfoot", "th", "thead", "tr", "tt", "u",
               "ul", "var"})
_EVERYWHERE = {"class", "title", "style", "align"}
_BY_TAG = {"a": {"href"}, "img": {"src", "alt", "width", "height"}, "abbr": {"title"},
           "td": {"colspan", "rowspan"}, "th": {"colspan", "rowspan", "scope"},
           "ol": {"start"}, "col": {"span"}, "colgroup": {"span"}}
PROTOCOLS = ["http", "https", "mailto", "data"]
# An image may come inline (nbconvert turns a markdown cell's attachments into data: URLs);
# nothing else may be a data: URL (a link to data:text/html is a page of the student's).
_DATA_IMAGES = ("data:image/png;", "data:image/jpeg;", "data:image/gif;", "data:image/webp;")
STYLES = sorted(ALLOWED_CSS_PROPERTIES | {"margin", "margin-top", "margin-bottom",
                                          "margin-left", "margin-right", "padding",
                                          "padding-top", "padding-bottom", "padding-left",
                                          "padding-right", "border", "border-left",
                                          "border-right", "border-top", "border-bottom"})


def _attribute(tag: str, name: str, value: str) -> bool:
    if name in _EVERYWHERE or name in _BY_TAG.get(tag, ()):
        if value.strip().lower().startswith("data:"):
            return tag == "img" and name == "src" and value.strip().lower().startswith(
                _DATA_IMAGES)
        return True
    return False


ATTRIBUTES = _attribute


def clean(html: str) -> str:
    """``html`` through bleach with the course's allow-list: what is not on it is shown as
    text (a ``<script>`` the student wrote reads as one), never run."""
    return bleach.clean(html, tags=TAGS, attributes=ATTRIBUTES, protocols=PROTOCOLS,
                        css_sanitizer=CSSSanitizer(allowed_css_properties=STYLES),
                        strip=False, strip_comments=True)


class MarkupBudget(LoggingConfigurable):
    """How much markup one rendering of a notebook parses: the work of cleaning grows faster
    than the markup (see the module's docstring), so past these it is shown as text. An honest
    submission of this course holds a handful of tags; a pandas table of 100 rows about 1,200."""

    item_tags = Integer(4000, help="The most tags ('<') one cell or output may hold and still be "
                        "rendered as HTML; past it, it is shown as escaped text.").tag(config=True)
    item_bytes = Integer(200_000, help="The most bytes one markdown cell or HTML output may hold "
                         "and still be rendered.").tag(config=True)
    notebook_tags = Integer(20_000, help="The most tags one notebook's cells and outputs may "
                            "hold together and still be rendered; what comes after is shown as "
                            "escaped text.").tag(config=True)
    item_escapes = Integer(2_000, help="The most ANSI escape sequences one output may hold and "
                           "keep its colours (a traceback holds a few hundred).").tag(config=True)
    notebook_escapes = Integer(10_000, help="The most ANSI escape sequences one notebook's "
                               "outputs may hold together and keep their colours."
                               ).tag(config=True)
    item_source = Integer(50_000, help="The most characters of one code cell's source a page "
                          "shows (highlighted); the rest is cut, with a note.").tag(config=True)
    notebook_source = Integer(1_000_000, help="The most characters of code cells' source one "
                              "page shows in all.").tag(config=True)

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.left = self.notebook_tags
        self.escapes_left, self.source_left = self.notebook_escapes, self.notebook_source

    def shown_source(self, source: str) -> str:
        """A code cell's source as the page shows it: cut past the budget, saying so."""
        most = max(0, min(self.item_source, self.source_left))
        self.source_left -= min(len(source), most)
        if len(source) <= most:
            return source
        return (source[:most] + f"\n# ... {len(source) - most:,} more characters not shown (a "
                f"page shows at most {self.item_source:,} of a cell, {self.notebook_source:,} in "
                f"all; the notebook itself is unchanged)")

    def shown_text(self, text: str) -> str:
        """An output's text, its ANSI colours dropped past the budget, or where one escape
        sequence is long or unterminated (nbconvert's colouring is quadratic in a sequence's
        parameters, and its pattern scans on from an unterminated one: read-only review,
        round 16)."""
        escapes = text.count("\x1b")
        if not escapes:
            return text
        if escapes <= min(self.item_escapes, self.escapes_left) and not _ODD_ESCAPE.search(text):
            self.escapes_left -= escapes
            return text
        self.escapes_left = max(0, self.escapes_left - escapes)
        return _ANSI.sub("", text)

    def take(self, text: str) -> bool:
        """Whether ``text`` may be parsed, counting it against the notebook's budget."""
        tags = text.count("<")
        if len(text) > self.item_bytes or tags > self.item_tags or tags > self.left:
            self.left = 0              # the rest of the notebook is text too: no slicing it up
            return False
        self.left -= tags
        return True

    def unparsed(self, text: str) -> str:
        return ('<p><em>This part of the notebook holds more markup than the course renders (at '
                f'most {self.item_tags:,} tags in one cell or output, {self.notebook_tags:,} in a '
                'notebook), so it is shown as text.</em></p><pre>' + _html.escape(text) + '</pre>')


# An ANSI escape sequence (CSI ... final byte, of bounded length), or a lone escape character;
# and an escape that does not start such a short sequence. Both patterns look a bounded way on,
# so each costs the text's length once.
_ANSI = re.compile(r"\x1b\[[0-?]{0,64}[ -/]{0,8}[@-~]|\x1b")
_ODD_ESCAPE = re.compile(r"\x1b(?!\[[0-?]{0,64}[ -/]{0,8}[@-~])")


def _budget(exporter) -> MarkupBudget:
    """The budget of the notebook ``exporter`` is rendering (`SanitizeSubmission.preprocess`
    starts one per notebook; without it, one per call)."""
    budget = getattr(exporter, "_inside_vmap_budget", None)
    return budget if budget is not None else MarkupBudget(parent=exporter)


class SanitizeSubmission(SanitizeHTML):
    """nbconvert's SanitizeHTML with the course's allow-list, for every HTML rendering of a
    student's notebook (see the module's docstring)."""

    def preprocess(self, nb, resources):
        nb.metadata.pop("widgets", None)    # widget state: a script block the page would load
        if self.parent is not None:         # one markup budget per notebook rendered
            self.parent._inside_vmap_budget = MarkupBudget(parent=self.parent)
        return super().preprocess(nb, resources)

    def preprocess_cell(self, cell, resources, cell_index):
        if cell.cell_type == "markdown":    # rendered and cleaned whole by SafeMarkdown: bleach
            return cell, resources          # on markdown source mangles quotes and code spans
        if cell.cell_type == "code":
            budget = _budget(self.parent)
            cell.source = budget.shown_source(cell.source)
            cell.execution_count = _count(cell.get("execution_count"))
            for output in cell.get("outputs", []):
                _retype(output)
                _plain_text(output, budget)
        return super().preprocess_cell(cell, resources, cell_index)

    def sanitize_html_tags(self, html_str):
        budget = _budget(self.parent)
        return clean(html_str) if budget.take(html_str) else budget.unparsed(html_str)


class SafeMarkdown(LoggingConfigurable):
    """``HTMLExporter.filters["markdown2html"]``: nbconvert's markdown rendering (the exporter's
    own filter, its anchors and attachments), then `clean`. The exporter makes it with itself
    as parent (nbconvert's TemplateExporter._register_filter)."""

    # jinja passes the template context to a filter marked so (as to HTMLExporter's own).
    jinja_pass_arg = jinja2.pass_context(lambda: None).jinja_pass_arg

    def __call__(self, context, source):
        budget = _budget(self.parent)
        if len(source) > budget.item_bytes:          # not even rendered: markdown can nest too
            return budget.unparsed(source)
        render = getattr(self.parent, "markdown2html", None)
        if render is None:
            from nbconvert.filters import markdown2html as plain
            made = plain(source)
        else:
            made = render(context, source)
        # counted once rendered: `>>>>` and nested lists make elements without a '<'
        return clean(made) if budget.take(made) else budget.unparsed(source)


def _plain_text(output, budget: MarkupBudget) -> None:
    """The texts nbconvert colours (a stream's, a traceback's, text/plain), within the budget."""
    if isinstance(output.get("text"), str):
        output["text"] = budget.shown_text(output["text"])
    if isinstance(output.get("traceback"), list):
        joined = budget.shown_text("\n".join(str(line) for line in output["traceback"]))
        output["traceback"] = joined.split("\n")
    data = output.get("data")
    if isinstance(data, dict) and isinstance(data.get("text/plain"), str):
        data["text/plain"] = budget.shown_text(data["text/plain"])


def _retype(output) -> None:
    """An output's fields that templates write unescaped, as the types they must be."""
    if "execution_count" in output:
        output["execution_count"] = _count(output.get("execution_count"))
    meta = output.get("metadata")
    if not isinstance(meta, dict):
        output["metadata"] = {}
        return
    for scope in [meta] + [v for v in meta.values() if isinstance(v, dict)]:
        for key in ("width", "height"):
            if key in scope and not _number(scope[key]):
                del scope[key]


def _number(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _count(value):
    return value if isinstance(value, int) and not isinstance(value, bool) else None
