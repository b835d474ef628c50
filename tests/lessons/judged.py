"""An assignment's source notebook as the judge is handed it (grader.judge.runner.judge): as nbgrader
releases it, or with some answer cells replaced by what a student wrote. Its callers skip without
nbgrader (JAX 0.4.38's venv has none), so nbgrader is imported only when a release is made."""
import pathlib

import nbformat

ROOT = pathlib.Path(__file__).resolve().parents[2]


def source(assignment: str):
    """The instructor's notebook of ``assignment``: every solution and hidden test in place."""
    return nbformat.read(ROOT / "exercises" / assignment / f"{assignment}.ipynb", as_version=4)


def released(assignment: str):
    """The notebook as nbgrader releases it: ClearSolutions with the course's own stub."""
    from nbgrader.preprocessors import ClearSolutions
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(ROOT / "course")).load_config()
    nb, _ = ClearSolutions(config=config).preprocess(source(assignment), {})
    return nb


def with_answers(assignment: str, answers: dict):
    """The source notebook with each answer cell that defines a name in ``answers`` replaced by it."""
    nb = source(assignment)
    for cell in nb.cells:
        if cell.cell_type == "code" and cell.metadata.get("nbgrader", {}).get("solution"):
            for name, code in answers.items():
                if f"def {name}(" in cell.source:
                    cell.source = code
    return nb


# ---- what every assignment's judged test asserts -------------------------------------------------

def verdicts(assignment: str, matching: dict, limits) -> dict:
    """The judge's verdicts on the instructor's notebook, the released stubs and the
    pattern-matching student's answers (``matching``: needed name -> cell source)."""
    from grader.judge import runner
    return {kind: runner.judge(nb, limits) for kind, nb in (
        ("solved", source(assignment)), ("blank", released(assignment)),
        ("matching", with_answers(assignment, matching)))}


def assert_solved_earns_every_point(solved: dict, graded: set) -> None:
    assert set(solved) == graded
    assert all(r.passed for r in solved.values()), {g: r.summary() for g, r in solved.items()}


def assert_earns_nothing(results: dict, graded: set) -> None:
    """Neither a point nor a manual-grading flag on any graded exercise."""
    assert set(results) == graded and not any(r.passed or r.manual for r in results.values()), {
        g: r.summary() for g, r in results.items()}


def assert_matcher_earns_no_more_than_a_blank(matching: dict, graded: set) -> None:
    assert_earns_nothing(matching, graded)
    for res in matching.values():          # failed on the cases, each with a hint, not a crash
        assert res.findings and all(f.hint for f in res.findings)
