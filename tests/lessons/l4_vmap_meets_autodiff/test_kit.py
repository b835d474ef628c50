"""Lesson 4's kit (grader/lessons/l4_vmap_meets_autodiff/kit/): the kernels vmap refuses, the models
and functions a case builds, and the observers' program readings."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from grader import wire
from grader.core.jaxprs import Eqn
from grader.lessons import l4_vmap_meets_autodiff as L4
from grader.lessons.l4_vmap_meets_autodiff.kit import functions, kernels, models, observe


@pytest.mark.parametrize("kernel, args", [
    (kernels.cummax, (np.ones((2, 3), np.float32),)),
    (kernels.running_max, (np.ones((2, 3), np.float32), np.zeros(2, np.float32)))])
def test_each_kernel_runs_traces_compiles_and_is_refused_by_vmap(kernel, args):
    eager = kernel(*args)
    assert np.allclose(jax.jit(kernel)(*args), eager)
    assert [e.primitive for e in L4.summarize_fn(kernel, *args)] == [kernel.__name__]
    with pytest.raises(NotImplementedError, match=kernel.__name__):
        jax.vmap(kernel)(*args)


def test_the_kernels_compute_their_references():
    x = np.array([[1.0, 3.0, 2.0, 5.0], [0.0, -1.0, 4.0, 1.0]], np.float32)
    floor = np.array([2.0, -3.0], np.float32)
    assert np.allclose(kernels.cummax(x), [[1, 3, 3, 5], [0, 0, 4, 4]])
    assert np.allclose(kernels.running_max(x, floor), [[2, 3, 3, 5], [0, 0, 4, 4]])
    assert np.allclose(kernels.REFERENCES["running_max"](x, floor), kernels.running_max(x, floor))


def test_a_batch_is_stacked_where_its_axes_say_and_examples_read_back():
    case = {"model": "linear", "d": 4, "k": 3, "B": 5, "axes": {"x": 1, "y": -1, "weight": None},
            "_seed": 1}
    params, batch = models.draw(case)
    assert {n: p.shape for n, p in params.items()} == {"w": (4, 3), "b": (3,)}
    assert {n: v.shape for n, v in batch.items()} == {"x": (4, 5), "y": (3, 5), "weight": ()}
    one = models.example(batch, case["axes"], 2)
    assert np.array_equal(one["x"], batch["x"][:, 2]) and one["weight"] == batch["weight"]
    assert all(np.isfinite(models.LOSSES[m](*models.draw({**case, "model": m, "axes": {
        n: None for n in models.data_shapes(m, 4, 3)}}))) for m in models.LOSSES)


def test_stacked_counts_a_negative_axis_in_the_result():
    assert models.stacked((4, 3), -1, 5) == (4, 3, 5) and models.stacked((4, 3), 0, 5) == (5, 4, 3)
    assert models.stacked((4,), None, 5) == (4,)


@pytest.mark.parametrize("name", functions.NAMES)
def test_the_functions_map_n_to_m_and_are_rebuilt_alike(name):
    case = {"f": name, "n": 3, "m": 7, "_seed": 2}
    f, x = functions.make(case), functions.point(case)
    assert f(x).shape == (7,)
    assert np.array_equal(functions.make(case)(x), f(x))
    with pytest.raises(ValueError):
        functions.make({**case, "f": "nothing"})


def test_batch_sizes_are_the_axes_vmaps_map():
    f = lambda x: jnp.sin(x) * 2.0                            # noqa: E731
    assert observe.batch_sizes(jax.vmap(f), jnp.ones((4, 3))) == [4]
    assert observe.batch_sizes(jax.vmap(jax.vmap(f)), jnp.ones((4, 3, 2))) == [3, 4]
    assert observe.batch_sizes(f, jnp.ones(3)) == []


def test_counted_looks_inside_calls_not_at_them():
    eqns = L4.summarize_fn(jax.jit(lambda x: jnp.sin(x) + 1.0), jnp.ones(3), recursive=True)
    assert [e.primitive for e in eqns][0] == "jit" and observe.counted(eqns) == len(eqns) - 1


def test_a_program_reading_is_plain_data():
    seen = observe.program(jax.vmap(lambda x: x * 2.0), jnp.ones((4, 3)))
    assert wire.loads(wire.dumps(seen)) == seen
    assert seen["batch_sizes"] == [4] and "mul" in seen["batched"]
    assert [Eqn.from_plain(e).primitive for e in seen["eqns"]] == ["mul"]


def test_the_watched_loss_tells_mapped_parameters_from_shared_ones():
    loss, params = models.LOSSES["logistic"], {"w": jnp.ones(3), "b": jnp.float32(0.0)}
    batch = {"x": jnp.ones((4, 3)), "label": jnp.ones(4), "l2": jnp.float32(1.0)}
    axes = {"x": 0, "label": 0, "l2": None}
    for in_params, params_in, want in ((None, params, False), (0, {"w": jnp.ones((4, 3)),
                                                                   "b": jnp.zeros(4)}, True)):
        mapped = []
        jax.vmap(jax.grad(observe.watched_loss(loss, mapped)), in_axes=(in_params, axes))(
            params_in, batch)
        assert mapped and any(mapped) == want


def test_the_observers_leave_process_primitive_as_they_found_it():
    from grader.core import _jax
    original = _jax.BatchTrace.process_primitive
    observe.batch_sizes(jax.vmap(jnp.sin), jnp.ones((2, 3)))
    with pytest.raises(RuntimeError):
        with observe.batching_seen():
            raise RuntimeError("a student's bug")
    assert _jax.BatchTrace.process_primitive is original
