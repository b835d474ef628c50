"""The pattern-matching students, through the real judge: submissions built from the release of both
assignments, graded by `make autograde`'s own path (nbgrader's autograde with the course's judge) and read
back from the export, as an instructor reads them.

Beside each exercise's tests (tests/lessons/l*/test_<exercise>.py) the same answers are judged through the
trusted verdict path on many draws of hidden cases; here one batch shows the whole chain agrees: a student who
copies the nearest lesson cell into every answer, one who transcribes JAX's own helpers, one who fits the visible
cases and one who asks vmap to answer what the exercise asks them to reason out each score what a blank
scores (or go to a human), while the honest student in the same batch gets every point.
"""
import os

import nbformat
import pytest

pytest.importorskip("nbgrader", reason="grading needs the instructor tools (JAX 0.4.38's venv has none)")

from tools import classroom as C

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")]

FIRST, SECOND = "01-the-rule-per-primitive", "02-where-the-axis-goes"

COPIES = {   # the nearest lesson cell, adapted
    FIRST: {
        "spy": '''
import jax
def spy(f, in_axes, *args):
    report = []
    def watched(*xs):                    # lesson 1: ask in_axes, read the tracer at your level
        report[:] = [[None] if a is None else [int(x.batch_dim)] for x, a in zip(xs, in_axes)]
        return f(*xs)
    jax.vmap(watched, in_axes=in_axes)(*args)
    return report
''',
        "moments_rule": '''
def moments_rule(prim, vals, dims, **params):     # lesson 1's vectorized rule
    (x,), (d,) = vals, dims
    return prim.bind(x, **params), d
''',
        "stack2_rule": '''
def stack2_rule(prim, vals, dims, **params):      # lesson 1's broadcasting rule
    moved = [jnp.expand_dims(v, 0) if d is None else jnp.moveaxis(v, d, 0)
             for v, d in zip(vals, dims)]
    return prim.bind(*moved, **params), 0
''',
        "prefix_rule": '''
def prefix_rule(prim, axis_data, vals, dims, **params):
    (x,), (d,) = vals, dims
    if d is None:
        return x, None
    return jnp.cumsum(x, axis=d), d
''',
    },
    SECOND: {
        "where_it_lands": '''
def where_it_lands(program, in_dims):              # lesson 2: nothing moves
    dims = dict(in_dims)
    for out, op, *args in program["steps"]:
        dims[out] = next((dims[a] for a in args if isinstance(a, str) and dims[a] is not None), None)
    return {out: dims[out] for out, *_ in program["steps"]}
''',
        "widened": '''
def widened(jaxpr, in_axes, size):                # a broadcast to the batch size
    unmapped = tuple(i for i, a in enumerate(in_axes) if a is None)
    return {k: unmapped for k, e in enumerate(jaxpr.eqns)
            if e.primitive.name == "broadcast_in_dim" and size in e.outvars[0].aval.shape}
''',
        "cheap_where": '''
def cheap_where(pred, x, y):
    return jnp.where(pred, x, y)
''',
    },
}

TRANSCRIBES = {   # JAX's own helper (or the course's), written out
    FIRST: {
        "spy": '''
import jax
def spy(f, in_axes, *args):
    report = []
    def peel(x):                         # the course's core.view: every BatchTracer peeled
        dims = []
        while isinstance(x, L1.BatchTracer):
            dims.append(int(x.batch_dim))
            x = x.val
        return dims
    def watched(*xs):
        report[:] = [peel(x) for x in xs]
        return f(*xs)
    jax.vmap(watched, in_axes=in_axes)(*args)
    return report
''',
        "moments_rule": '''
def moments_rule(prim, vals, dims, *, axis):      # reducer_batcher
    (x,), (d,) = vals, dims
    a = int(np.where(np.less(axis, d), axis, np.add(axis, 1)))
    out = int(list(np.delete(np.arange(x.ndim), a)).index(d))
    return prim.bind(x, axis=a), [out, out]
''',
        "stack2_rule": '''
def stack2_rule(prim, vals, dims, *, axis):       # _concatenate_batch_rule
    size = next(v.shape[d] for v, d in zip(vals, dims) if d is not None)
    moved = [jnp.moveaxis(v, d, 0) if d is not None else jnp.broadcast_to(v, (size,) + v.shape)
             for v, d in zip(vals, dims)]
    return prim.bind(*moved, axis=axis + 1), 0
''',
        "prefix_rule": '''
def prefix_rule(prim, axis_data, vals, dims, *, axis_name):   # psum's rule
    (x,), (d,) = vals, dims
    if axis_name != axis_data.name:
        return prim.bind(x, axis_name=axis_name), d
    if d is None:
        return x * axis_data.size, None
    return x.sum(d), None
''',
    },
    SECOND: {
        "where_it_lands": '''
def where_it_lands(program, in_dims):              # broadcast_batcher: to the front
    dims = dict(in_dims)
    for out, op, *args in program["steps"]:
        mapped = [dims[a] for a in args if isinstance(a, str) and dims[a] is not None]
        dims[out] = 0 if mapped else None
    return {out: dims[out] for out, *_ in program["steps"]}
''',
        "widened": '''
def widened(jaxpr, in_axes, size):                # the course's widening_broadcasts
    unmapped = tuple(i for i, a in enumerate(in_axes) if a is None)
    return {k: unmapped for k, e in enumerate(jaxpr.eqns) if e.primitive.name == "broadcast_in_dim"
            and np.prod(e.outvars[0].aval.shape) > np.prod(e.invars[0].aval.shape)}
''',
        "cheap_where": '''
def cheap_where(pred, x, y):
    return lax.select(pred, x, y)
''',
    },
}

ASKS_VMAP = {SECOND: {"where_it_lands": '''
def where_it_lands(program, in_dims):              # let vmap say where the axis lands
    seen = {}
    def probe(*xs):
        values = dict(zip([n for n, _ in program["inputs"]], xs))
        for out, op, *args in program["steps"]:
            fn, n = L2.OPS[op]
            values[out] = fn(*(values[a] for a in args[:n]), *args[n:])
            seen[out] = getattr(values[out], "batch_dim", None)
        return 0.0
    structs = [jax.ShapeDtypeStruct(s if in_dims[n] is None else s[:in_dims[n]] + (7,) + s[in_dims[n]:],
                                    jnp.float32) for n, s in program["inputs"]]
    jax.eval_shape(jax.vmap(probe, in_axes=tuple(in_dims[n] for n, _ in program["inputs"])), *structs)
    return {k: (None if v is None else int(v)) for k, v in seen.items()}
'''}}


def answering(released, answers: dict):
    """The release with each answer cell that defines a name in ``answers`` replaced."""
    nb = nbformat.from_dict(released)
    for cell in nb.cells:
        for name, code in answers.items():
            if cell.metadata.get("nbgrader", {}).get("solution") and f"def {name}(" in cell.source:
                cell.source = code.strip() + "\n"
    return nb


def honest(released, source):
    return C.answer(C.FULL, released, source)


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    return C.build_course(str(tmp_path_factory.mktemp("pattern-matchers")))


@pytest.fixture(scope="module")
def graded(course):
    C.assign(course)
    students = {"honest": None, "copies": COPIES, "transcribes": TRANSCRIBES, "asks-vmap": ASKS_VMAP}
    for student, answers in students.items():
        C.nbgrader(["db", "student", "add", student], course.course)
        for assignment in (FIRST, SECOND):
            name = assignment + ".ipynb"
            released = nbformat.read(os.path.join(course.course, "release", assignment, name), as_version=4)
            source = nbformat.read(os.path.join(course.exercises, assignment, name), as_version=4)
            nb = honest(released, source) if answers is None else answering(released, answers.get(assignment, {}))
            folder = os.path.join(course.course, "submitted", student, assignment)
            os.makedirs(folder)
            nbformat.write(nb, os.path.join(folder, name))
    C.autograde(course, timeout=30)
    return {(row["assignment"], row["student_id"]): row for row in C.export(course)}


def max_score(course, assignment):
    return C.max_score(nbformat.read(os.path.join(course.exercises, assignment, assignment + ".ipynb"),
                                     as_version=4))


@pytest.mark.parametrize("assignment", [FIRST, SECOND])
def test_the_honest_student_gets_every_point(graded, course, assignment):
    row = graded[assignment, "honest"]
    assert float(row["score"]) == max_score(course, assignment) >= 12, row
    assert row["status"] == "graded", row


@pytest.mark.parametrize("student", ["copies", "transcribes"])
@pytest.mark.parametrize("assignment", [FIRST, SECOND])
def test_a_pattern_matching_student_scores_what_a_blank_scores(graded, assignment, student):
    row = graded[assignment, student]
    assert float(row["score"] or 0) == 0.0, row
    assert row["status"] == "graded", row          # graded, not failed: each check ran and said no


def test_asking_vmap_goes_to_a_human_and_earns_nothing_automatically(graded):
    row = graded[SECOND, "asks-vmap"]
    assert row["status"] == "needs manual grading" and float(row["score"] or 0) == 0.0, row
    assert "vmap" in row["reason"], row
