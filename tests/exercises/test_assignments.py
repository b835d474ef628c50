"""Release hygiene: the source passes its own tests, the release passes none and leaks nothing."""
import pathlib
import re

import nbformat
import pytest
from nbgrader.tests import run_nbgrader
from nbgrader.utils import compute_checksum
from nbgrader.validator import Validator

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXERCISES = ROOT / "exercises"


def assignments():
    found = EXERCISES.glob("*/*.ipynb")
    return sorted({p.parent.name for p in found if ".ipynb_checkpoints" not in p.parts})


def test_there_are_assignments():
    # The tests below are parametrized by assignment: with none, they would all be skipped.
    assert assignments(), f"no source assignments under {EXERCISES}"

MARKERS = ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS")


def notebooks(assignment):
    return sorted((EXERCISES / assignment).glob("*.ipynb"))


def regions(source, begin, end):
    """Lines between nbgrader's begin/end markers in one cell's source."""
    inside, found = False, []
    for line in source.splitlines():
        if begin in line:
            inside = True
        elif end in line:
            inside = False
        elif inside and line.strip() and not line.strip().startswith("#"):
            found.append(line.strip())
    return found


@pytest.fixture
def release(course_dir):
    def build(assignment):
        run_nbgrader(["generate_assignment", assignment, "--force"])
        return course_dir / "release" / assignment
    return build


@pytest.mark.parametrize("assignment", assignments())
def test_source_passes_every_grade_cell(assignment):
    for nb in notebooks(assignment):
        assert Validator().validate(str(nb)) == {}, nb.name


@pytest.mark.parametrize("assignment", assignments())
def test_release_passes_no_grade_cell_and_leaks_nothing(assignment, release):
    out = release(assignment)
    for nb in notebooks(assignment):
        released = out / nb.name
        assert Validator(invert=True).validate(str(released)) == {}, nb.name
        text = released.read_text()
        assert not any(m in text for m in MARKERS)
        src = nbformat.read(nb, as_version=4)
        secret = [line for cell in src.cells
                  for b, e in (("BEGIN SOLUTION", "END SOLUTION"),
                               ("BEGIN HIDDEN TESTS", "END HIDDEN TESTS"))
                  for line in regions(cell.source, b, e)]
        rel_lines = {ln.strip() for c in nbformat.read(released, as_version=4).cells
                     for ln in c.source.splitlines()}
        # A hidden line may repeat a visible one (same call, hidden=True differs); require the
        # exact hidden/solution line to be absent unless it also appears outside the markers.
        visible = {ln.strip() for c in src.cells for ln in _outside_markers(c.source)}
        leaked = [ln for ln in secret if ln in rel_lines and ln not in visible]
        assert leaked == []


def secret_lines(nb_path) -> list[str]:
    """Solution and hidden-test lines of a source notebook that appear nowhere outside them."""
    src = nbformat.read(nb_path, as_version=4)
    visible = {ln.strip() for c in src.cells for ln in _outside_markers(c.source)}
    return [line for cell in src.cells
            for b, e in (("BEGIN SOLUTION", "END SOLUTION"), ("BEGIN HIDDEN TESTS", "END HIDDEN TESTS"))
            for line in regions(cell.source, b, e) if line not in visible]


def released_lines(path) -> set[str]:
    """Every line a released file holds (a notebook's cell sources and outputs, or its text)."""
    if path.suffix == ".ipynb":
        nb = nbformat.read(path, as_version=4)
        texts = [c.source for c in nb.cells] + [str(o) for c in nb.cells for o in c.get("outputs", [])]
    else:
        texts = [path.read_text(errors="replace")]
    return {ln.strip() for t in texts for ln in t.splitlines()}


@pytest.mark.parametrize("assignment", assignments())
def test_release_holds_no_md_twin_and_no_secret_line(assignment, release):
    """The MyST twin holds the solutions and hidden tests: it must never be released, and no
    released file may hold a solution or hidden-test line."""
    assert sorted((EXERCISES / assignment).glob("*.md")), "the source has its MyST twin"
    out = release(assignment)
    files = [p for p in out.rglob("*") if p.is_file()]
    assert files and not [p.name for p in files if p.suffix == ".md"]
    secret = {line for nb in notebooks(assignment) for line in secret_lines(nb)}
    assert secret
    for path in files:
        text = path.read_text(errors="replace")
        assert not any(m in text for m in MARKERS), path.name
        assert secret.isdisjoint(released_lines(path)), (path.name, sorted(secret & released_lines(path)))


@pytest.mark.parametrize("assignment", assignments())
def test_release_checksums_match_its_cells(assignment, release):
    out = release(assignment)
    for nb in notebooks(assignment):
        rel = nbformat.read(out / nb.name, as_version=4)
        graded = [c for c in rel.cells if c.metadata.get("nbgrader", {}).get("checksum")]
        assert graded
        for cell in graded:
            assert cell.metadata.nbgrader["checksum"] == compute_checksum(cell)


@pytest.mark.parametrize("assignment", assignments())
def test_every_grade_cell_has_points_and_a_unique_id(assignment):
    for nb in notebooks(assignment):
        cells = [c.metadata.get("nbgrader", {}) for c in nbformat.read(nb, as_version=4).cells]
        ids = [m["grade_id"] for m in cells if m]
        assert len(ids) == len(set(ids))
        graded = [m for m in cells if m.get("grade")]
        assert graded and all(m.get("points", 0) > 0 and m.get("locked") for m in graded)


def _outside_markers(source):
    inside = False
    for line in source.splitlines():
        if re.search(r"BEGIN (SOLUTION|HIDDEN TESTS)", line):
            inside = True
        elif re.search(r"END (SOLUTION|HIDDEN TESTS)", line):
            inside = False
        elif not inside:
            yield line
