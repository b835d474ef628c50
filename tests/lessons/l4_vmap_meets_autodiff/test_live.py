"""What lesson 4 shows live (grader/lessons/l4_vmap_meets_autodiff/live.py), measured here."""
import jax
import numpy as np

from grader import lessons
from grader.lessons.l4_vmap_meets_autodiff import live


def test_source_lines_leave_the_docstring_out():
    def documented(x):
        """vmap is mentioned here, in the docstring."""
        return jax.vmap(lambda y: y)(x)
    assert live.source_lines(documented, "vmap") == ["        return jax.vmap(lambda y: y)(x)"]


def test_jacfwd_and_jacrev_are_vmaps_in_the_installed_source():
    assert any("vmap(pushfwd" in line for line in live.source_lines(jax.jacfwd, "vmap("))
    assert any("vmap(pullback)" in line for line in live.source_lines(jax.jacrev, "vmap("))


def test_the_three_gradient_programs_agree():
    params, xs, ys = live.model(6)
    looped = live.looped_grads(params, xs, ys)
    batched = live.vmapped_grads(params, xs, ys)
    summed = live.summed_grad(params, xs, ys)
    for name in params:
        stacked = np.stack([g[name] for g in looped])
        assert np.allclose(batched[name], stacked, atol=1e-6)
        assert np.allclose(summed[name], stacked.sum(0), atol=1e-5)


def test_gradient_costs_grow_with_the_batch_only_in_the_loop():
    small, large = live.gradient_costs(3), live.gradient_costs(6)
    loop, vmapped, summed = live.GRADIENTS
    assert large[loop].equations == 2 * small[loop].equations
    assert large[vmapped].equations == small[vmapped].equations
    assert large[summed].equations == small[summed].equations
    assert small[vmapped].largest == 3 * 4 * 3 and small[summed].largest < small[vmapped].largest


def test_the_jacobian_table_maps_the_side_each_mode_says():
    rows = {(r["function"], r["mode"]): r for r in live.jacobian_table(2, 9)}
    assert rows["tall", "jacfwd"]["mapped"] == [2] and rows["tall", "jacrev"]["mapped"] == [9]
    assert rows["wide", "jacfwd"]["mapped"] == [9] and rows["wide", "jacrev"]["mapped"] == [2]


def test_visible_cases_are_the_exercises_own_without_seeds():
    for gid in ("l4_per_example_grads", "l4_clipped_scale", "l4_floored_cummax", "l4_vmap_jacobian"):
        shown = live.visible_cases(gid)
        real = lessons.exercises()[gid].cases(np.random.default_rng(0), False)
        assert len(shown) == len(real) and all("_seed" not in c for c in shown)
