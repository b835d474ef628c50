"""The course as a student meets it: JupyterLab in Chromium, driven by Playwright.

Lessons 1, 3 and 4 run top to bottom without an error and draw their figures; exercise 1 arrives through nbgrader's
assignment list; a wrong self-check prediction shows its verdict once and the run goes on past it; a wrong answer gets
the targeted feedback (what failed, expected against got, the hint), the corrected answer passes, and nbgrader's
Validate button checks the saved notebook. Exercise 3, released by
nbgrader, gives a rule-of-thumb answer its hint and passes the lesson's reasoning. Exercise 4, as released, answered
in its editors (the instructor's solutions, a wrong self-check prediction), runs top to bottom: each check shows its
verdict and no course cell shows an error. Every step leaves a screenshot in build/screenshots/.
"""
from __future__ import annotations

import pathlib
import re

import nbformat
import pytest

from tests.fixtures.solutions import solved_cell

pytestmark = pytest.mark.browser

ROOT = pathlib.Path(__file__).resolve().parents[2]

LESSON = "lessons/01-the-rule-per-primitive.ipynb"
# Each lesson run top to bottom: its screenshots' prefix (lesson 1 keeps the plain names), the figures it draws.
LESSONS = {LESSON: ("", 1), "lessons/03-batching-whole-programs.ipynb": ("lesson-3-", 2),
           "lessons/04-vmap-meets-autodiff.ipynb": ("lesson-4-", 1)}
EXERCISE = "01-the-rule-per-primitive"
RUN_ALL_TIMEOUT_MS = 180_000
CELL_TIMEOUT_MS = 60_000

# JupyterLab 4 renders an error (a traceback) and text on stderr alike: as stderr-typed text. Both alarm a student.
STDERR_MIME = "application/vnd.jupyter.stderr"

WRONG_RULE = '''def moments_rule(prim, vals, dims, *, axis):
    """Batching rule for moments: [mean along axis, x - mean], the batch axis left in place."""
    (x,), (d,) = vals, dims
    a = axis if axis < d else axis + 1
    mean, centred = prim.bind(x, axis=a)
    return [mean, centred], [d, d]'''
RIGHT_RULE = WRONG_RULE.replace("[d, d]", "[d - 1 if a < d else d, d]")
# A plausible wrong prediction: the in_axes copied as the tracer's batch dim.
WRONG_PREDICTION = "tracer_prediction = (-1, (2, 3), (2, 3, 4))"

# The notebook's state, read from the DOM: every code cell's prompt and the outputs that would alarm a student.
NOTEBOOK_STATE = f"""() => {{
    const nb = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook');
    if (!nb) return null;
    const prompts = [...nb.querySelectorAll('.jp-CodeCell .jp-InputArea-prompt')].map(p => p.textContent.trim());
    return {{
        cells: prompts.length,
        pending: prompts.filter(p => p === '[*]:').length,
        done: prompts.filter(p => /^\\[\\d+\\]:$/.test(p)).length,
        errors: [...nb.querySelectorAll('.jp-OutputArea-output[data-mime-type="{STDERR_MIME}"]')]
            .map(e => e.innerText.slice(0, 2000)),
        images: nb.querySelectorAll('.jp-OutputArea-output img').length,
    }};
}}"""

KERNEL_READY = """() => {
    const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
    const indicator = panel && panel.querySelector('.jp-NotebookPanel-toolbar .jp-Notebook-ExecutionIndicator');
    const bar = document.querySelector('#jp-main-statusbar');
    return !!indicator && indicator.dataset.status === 'idle' && !!bar
        && /Python 3 \\(ipykernel\\) \\| Idle/.test(bar.innerText);
}"""


def open_notebook(page, lab, path: str):
    """Open `path` in a fresh workspace and wait for its kernel to be idle; returns the notebook panel."""
    page.goto(lab.url(f"lab/tree/{path}?reset"))
    panel = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden)")
    panel.locator(".jp-Notebook .jp-Cell").first.wait_for()
    # The toolbar's indicator says "idle" before any kernel exists; the status bar names the kernel once it is
    # connected ("No Kernel | Initializing" until then), so wait for both.
    page.wait_for_function(KERNEL_READY, timeout=CELL_TIMEOUT_MS)
    return panel


def code_cell(panel, source: str):
    """The code cell whose editor holds `source`."""
    return panel.locator(".jp-CodeCell").filter(has=panel.page.locator(".cm-content", has_text=source))


def run_cell(cell):
    """Run one cell with Shift+Enter, as a student does, and wait for a new execution count."""
    prompt = cell.locator(".jp-InputArea-prompt").first
    before = prompt.inner_text().strip()
    cell.locator(".cm-content").click()
    cell.page.keyboard.press("Shift+Enter")
    cell.page.wait_for_function(
        "([el, before]) => { const t = el.textContent.trim(); return /^\\[\\d+\\]:$/.test(t) && t !== before; }",
        arg=[prompt.element_handle(), before], timeout=CELL_TIMEOUT_MS)


def type_answer(cell, text: str):
    """Replace an answer cell's text through its editor: click, select all, type."""
    cell.locator(".cm-content").click()
    cell.page.keyboard.press("Control+a")
    # insert_text types the whole answer at once, so the editor's auto-indent and bracket closing stay out of it.
    cell.page.keyboard.insert_text(text)
    # An empty line is a <br> in its .cm-line, whose text is then "\n".
    lines = [line.removesuffix("\n") for line in cell.locator(".cm-content .cm-line").all_inner_texts()]
    assert "\n".join(lines).strip() == text.strip(), f"the editor holds {lines!r}"


def to_top(locator):
    locator.evaluate("el => el.scrollIntoView({block: 'start'})")


def run_all(page) -> dict:
    """Run > Run All Cells, as a student does; the notebook's state once every code cell has run, or once nothing
    is queued any more and an error stopped the run."""
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
    page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
    page.wait_for_function(f"() => {{ const s = ({NOTEBOOK_STATE})(); return s && s.pending + s.done > 0; }}")
    page.wait_for_function(
        f"() => {{ const s = ({NOTEBOOK_STATE})(); "
        "return s && s.pending === 0 && (s.done === s.cells || s.errors.length > 0); }",
        timeout=RUN_ALL_TIMEOUT_MS)
    return page.evaluate(NOTEBOOK_STATE)


def selfcheck_wrong_then_run_on(page, panel, screenshots):
    """A wrong prediction, then "Run Selected Cell and All Below": the self-check shows one verdict and raises
    nothing, so the run goes on; the next prediction, still as released (None), is "not answered yet", and
    nothing on the way stops the run."""
    prediction = code_cell(panel, "tracer_prediction = ")    # before and after the answer is typed
    check = code_cell(panel, "L1.selfcheck_tracer(tracer_prediction)")
    following = code_cell(panel, "L1.selfcheck_route(route_prediction)")
    assert prediction.count() == 1 and check.count() == 1 and following.count() == 1
    type_answer(prediction, WRONG_PREDICTION)
    prediction.locator(".cm-content").click()
    page.keyboard.press("Escape")            # command mode: the run starts at the selected cell
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
    page.get_by_role("menuitem", name="Run Selected Cell and All Below").click()
    following.locator(".inside-vmap-result").wait_for(timeout=CELL_TIMEOUT_MS)
    verdicts = check.locator(".inside-vmap-result")
    assert verdicts.count() == 1, f"{verdicts.count()} verdicts"
    # The DOM's text, laid out or not: JupyterLab may hide cells scrolled out of view.
    text = verdicts.text_content()
    assert text.count("Not yet") == 1 and text.count("selfcheck_tracer") == 1, text
    assert "normalised" in text, f"the hint about the normalised batch dim is missing:\n{text}"
    assert check.locator(".jp-OutputArea-output").count() == 1, "the verdict is shown more than once"
    assert check.locator(f'.jp-OutputArea-output[data-mime-type="{STDERR_MIME}"]').count() == 0
    assert re.fullmatch(r"\[\d+\]:", check.locator(".jp-InputArea-prompt").first.text_content().strip())
    assert "not answered yet" in following.text_content()
    to_top(prediction)
    screenshots(page, "06b-exercise-wrong-selfcheck")


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda path: path.split("/")[1].split("-")[0])
def test_lesson_runs_clean_and_draws_its_figures(page, lab, screenshots, lesson):
    prefix, figures = LESSONS[lesson]
    shot = lambda name: screenshots(page, prefix + name)      # noqa: E731
    panel = open_notebook(page, lab, lesson)
    state = page.evaluate(NOTEBOOK_STATE)
    assert state["done"] == 0 and state["images"] == 0, "the lesson's copy should start without outputs"
    shot("01-lesson-opened")

    state = run_all(page)
    shot("02-lesson-ran")

    assert state["errors"] == [], f"{lesson} shows error output:\n" + "\n---\n".join(state["errors"])
    assert state["done"] == state["cells"], f"only {state['done']} of {state['cells']} code cells ran"
    assert state["images"] >= figures, f"{lesson} drew fewer than its {figures} figure(s)"
    figure = panel.locator(".jp-OutputArea-output img").first
    figure.scroll_into_view_if_needed()
    # A figure that rendered has pixels: a broken image has no natural width.
    assert figure.evaluate("img => img.complete && img.naturalWidth > 0")
    shot("03-lesson-figure")


def test_assignment_list_offers_exercise_1_and_fetches_it(page, lab, screenshots):
    page.goto(lab.url("lab?reset"))
    files = page.locator(".jp-FileBrowser .jp-DirListing-item")
    files.filter(has_text="lessons").wait_for()
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Nbgrader$")).click()
    page.get_by_role("menuitem", name="Assignment List").click()
    assignments = page.locator("#nbgrader-assignment-list")
    released = assignments.locator("#released_assignments_list")
    row = released.locator(".list_item", has_text=EXERCISE)
    fetch = row.get_by_role("button", name="Fetch")
    fetch.wait_for()
    assert assignments.is_visible() and fetch.is_visible()
    screenshots(page, "04-assignment-list")

    fetch.click()
    fetched = assignments.locator("#fetched_assignments_list .list_item", has_text=EXERCISE).first
    fetched.wait_for()
    assert (lab.root / EXERCISE / f"{EXERCISE}.ipynb").is_file()
    page.locator('.jp-FileBrowser [data-command="filebrowser:refresh"]').click()
    files.filter(has_text=EXERCISE).wait_for()
    screenshots(page, "05-assignment-fetched")


def test_exercise_feedback_wrong_then_right_then_validate(page, lab, exercise, screenshots):
    panel = open_notebook(page, lab, exercise)
    validate = panel.locator(".jp-NotebookPanel-toolbar .jp-ToolbarButton", has_text="Validate")
    assert validate.is_visible(), "nbgrader's Validate button is missing from the notebook toolbar"
    screenshots(page, "06-exercise-opened")

    run_cell(code_cell(panel, "from grader.lessons import l1_rule_per_primitive as L1"))
    selfcheck_wrong_then_run_on(page, panel, screenshots)
    answer = code_cell(panel, "def moments_rule")
    check = code_cell(panel, "show(L1.check_moments_rule(moments_rule))")
    assert answer.count() == 1 and check.count() == 1

    # A plausible misconception: both outputs keep the batch where it arrived.
    type_answer(answer, WRONG_RULE)
    run_cell(answer)
    run_cell(check)
    feedback = check.locator(".inside-vmap-result")
    feedback.wait_for()
    text = feedback.inner_text()
    assert "Not yet" in text and "check_moments_rule" in text, text
    for row in ("case", "expected", "got", "hint"):
        assert feedback.locator("th", has_text=re.compile(f"^{row}$")).count() >= 1, f"no {row!r} row:\n{text}"
    assert "you gave its batch dim as" in text or "the out dim you return" in text, \
        f"the hint about the out dim is missing:\n{text}"
    # The failed check also fails the cell (that is what nbgrader grades), with the plain-text summary.
    error = check.locator(f'.jp-OutputArea-output[data-mime-type="{STDERR_MIME}"]')
    assert "FAILED check_moments_rule" in error.inner_text()
    to_top(answer)
    screenshots(page, "07-exercise-wrong-answer")

    type_answer(answer, RIGHT_RULE)
    run_cell(answer)
    run_cell(check)
    feedback = check.locator(".inside-vmap-result")
    feedback.wait_for()
    text = feedback.inner_text()
    assert "Passed" in text and "Not yet" not in text, text
    assert check.locator(f'.jp-OutputArea-output[data-mime-type="{STDERR_MIME}"]').count() == 0
    to_top(answer)
    screenshots(page, "08-exercise-fixed")

    # Validate saves the notebook and runs it the way nbgrader will: moments passes now, the untouched spy does not.
    validate.click()
    dialog = page.locator(".jp-Dialog", has_text="Validation Results")
    dialog.wait_for(timeout=CELL_TIMEOUT_MS * 2)
    report = dialog.inner_text()
    screenshots(page, "09-validate")
    assert "FAILED check_spy" in report, report[:2000]
    assert "check_moments_rule" not in report, report[:2000]
    saved = (lab.root / exercise).read_text()
    assert "[d - 1 if a < d else d, d]" in saved


# Exercise 3's first graded answer: a rule of thumb ("nothing is widened, every output batched when anything is")
# that the lesson's select_n section corrects, then the reasoning the lesson teaches.
WRONG_COND_PLAN = '''def cond_plan(spec):
    """Predict vmap's treatment of the described cond: kept, widened operands, batched outputs."""
    out = [spec["pred"] or any(spec["operands"])] * len(spec["true"])
    return {"kept": not spec["pred"], "widened": [], "out_batched": out}'''
EXERCISE_3_SOURCE = ROOT / "exercises/03-batching-whole-programs/03-batching-whole-programs.ipynb"


def test_exercise_3_cond_plan_wrong_then_right(page, lab, exercise_3, screenshots):
    """Exercise 3 as nbgrader releases it: a rule-of-thumb cond_plan gets the hint about bdim_at_front's
    broadcast, the lesson's reasoning passes."""
    panel = open_notebook(page, lab, exercise_3)
    screenshots(page, "11-exercise-3-opened")
    run_cell(code_cell(panel, "from grader.lessons import l3_batching_whole_programs as L3"))
    answer = code_cell(panel, "def cond_plan")
    check = code_cell(panel, "show(L3.check_cond_plan(cond_plan))")
    assert answer.count() == 1 and check.count() == 1

    type_answer(answer, WRONG_COND_PLAN)
    run_cell(answer)
    run_cell(check)
    feedback = check.locator(".inside-vmap-result")
    feedback.wait_for()
    text = feedback.inner_text()
    assert "Not yet" in text and "check_cond_plan" in text, text
    assert "bdim_at_front" in text, f"the hint about the broadcast of unbatched operands is missing:\n{text}"
    to_top(answer)
    screenshots(page, "12-exercise-3-wrong-answer")

    type_answer(answer, solved_cell(EXERCISE_3_SOURCE, "l3_ex1_answer"))
    run_cell(answer)
    run_cell(check)
    feedback = check.locator(".inside-vmap-result")
    feedback.wait_for()
    text = feedback.inner_text()
    assert "Passed" in text and "Not yet" not in text, text
    assert check.locator(f'.jp-OutputArea-output[data-mime-type="{STDERR_MIME}"]').count() == 0
    to_top(answer)
    screenshots(page, "13-exercise-3-fixed")


# Assignments answered in the browser, then run top to bottom: by assignment, a wrong prediction for each of its
# self-checks (its verdict says "Not yet" with the hints, and the run goes on); every other answer cell gets the
# instructor's solution.
ANSWERED_RUNS = {
    "04-vmap-meets-autodiff": {
        "l4_route_predictions": 'route_predictions = {call: "process_primitive" for call in range(1, 7)}'},
}
SELFCHECK_CALL = re.compile(r"\bshow\(L\d\.(selfcheck_\w+)\(")
GRADED_CALL = re.compile(r"\bshow\(L\d\.(check_\w+)\(")


def answer_cells(released):
    """{index among the notebook's cells: (grade id, its released text)} of every answer cell."""
    return {i: (c.metadata["nbgrader"]["grade_id"], c.source) for i, c in enumerate(released.cells)
            if c.metadata.get("nbgrader", {}).get("solution")}


@pytest.mark.parametrize("assignment", ANSWERED_RUNS, ids=lambda name: name.split("-")[0])
def test_an_answered_assignment_runs_clean(page, lab, fetched, screenshots, assignment):
    """The assignment as nbgrader releases it, answered in its editors, then Run All: every graded check shows
    "Passed", every self-check its "Not yet" with a hint, once each, and nothing shows error output."""
    wrong, notebook = ANSWERED_RUNS[assignment], fetched(assignment)
    source = ROOT / "exercises" / notebook
    shot = lambda name: screenshots(page, f"exercise-{assignment[:2]}-{name}")      # noqa: E731
    released = nbformat.read(lab.root / notebook, as_version=4)
    panel = open_notebook(page, lab, notebook)
    state = page.evaluate(NOTEBOOK_STATE)
    assert state["done"] == 0 and state["cells"] == sum(c.cell_type == "code" for c in released.cells)
    shot("01-opened")

    cells = panel.locator(".jp-Notebook .jp-Cell")
    assert cells.count() == len(released.cells)
    answers = answer_cells(released)
    assert set(wrong) < {grade_id for grade_id, _ in answers.values()}
    for i, (grade_id, text) in answers.items():
        cell = cells.nth(i)
        assert text.splitlines()[0] in cell.locator(".cm-content").text_content(), f"cell {i} is not {grade_id}"
        type_answer(cell, wrong.get(grade_id) or solved_cell(source, grade_id))

    state = run_all(page)
    shot("02-ran")
    assert state["errors"] == [], f"{assignment} shows error output:\n" + "\n---\n".join(state["errors"])
    assert state["done"] == state["cells"], f"only {state['done']} of {state['cells']} code cells ran"

    graded = {i: GRADED_CALL.search(c.source)[1] for i, c in enumerate(released.cells) if GRADED_CALL.search(c.source)}
    selfchecks = {i: SELFCHECK_CALL.search(c.source)[1] for i, c in enumerate(released.cells)
                  if SELFCHECK_CALL.search(c.source)}
    assert len(graded) >= 4 and selfchecks
    for i, name in {**graded, **selfchecks}.items():
        verdicts = cells.nth(i).locator(".inside-vmap-result")
        assert verdicts.count() == 1, f"{name}: {verdicts.count()} verdicts"
        text = verdicts.text_content()
        assert text.count(name) == 1, text
        if i in graded:
            assert "Passed" in text and "Not yet" not in text, text
        else:
            assert "Not yet" in text and verdicts.locator("th", has_text=re.compile("^hint$")).count(), text
        assert cells.nth(i).locator(".jp-OutputArea-output").count() == 1, f"{name}'s verdict is shown twice"
    to_top(cells.nth(next(iter(graded))))
    shot("03-checked")
