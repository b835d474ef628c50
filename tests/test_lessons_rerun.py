"""Every lesson cell can be run again: a student re-runs cells in any order, so a cell that holds only on its first
run (a cache that was cold, a rule that was not registered yet) fails them with an error they did not cause.

Each notebook of lessons/ runs in one kernel: every code cell twice in a row, then the whole notebook once more from
the top (so every cell also runs after all the cells below it). Any exception fails the test, naming the cell.
"""
from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from grader.core.text import strip_ansi

pytestmark = pytest.mark.slow

LESSONS = Path(__file__).resolve().parent.parent / "lessons"
NOTEBOOKS = sorted(LESSONS.glob("*.ipynb"))
PER_CELL_TIMEOUT_S = 600


def _last_lines(err: CellExecutionError, count: int = 4) -> str:
    """The end of the traceback, without Jupyter's colour codes: the error and the line that raised it."""
    lines = [line for line in strip_ansi(str(err)).strip().splitlines() if line.strip()]
    return " | ".join(lines[-count:])


def run_twice(path: Path) -> list[str]:
    """Execute ``path`` as described above; returns what ran, as "pass:cell" labels (for the failure message)."""
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, kernel_name="python3", timeout=PER_CELL_TIMEOUT_S,
                            resources={"metadata": {"path": str(path.parent)}})
    code = [(i, cell) for i, cell in enumerate(nb.cells) if cell.cell_type == "code"]
    ran = []
    with client.setup_kernel():
        for label, order in (("twice", [c for pair in code for c in (pair, pair)]), ("again", code)):
            for index, cell in order:
                ran.append(f"{label}:{index}")
                try:
                    client.execute_cell(cell, index)
                except CellExecutionError as err:
                    pytest.fail(f"{path.name} cell {index} fails when run again ({label}): {_last_lines(err)}")
    return ran


def test_there_are_notebooks_to_rerun():
    assert len(NOTEBOOKS) >= 3, NOTEBOOKS          # the lessons and the appendix


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_cell_runs_again(path):
    ran = run_twice(path)
    cells = sum(1 for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code")
    assert len(ran) == 3 * cells and cells > 0


def test_a_cell_that_cannot_run_twice_is_caught(tmp_path):
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("state = []"),
        nbformat.v4.new_code_cell("state.append(1)\nassert state == [1], 'only on the first run'"),
    ])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = tmp_path / "once.ipynb"
    nbformat.write(nb, path)
    with pytest.raises(pytest.fail.Exception, match=r"once.ipynb cell 1 fails when run again \(twice\)"):
        run_twice(path)
