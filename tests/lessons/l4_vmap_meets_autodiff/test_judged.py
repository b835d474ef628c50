"""Lesson 4's assignment through the real judge (grader.judge.runner: the sandboxed child, the
trusted comparison): the instructor's solutions earn every point, the released stubs none, and
the pattern-matching student, whose answers pass the visible cases, no more than the stubs."""
import pytest

pytest.importorskip("nbgrader", reason="grading needs the instructor tools (JAX 0.4.38's venv has none)")

from grader.judge import sandbox

from .. import judged

ASSIGNMENT = "04-vmap-meets-autodiff"
FAST = sandbox.Limits(wall_s=120, cpu_s=240, memory_mb=4096)
GRADED = {"l4_per_example_grads", "l4_clipped_scale", "l4_floored_cummax", "l4_vmap_jacobian"}

# What the pattern-matching student hands in: lesson 4's cells fitted to each signature, and
# jax.jacrev's own lines; every one of them passes at least one visible case.
MATCHING = {
    "per_example_grads": '''\
def per_example_grads(loss, params, batch, axes):
    return jax.vmap(jax.grad(loss), in_axes=(None, 0))(params, batch)
''',
    "clipped_scale": '''\
@jax.custom_vjp
def clipped_scale(w, x):
    return w * x

clipped_scale.defvjp(lambda w, x: (w * x, (w, x)),
                     lambda res, g: (jnp.clip(g, -1, 1) * res[1], jnp.clip(g, -1, 1) * res[0]))
''',
    "floored_cummax": '''\
@jax.custom_batching.custom_vmap
def floored_cummax(x, floor):
    return L4.running_max(x, floor)

@floored_cummax.def_vmap
def rule(axis_size, in_batched, x, floor):
    return floored_cummax(x, floor), in_batched[0]
''',
    "vmap_jacobian": '''\
def vmap_jacobian(f, x):
    y, pullback = jax.vjp(f, x)
    return jax.vmap(pullback)(jnp.eye(y.size, dtype=y.dtype))[0]
''',
}


@pytest.fixture(scope="module")
def verdicts():
    return judged.verdicts(ASSIGNMENT, MATCHING, FAST)


def test_the_instructor_solutions_earn_every_point(verdicts):
    judged.assert_solved_earns_every_point(verdicts["solved"], GRADED)


def test_the_released_stubs_earn_nothing(verdicts):
    judged.assert_earns_nothing(verdicts["blank"], GRADED)


def test_the_pattern_matching_student_earns_no_more_than_a_blank(verdicts):
    judged.assert_matcher_earns_no_more_than_a_blank(verdicts["matching"], GRADED)
