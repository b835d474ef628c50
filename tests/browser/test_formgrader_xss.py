"""A student's notebook opened by the instructor runs nothing: in the formgrader (in JupyterLab's frame and on its
own), in its generated feedback, and in the course's Jupyter server, which offers no terminal and sends its
Content-Security-Policy. The submission carries script in every form tests/fixtures/xss.py knows; each payload
calls `__xss(name)`, a function this test exposes in every frame of the page and records. The same notebook rendered
as nbgrader ships it fires them, so the detection is shown to work.
"""
from __future__ import annotations

import json
import pathlib
import time

import nbformat
import pytest
from nbgrader.api import Gradebook

from tests.fixtures import xss

pytestmark = pytest.mark.browser

EXERCISE = "01-the-rule-per-primitive"
SETTLE_S = 2.0
START, END = 'id="notebook-container"', 'id="statusmessage"'

# Everything a payload could wait for: a hover or a focus on any element, a toggled details, and a click on any
# javascript: link (an instructor clicks links); never a click on the formgrader's own buttons.
PROVOKE = """() => {
    for (const el of document.querySelectorAll('*')) {
        for (const type of ['mouseover', 'mouseenter', 'focus', 'toggle', 'load', 'error']) {
            el.dispatchEvent(new Event(type));
        }
    }
    for (const a of document.querySelectorAll('a[href]')) {
        if (/^\\s*javascript:/i.test(a.getAttribute('href'))) a.click();
    }
}"""
# nbgrader's formgrade page loads MathJax 2 from cdnjs (its grading script stops without MathJax.Hub); with no
# network here, the test stands in for the CDN with the little of MathJax's API that the formgrader calls.
MATHJAX_URL = "https://cdnjs.cloudflare.com/ajax/libs/mathjax/**"
MATHJAX_STUB = ("window.MathJax = {Hub: {Config() {}, Queue() {}, Typeset() {}, "
                "Startup: {signal: {Interest() {}}}}};")
# Violations of the page's Content-Security-Policy, as the page's own script sees them (JupyterLab must work under it).
VIOLATIONS = """document.addEventListener('securitypolicyviolation', e =>
    (window.__violations = window.__violations || []).push(e.violatedDirective + ' ' + e.blockedURI));"""


def watched(page) -> list[str]:
    """The payloads that ran in this page, any frame, as they call `__xss`; the CSP's violations are kept as the
    page sees them, and MathJax comes from the stand-in."""
    fired: list[str] = []
    page.context.expose_binding("__xss", lambda source, name: fired.append(name))
    page.context.add_init_script(VIOLATIONS)
    page.context.route(MATHJAX_URL, lambda route: route.fulfill(
        status=200, content_type="application/javascript", body=MATHJAX_STUB))
    return fired


def signed_in(page, lab) -> None:
    """Sign in as an instructor does, by the token URL of the server's front page (the login cookie is then the
    whole server's: signed in on a submission's URL it would be that page's, and the formgrader's API refused)."""
    page.goto(lab.url("formgrader"))


def provoke(page) -> None:
    for frame in page.frames:
        try:
            frame.evaluate(PROVOKE)
        except Exception:       # a frame that navigated away meanwhile: nothing left to provoke there
            pass
    time.sleep(SETTLE_S)


def submission_url(graded, student: str) -> str:
    with Gradebook(f"sqlite:///{graded.course}/gradebook.db", "inside-vmap") as gb:
        return f"formgrader/submissions/{gb.find_submission_notebook(EXERCISE, EXERCISE, student).id}/"


def autograded(graded, student: str) -> pathlib.Path:
    return pathlib.Path(graded.course) / "autograded" / student / EXERCISE / f"{EXERCISE}.ipynb"


def test_the_payloads_run_where_nothing_sanitizes_them(graded, page, tmp_path):
    """The control: mallory's autograded notebook through nbgrader's formgrade template as nbgrader ships it."""
    from tests.nbgrader_plugins.test_plugin_html import render
    stock = tmp_path / "stock.html"
    stock.write_text(render(nbformat.read(autograded(graded, "mallory"), as_version=4), course=False))
    fired = watched(page)
    page.add_init_script("window.$ = () => ({})")   # the formgrader's jQuery, which nbconvert's JS output calls
    page.goto(stock.as_uri())
    provoke(page)
    assert xss.FIRE_UNSANITIZED <= set(fired), sorted(xss.FIRE_UNSANITIZED - set(fired))


def test_a_submission_opened_in_the_formgrader_runs_nothing_and_can_be_graded(graded, grading_lab, page,
                                                                               screenshots):
    fired = watched(page)
    signed_in(page, grading_lab)
    response = page.goto(f"{grading_lab.base}/{submission_url(graded, 'mallory')}")
    assert "script-src 'self'" in response.headers["content-security-policy"]
    scores = page.locator("input.score")
    scores.first.wait_for()                     # the formgrader's own scripts ran and drew the grading form
    provoke(page)
    screenshots(page, "20-formgrader-mallory", full_page=True)
    assert fired == [], f"payloads ran in the formgrader: {sorted(set(fired))}"
    assert xss.active(page.content(), START, END) == []
    # The grading form still works under the policy: a manual score typed in goes into the gradebook.
    first = scores.first
    grade_id = first.get_attribute("id")
    first.fill("1")
    first.press("Tab")
    page.wait_for_timeout(1500)
    with Gradebook(f"sqlite:///{graded.course}/gradebook.db", "inside-vmap") as gb:
        assert gb.find_grade(grade_id, EXERCISE, EXERCISE, "mallory").manual_score == 1
    assert page.evaluate("window.__violations || []") == []


def test_its_feedback_runs_nothing(graded, page):
    feedback = pathlib.Path(graded.course) / "feedback" / "mallory" / EXERCISE / f"{EXERCISE}.html"
    fired = watched(page)
    page.goto(feedback.as_uri())
    provoke(page)
    assert fired == [], f"payloads ran in the feedback: {sorted(set(fired))}"
    assert xss.active(feedback.read_text(), "<body", "</body>") == []
    assert "outputs made" in feedback.read_text()           # the student's work is still there to read


def test_the_formgrader_in_jupyterlab_runs_nothing_and_the_server_offers_no_terminal(graded, grading_lab, page,
                                                                                     screenshots):
    fired = watched(page)
    page.goto(grading_lab.url("lab?reset"))
    page.locator(".jp-Launcher").wait_for()
    assert page.locator(".jp-LauncherCard", has_text="Terminal").count() == 0
    page.locator(".lm-MenuBar-itemLabel", has_text="Nbgrader").click()
    page.get_by_role("menuitem", name="Formgrader").click()
    frame_el = page.locator("iframe[src*='formgrader']").first
    frame_el.wait_for()
    frame = frame_el.element_handle().content_frame()
    frame.get_by_text("Manage Assignments").first.wait_for()
    frame.goto(f"{grading_lab.base}/{submission_url(graded, 'mallory')}")
    frame.locator("input.score").first.wait_for()
    provoke(page)
    screenshots(page, "21-formgrader-in-lab")
    assert fired == [], f"payloads ran in JupyterLab's formgrader: {sorted(set(fired))}"
    assert page.evaluate("window.__violations || []") == []
    status = json.loads(page.evaluate(
        "async () => JSON.stringify((await fetch('/api/terminals', {method: 'POST'})).status)"))
    assert status in (403, 404), status     # no terminal to open, whoever asks
