"""Text a student influenced, made safe to show (grader.nbgrader_plugins.safe), on the hostile
corpus: one inert line, a CSV cell no spreadsheet runs, ordinary text unchanged."""
import pytest

from grader.nbgrader_plugins import safe
from tests.fixtures.hostile import HOSTILE, inert_cell, inert_line

ORDINARY = ["Ada Lovelace", "Zoë Ångström-Núñez", "李雷", "مريم", "émoji 😀 ok", "a, b; c: d",
            "spy_answer: it calls jax.vmap itself", "late by 2 d 3 h; penalty 1.3 points"]


@pytest.mark.parametrize("text", HOSTILE)
def test_every_hostile_string_comes_out_one_inert_line(text):
    assert inert_line(safe.text(text)) and inert_line(safe.line(text))
    assert "\n" not in safe.text(text) and "\r" not in safe.line(text)


@pytest.mark.parametrize("text", HOSTILE)
def test_every_hostile_string_comes_out_a_cell_no_spreadsheet_runs(text):
    assert inert_cell(safe.cell(text))


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_text_is_unchanged(text):
    assert safe.text(text) == safe.line(text) == safe.cell(text) == text


def test_what_acted_is_still_there_to_read():
    """An escape is shown, not dropped: the instructor sees what the student tried."""
    assert safe.text("\x1b[32mgraded") == "\\x1b[32mgraded"
    assert safe.text("abc\u202egnp") == "abc\\u202egnp"
    assert safe.cell("=1+1") == "'=1+1"


def test_a_long_value_is_cut_and_says_so():
    shown = safe.text("x" * 10_000, limit=100)
    assert shown.startswith("x" * 100) and shown.endswith("[... 9900 more characters]")


def test_a_line_keeps_its_indentation():
    assert safe.line("  [1/2] ada  graded") == "  [1/2] ada  graded"
    assert safe.line("  a\nb") == "  a b"


def test_non_strings_and_none():
    assert safe.text(3.5) == "3.5" and safe.cell(None) == "" and safe.cell(-1) == "'-1"
