"""Each lessons/NN-name.ipynb and its MyST twin lessons/NN-name.md hold the same cells (`make sync-check`).

The .md is the file to edit; `make lessons` re-executes the .ipynb from it and rewrites the .md with jupytext's header.
"""

from pathlib import Path

import jupytext
import pytest
import yaml

LESSONS = Path(__file__).resolve().parent.parent / "lessons"
KERNEL = "inside-vmap"


def stems(suffix):
    return {p.stem for p in LESSONS.glob(f"*{suffix}")} if LESSONS.is_dir() else set()


PAIRS = sorted(stems(".md") & stems(".ipynb"))


def cells(nb):
    return [(cell.cell_type, cell.source.strip()) for cell in nb.cells]


def test_every_lesson_has_its_twin():
    md, ipynb = stems(".md"), stems(".ipynb")
    assert not md - ipynb, f"lessons/*.md without an .ipynb (run `make lessons`): {sorted(md - ipynb)}"
    assert not ipynb - md, f"lessons/*.ipynb without a MyST .md twin: {sorted(ipynb - md)}"


@pytest.mark.parametrize("stem", PAIRS)
def test_twins_hold_the_same_cells(stem):
    md = jupytext.read(LESSONS / f"{stem}.md")
    ipynb = jupytext.read(LESSONS / f"{stem}.ipynb")
    assert cells(md) == cells(ipynb), f"lessons/{stem}.md and .ipynb differ: edit the .md, then `make lessons`"


@pytest.mark.parametrize("stem", PAIRS)
def test_twins_name_the_course_kernel_and_myst(stem):
    text = (LESSONS / f"{stem}.md").read_text(encoding="utf-8")
    header = yaml.safe_load(text.split("---\n")[1]) if text.startswith("---\n") else None
    representation = (header or {}).get("jupytext", {}).get("text_representation", {})
    assert representation.get("format_name") == "myst", (
        f"lessons/{stem}.md has no jupytext MyST header (`make lessons` writes one)")
    md = jupytext.read(LESSONS / f"{stem}.md")
    ipynb = jupytext.read(LESSONS / f"{stem}.ipynb")
    for nb, suffix in ((md, "md"), (ipynb, "ipynb")):
        kernel = nb.metadata.get("kernelspec", {}).get("name")
        assert kernel == KERNEL, f"lessons/{stem}.{suffix} names kernel {kernel!r}, not {KERNEL!r} (`make lessons`)"
