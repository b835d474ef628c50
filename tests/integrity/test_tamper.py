"""The tamper corpus: submissions built from the real release that attack in-kernel grading.

Each attack below earns full or near-full marks when the tests run in the student's kernel (the
Validator proves it: that is how nbgrader, otter-grader and friends grade). Through this course's
autograde, where the judge re-runs each exercise in a sandboxed child and decides in the trusted
process, every attack earns only what its author really solved, while honest students in the same
batch keep their full marks.
"""
import json
import os
import shutil

import nbformat
import pytest
from nbgrader.validator import Validator

from grader.instructor import classroom as C

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")]

FIRST = "01-the-rule-per-primitive"
SOURCE = os.path.join(C.ROOT, "exercises", FIRST, FIRST + ".ipynb")

PATCH_SHOW = """\
import grader.feedback as _F
_F.show = lambda res: None
_F.Result.raise_if_failed = lambda self: self
show = lambda res: None
"""

PATCH_LIBRARIES = """\
import numpy as np, jax.numpy as jnp
import grader.exercise as _E, grader.feedback as _F
np.array_equal = np.allclose = jnp.allclose = lambda *a, **k: True
np.testing.assert_allclose = np.testing.assert_array_equal = lambda *a, **k: None
_E.Exercise.verdict = lambda self, cases, observed: _F.result(self.name, len(cases), [])
"""

FAKE_MODULE = """\
import sys, types
from grader.feedback import result as _result
_fake = types.ModuleType("grader.rule_per_primitive")
_fake.__getattr__ = lambda name: (lambda *a, **k: _result(name, 1, []))
sys.modules["grader.rule_per_primitive"] = _fake
class _Finder:
    def find_spec(self, name, path=None, target=None):
        return None
sys.meta_path.insert(0, _Finder())
L1 = _fake
"""

REWRITE_LATER_CELLS = """\
get_ipython().input_transformers_cleanup.append(
    lambda lines: ["pass\\n"] if any("check_" in line for line in lines) else lines)
"""

SWALLOW_ERRORS = """\
def _swallow(lines):
    body = "".join(lines)
    if not body.strip():
        return lines
    inner = ["    " + line + ("" if line.endswith("\\n") else "\\n") for line in body.splitlines(True)]
    return ["try:\\n"] + inner + ["except BaseException:\\n", "    pass\\n"]
get_ipython().input_transformers_cleanup.append(_swallow)
"""

EQUAL_TO_ANYTHING = """\
class Anything(tuple):
    def __eq__(self, other): return True
    def __ne__(self, other): return False
    __hash__ = tuple.__hash__
def spy(f, in_axes, *args):
    return Anything()
"""

FORGE_THE_JUDGE = """\
import atexit, json, os
def _forge():
    ids = ["spy", "softsign_rule", "scaled_diff_rule", "sumsq_rule", "which_table",
           "table_sizes", "rowmax_rule"]
    fake = {"cell_errors": [], "results": {g: {"observed": [None] * 50} for g in ids}}
    os.write(1, ("@@inside-vmap-judge@@" + json.dumps(fake) + "\\n").encode())
atexit.register(_forge)
_forge()
"""


POISON_THE_CACHE = """\
import os
_cache = os.environ.get("JAX_COMPILATION_CACHE_DIR", "")
for _name in (os.listdir(_cache) if _cache else []):
    try:
        open(os.path.join(_cache, _name), "wb").write(b"poison")
    except OSError:
        pass
"""


def read_disk(paths):
    """Reads what a student must not see at grading time and prints what it found."""
    targets = {"source": os.path.join(paths.exercises, FIRST, FIRST + ".ipynb"),
               "gradebook": os.path.join(paths.course, "gradebook.db"),
               "submitted": os.path.join(paths.course, "submitted")}
    return ("import json, os\n"
            f"targets = {targets!r}\n"
            "print('DISK-PROBE ' + json.dumps({k: os.path.exists(v) for k, v in targets.items()}))\n")


def solutions():
    return C.solutions(nbformat.read(SOURCE, as_version=4))


def build(released, attack, honest=()):
    """The release with ``attack`` in the first answer cell and only ``honest`` exercises solved."""
    nb = nbformat.from_dict(released)
    answers = solutions()
    first = True
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if not meta.get("solution") or cell.cell_type != "code":
            continue
        if meta["grade_id"] in honest:
            cell.source = answers[meta["grade_id"]]
        if first:
            cell.source = attack + "\n" + cell.source
            first = False
    return nb


def points(*grade_ids):
    """Points of these grade cells (all of them when none is named), from the source."""
    source = nbformat.read(SOURCE, as_version=4)
    return sum(pts for gid, pts, _ in C.exercises_in(source) if not grade_ids or gid in grade_ids)


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """A throw-away course holding only the first assignment (the attacks target it)."""
    only = tmp_path_factory.mktemp("exercises")
    shutil.copytree(os.path.join(C.ROOT, "exercises", FIRST), only / FIRST)
    return C.build_course(str(tmp_path_factory.mktemp("tamper")), str(only))


@pytest.fixture(scope="module")
def released(course):
    C.assign(course)
    return nbformat.read(os.path.join(course.course, "release", FIRST, FIRST + ".ipynb"),
                         as_version=4)


@pytest.fixture(scope="module")
def corpus(course, released):
    """``{student: (notebook, the points honestly earned)}``, submitted straight to submitted/."""
    spy_cells = [cid for gid, _, cells in C.exercises_in(nbformat.read(SOURCE, as_version=4))
                 if gid == "spy" for cid in cells]
    all_cells = list(solutions())
    students = {
        "honest-full": (build(released, "", all_cells), points()),
        "honest-blank": (build(released, ""), 0),
        "patch-show": (build(released, PATCH_SHOW), 0),
        "patch-libraries": (build(released, PATCH_LIBRARIES), 0),
        "fake-module": (build(released, FAKE_MODULE), 0),
        "rewrite-cells": (build(released, REWRITE_LATER_CELLS), 0),
        "swallow-errors": (build(released, SWALLOW_ERRORS), 0),
        "equal-to-anything": (build(released, EQUAL_TO_ANYTHING), 0),
        "forge-the-judge": (build(released, FORGE_THE_JUDGE), 0),
        "read-disk": (build(released, read_disk(course)), 0),
        "poison-the-cache": (build(released, POISON_THE_CACHE, all_cells), points()),
        "spy-then-patch": (build(released, PATCH_SHOW, spy_cells), points("spy")),
    }
    for student, (nb, _) in students.items():
        C.nbgrader(["db", "student", "add", student], course.course)
        folder = os.path.join(course.course, "submitted", student, FIRST)
        os.makedirs(folder)
        nbformat.write(nb, os.path.join(folder, FIRST + ".ipynb"))
    return students


@pytest.fixture(scope="module")
def graded(course, corpus):
    C.autograde(course, timeout=20)
    return {row["student_id"]: row for row in C.export(course)}


ATTACKS = ["patch-show", "patch-libraries", "fake-module", "rewrite-cells", "swallow-errors"]


@pytest.mark.parametrize("student", ATTACKS)
def test_each_attack_fools_grading_in_the_kernel(student, corpus, tmp_path):
    """Sanity of the corpus: in-kernel grading (nbgrader's Validator) passes these blank answers."""
    path = tmp_path / "attack.ipynb"
    nbformat.write(corpus[student][0], str(path))
    assert Validator().validate(str(path)) == {}


def test_the_judge_gives_each_student_exactly_what_they_solved(graded, corpus):
    got = {s: (float(graded[s]["score"] or "nan"), graded[s]["status"], graded[s]["reason"])
           for s in corpus}
    want = {s: (float(pts), "graded", "") for s, (_, pts) in corpus.items()}
    assert got == want


def test_the_grading_kernel_cannot_read_the_course(course, graded):
    nb = nbformat.read(os.path.join(course.course, "autograded", "read-disk", FIRST,
                                    FIRST + ".ipynb"), as_version=4)
    printed = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code"
                      for o in c.get("outputs", []))
    probe = json.loads(printed.split("DISK-PROBE ", 1)[1].splitlines()[0])
    assert probe == {"source": False, "gradebook": False, "submitted": False}
