"""The lessons follow the student's JAX: no sentence names a release as the reader's ("0.10.2 here", "current JAX
0.12"), and no code cell compares JAX versions. A lesson prints the measured history instead
(`grader.core.history.ask(fact)`: release range -> behaviour, the reader's range marked, asked live), so what it says
is true on whichever release runs it.

The detectors are tested on known good and bad snippets first, so a detector that matches nothing fails here too.
"""
import re
from pathlib import Path

import jupytext
import pytest

LESSONS = Path(__file__).resolve().parent.parent / "lessons"
LESSON_FILES = sorted(LESSONS.glob("*.md"))

RELEASE = re.compile(r"(?<![\w.])0\.\d+(?:\.\d+){0,2}(?![\w.]*\d)")        # 0.4.38, 0.10, 0.12.0.1
# "as of" only before a release ("as of 0.12"): "as of any cond" makes nothing the reader's.
NOW = re.compile(r"\b(?:here|current|currently|today|now|nowadays|at present|at the moment)\b"
                 r"|\bas of (?:JAX |jax )?0\.\d", re.I)
FENCE = re.compile(r"^```.*?^```", re.S | re.M)
SENTENCE_END = re.compile(r"(?<=[.!?;])\)?\s+(?=[A-Z(*`_\-])|\n\s*\n|\n\s*[-*] ")

OP = r"(?:==|!=|<=|>=|<|>)"
VERSION_CODE = {
    "the course's parsed JAX version": re.compile(r"\bJAX_VERSION\b"),
    "jax.__version__ compared or taken apart":
        re.compile(rf"__version__\s*(?:{OP}|\[|\.(?:startswith|split|partition)\b|\bin\b)"),
    "a Reading's jax_version compared": re.compile(rf"\bjax_version\s*{OP}|{OP}\s*\w*\.jax_version\b"),
    "a version or release variable compared": re.compile(rf"\b\w*(?:version|release)\w*\b\s*(?:\(\))?\s*{OP}", re.I),
    "a release string compared":
        re.compile(rf"""(?:{OP}|\bin)\s*[(\[{{]?\s*["']0\.\d+|["']0\.\d+(?:\.\d+)*["']\s*{OP}"""),
    "a release tuple compared":
        re.compile(rf"{OP}\s*\(\s*0\s*,\s*\d+\s*,\s*\d+\s*\)|\(\s*0\s*,\s*\d+\s*,\s*\d+\s*\)\s*{OP}"),
    "a version parser": re.compile(r"\b(?:packaging\.version|version\.parse|LooseVersion|parse_version)\b"),
}


def sentences(markdown: str) -> list[str]:
    """The sentences of a markdown cell outside fenced code blocks, each on one line."""
    text = FENCE.sub(" ", markdown)
    return [" ".join(s.split()) for s in SENTENCE_END.split(text) if s.strip()]


# "0.4.36 to today": a range that ends at the newest release, which names no release as the reader's.
RANGE_TO_NOW = re.compile(rf"{RELEASE.pattern}\s+to\s+today\b", re.I)


def release_as_now(markdown: str) -> list[str]:
    """Sentences naming a release together with a word that makes it the reader's."""
    return [s for s in sentences(markdown)
            if RELEASE.search(RANGE_TO_NOW.sub(" ", s)) and NOW.search(RANGE_TO_NOW.sub(" ", s))]


def version_comparisons(code: str) -> list[str]:
    """What in a code cell compares JAX versions (comments ignored)."""
    lines = [line.split("#", 1)[0] for line in code.splitlines()]
    found = []
    for what, pattern in VERSION_CODE.items():
        for line in lines:
            if pattern.search(line):
                found.append(f"{what}: {line.strip()}")
    return found


@pytest.mark.parametrize("text", [
    "Newer JAX (0.10.2 here) has grown an undocumented `sum_match` argument.",
    "On current JAX 0.12 every rule lives in one table.",
    "Today, jax 0.12.0.1 keeps one table.",
    "The reading the course uses now comes from 0.11.2:\n\n* and more",
    'On jax 0.4.38 a "skippable" primitive short-circuits first;\non current JAX the rule is simply called.',
    "How these internals changed, 0.4.36 to today: 0.12 is what you have now.",
    "As of 0.12, every rule lives in one table.",
    "(Up to 0.8.1 it was so.) Now it is not: 0.9 changed it.",
])
def test_a_release_named_as_the_readers_is_found(text):
    assert release_as_now(text), text


@pytest.mark.parametrize("text", [
    "From 0.8.2 every rule lives in one table, and the cell below prints the history.",
    "Here is the installed code:",
    "This course grew out of two texts read on JAX 0.4.38. Here is your reading:",
    "```python\n# here: 0.10.2\n```\nA rule maps values to values.",
    "JAX 0.11 merged them: a `Jaxpr` carries its own consts.",
    "(Up to 0.8.1 the rule passes them through a helper first.) Here is `batch_jaxpr2`:",
    "The cond stays (0.6.1 stopped on an assertion; older releases made a `select_n` of it, as of any cond).",
    "# Appendix — How these internals changed, 0.4.36 to today",
])
def test_a_historical_release_or_a_plain_here_passes(text):
    assert not release_as_now(text), release_as_now(text)


@pytest.mark.parametrize("code", [
    "assert isinstance(aval_attr, property) == (core.JAX_VERSION < (0, 10, 0))",
    'if fresh.jax_version == "0.4.38":',
    'if jax.__version__ == "0.4.38":\n    pass',
    "assert version >= (0, 9, 0)",
    'if jax.__version__.startswith("0.4"):',
    "if core.JAX_VERSION[:2] == (0, 4):",
    "ok = (0, 8, 2) <= release_tuple",
    "from packaging.version import Version",
])
def test_a_version_comparison_is_found(code):
    assert version_comparisons(code), code


@pytest.mark.parametrize("code", [
    'print("jax", jax.__version__)',
    'readings = {f"your JAX ({fresh.jax_version})": fresh.counts}',
    "assert shape_of['d'] == (5, 2) and numbers[0] == (((0,), (0,)), ((), ()))",
    'layout = history("layout")  # split from 0.4.36 == (0, 4, 36)',
    "assert fresh.layout == core.layout()",
])
def test_code_that_compares_no_versions_passes(code):
    assert not version_comparisons(code), version_comparisons(code)


def test_there_are_lessons_to_read():
    assert LESSON_FILES, f"no lessons/*.md under {LESSONS}"


@pytest.mark.parametrize("path", LESSON_FILES, ids=lambda p: p.name)
def test_no_lesson_sentence_names_a_release_as_the_readers(path):
    found = [(i, s) for i, cell in enumerate(jupytext.read(path).cells) if cell.cell_type == "markdown"
             for s in release_as_now(cell.source)]
    assert not found, (f"{path.name} names a release as the reader's; print the measured history "
                       f"(grader.core.history.ask) instead:\n" + "\n".join(f"  cell {i}: {s}" for i, s in found))


@pytest.mark.parametrize("path", LESSON_FILES, ids=lambda p: p.name)
def test_no_lesson_code_compares_jax_versions(path):
    found = [(i, hit) for i, cell in enumerate(jupytext.read(path).cells) if cell.cell_type == "code"
             for hit in version_comparisons(cell.source)]
    assert not found, (f"{path.name} compares JAX versions; assert a history fact's `.holds` or what is true on "
                       f"every release instead:\n" + "\n".join(f"  cell {i}: {h}" for i, h in found))


# ---- the release history lives in the appendix (issue 23) ----------------------------------------
# A numbered lesson names no release: where a fact differs between releases it prints the history's line and links
# the appendix (lessons/appendix-history), which holds the tables. What may stay is the supported range itself
# ("measured on every release from 0.4.36 on", "0.4.36 to today"), which names no difference.
FULL_RELEASE = re.compile(r"(?<![\w.])0\.\d+\.\d+(?:\.\d+)?(?![\w.]*\d)|\b(?:JAX|jax|release|releases)\s+0\.\d+\b")
SUPPORTED_RANGE = re.compile(rf"{RELEASE.pattern}\s+(?:on\b|to\s+today\b)", re.I)
NUMBERED_LESSONS = [p for p in LESSON_FILES if p.name[:2].isdigit()]


def releases_named(text: str) -> list[str]:
    """The releases a lesson's cell names, the supported range left out."""
    return FULL_RELEASE.findall(SUPPORTED_RANGE.sub(" ", text))


@pytest.mark.parametrize("text", [
    "Up to 0.8.1 that table held only such rules; from 0.8.2 every rule is in it.",
    '    """A traced step\'s primitive under its newest spelling (pjit is jit from 0.7.0)."""',
    "JAX 0.11 merged them.",
    "the empty remainder of releases 0.4 and 0.5",
    "a const is moved up to 0.12.0.1",
])
def test_a_named_release_is_found(text):
    assert releases_named(text), text


@pytest.mark.parametrize("text", [
    "checked against a history measured on every release from 0.4.36 on.",
    "# Appendix — How these internals changed, 0.4.36 to today",
    "x = jnp.full(3, 0.5) * 0.25",
    "Whether that table holds every rule depends on the release (the appendix has which).",
])
def test_no_release_named_passes(text):
    assert not releases_named(text), releases_named(text)


def test_there_are_numbered_lessons():
    assert NUMBERED_LESSONS, f"no lessons/NN-*.md under {LESSONS}"


@pytest.mark.parametrize("path", NUMBERED_LESSONS, ids=lambda p: p.name)
def test_a_lesson_leaves_the_release_history_to_the_appendix(path):
    found = [(i, hit) for i, cell in enumerate(jupytext.read(path).cells) for hit in releases_named(cell.source)]
    assert not found, (f"{path.name} names releases; print the history's line (grader.core.history.ask(fact).line()) "
                       f"and link the appendix, which holds the table:\n"
                       + "\n".join(f"  cell {i}: {h}" for i, h in found))
