"""Each notebook and its MyST twin hold the same cells (`make sync-check`): lessons/NN-name.ipynb
with lessons/NN-name.md, and each exercise source exercises/NN-name/NN-name.ipynb with its
NN-name.md (paired by exercises/jupytext.toml), nbgrader metadata included.

The .md is the file to review and edit; `make lessons` re-executes a lesson's .ipynb from it and
rewrites the .md with jupytext's header. A missing notebook fails here, never skips.
"""

from pathlib import Path

import jupytext
import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
LESSONS = ROOT / "lessons"
EXERCISES = ROOT / "exercises"
KERNEL = "python3"           # the standard kernel: the lessons run in any Jupyter


def stems(folder, pattern):
    return {p.with_suffix("").relative_to(folder).as_posix() for p in folder.glob(pattern)
            if ".ipynb_checkpoints" not in p.parts} if folder.is_dir() else set()


LESSON_PAIRS = sorted(stems(LESSONS, "*.md") & stems(LESSONS, "*.ipynb"))
EXERCISE_PAIRS = sorted(stems(EXERCISES, "*/*.md") & stems(EXERCISES, "*/*.ipynb"))


def cells(nb):
    return [(cell.cell_type, cell.source.strip()) for cell in nb.cells]


def graded_cells(nb):
    """Cells with what nbgrader reads from them: ids, points, locks, solution and grade flags."""
    return [(cell.cell_type, cell.source.strip(), cell.metadata.get("nbgrader"),
             cell.metadata.get("tags")) for cell in nb.cells]


def myst_header(path):
    text = path.read_text(encoding="utf-8")
    header = yaml.safe_load(text.split("---\n")[1]) if text.startswith("---\n") else None
    return (header or {}).get("jupytext", {}).get("text_representation", {})


def lesson_packages():
    from grader import lessons
    return lessons.packages()


# ---- lessons -------------------------------------------------------------------------------------

def test_every_lesson_has_its_twin():
    md, ipynb = stems(LESSONS, "*.md"), stems(LESSONS, "*.ipynb")
    assert ipynb, f"no lesson notebooks under {LESSONS}"
    assert not md - ipynb, f"lessons/*.md without an .ipynb (run `make lessons`): {sorted(md - ipynb)}"
    assert not ipynb - md, f"lessons/*.ipynb without a MyST .md twin: {sorted(ipynb - md)}"


def numbered(stem: str) -> bool:
    return stem.split("-")[0].isdigit()


def test_every_lesson_package_has_its_lesson_notebook():
    numbers = sorted(int(stem.split("-")[0]) for stem in stems(LESSONS, "*.ipynb") if numbered(stem))
    assert numbers == [int(pkg[1:].split("_")[0]) for pkg in lesson_packages()]


def test_an_unnumbered_notebook_is_an_appendix():
    """The appendix (lessons/appendix-history) has no number and no package; anything else
    without a number is a misnamed lesson, which the numbering check above would not see."""
    others = sorted(stem for stem in stems(LESSONS, "*.ipynb") if not numbered(stem))
    assert "appendix-history" in others
    assert all(stem.startswith("appendix-") for stem in others), others


@pytest.mark.parametrize("stem", LESSON_PAIRS)
def test_twins_hold_the_same_cells(stem):
    md = jupytext.read(LESSONS / f"{stem}.md")
    ipynb = jupytext.read(LESSONS / f"{stem}.ipynb")
    assert cells(md) == cells(ipynb), f"lessons/{stem}.md and .ipynb differ: edit the .md, then `make lessons`"


@pytest.mark.parametrize("stem", LESSON_PAIRS)
def test_twins_name_the_course_kernel_and_myst(stem):
    assert myst_header(LESSONS / f"{stem}.md").get("format_name") == "myst", (
        f"lessons/{stem}.md has no jupytext MyST header (`make lessons` writes one)")
    md = jupytext.read(LESSONS / f"{stem}.md")
    ipynb = jupytext.read(LESSONS / f"{stem}.ipynb")
    for nb, suffix in ((md, "md"), (ipynb, "ipynb")):
        kernel = nb.metadata.get("kernelspec", {}).get("name")
        assert kernel == KERNEL, f"lessons/{stem}.{suffix} names kernel {kernel!r}, not {KERNEL!r} (`make lessons`)"


# ---- exercise sources ----------------------------------------------------------------------------

def test_every_exercise_source_has_its_twin():
    md, ipynb = stems(EXERCISES, "*/*.md"), stems(EXERCISES, "*/*.ipynb")
    assert ipynb, f"no exercise notebooks under {EXERCISES}"
    assert not ipynb - md, f"exercises/*/*.ipynb without a MyST .md twin: {sorted(ipynb - md)}"
    assert not md - ipynb, f"exercises/*/*.md without an .ipynb: {sorted(md - ipynb)}"


@pytest.mark.parametrize("stem", EXERCISE_PAIRS)
def test_exercise_twins_are_paired_by_jupytext_config(stem):
    """jupytext finds exercises/jupytext.toml for the notebook and keeps nbgrader's metadata."""
    path = EXERCISES / f"{stem}.ipynb"
    config = jupytext.config.load_jupytext_config(str(path.parent))
    assert config is not None and config.default_formats(str(path)) == "ipynb,md:myst"
    assert "nbgrader" in config.cell_metadata_filter.split(",")


@pytest.mark.parametrize("stem", EXERCISE_PAIRS)
def test_exercise_twins_hold_the_same_cells_and_nbgrader_metadata(stem):
    md = jupytext.read(EXERCISES / f"{stem}.md")
    ipynb = jupytext.read(EXERCISES / f"{stem}.ipynb")
    assert graded_cells(md) == graded_cells(ipynb), (
        f"exercises/{stem}.md and .ipynb differ (cells or their nbgrader metadata): edit the .md, "
        f"then `jupytext --sync exercises/{stem}.md`")
    assert any(c.metadata.get("nbgrader", {}).get("grade") for c in md.cells)


@pytest.mark.parametrize("stem", EXERCISE_PAIRS)
def test_exercise_twins_are_myst_and_name_one_kernel(stem):
    assert myst_header(EXERCISES / f"{stem}.md").get("format_name") == "myst", stem
    md = jupytext.read(EXERCISES / f"{stem}.md")
    ipynb = jupytext.read(EXERCISES / f"{stem}.ipynb")
    assert md.metadata.get("kernelspec") == ipynb.metadata.get("kernelspec"), stem
