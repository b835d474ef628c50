"""Jaxpr summaries agree with the jaxpr JAX built, as plain data."""
import jax
import jax.numpy as jnp
import numpy as np

from grader import core


def test_summary_mirrors_equations_and_avals():
    closed = jax.make_jaxpr(jax.vmap(lambda w, x: jnp.sum(w * x), in_axes=(None, 0)))(
        jnp.ones(10), jnp.ones((8, 10)))
    eqns = core.summarize(closed)
    assert len(eqns) == len(closed.jaxpr.eqns)
    for mine, theirs in zip(eqns, closed.jaxpr.eqns):
        assert mine.primitive == theirs.primitive.name
        assert mine.out_shapes == tuple(tuple(v.aval.shape) for v in theirs.outvars)
    reduce = eqns[-1]
    assert reduce.param("axes") == tuple(int(a) for a in closed.jaxpr.eqns[-1].params["axes"])
    assert all(type(a) is int for a in reduce.param("axes"))


def test_dimension_numbers_are_plain_nested_tuples():
    (eqn,) = core.summarize_fn(jax.vmap(jnp.matmul, in_axes=(0, None)), jnp.ones((32, 8)), jnp.ones((8, 5)))
    raw = jax.make_jaxpr(jax.vmap(jnp.matmul, in_axes=(0, None)))(jnp.ones((32, 8)), jnp.ones((8, 5)))
    dn = raw.jaxpr.eqns[0].params["dimension_numbers"]
    assert eqn.param("dimension_numbers") == tuple(tuple(tuple(int(i) for i in s) for s in p) for p in dn)


def test_recursive_summary_enters_jit_and_cond_and_renames_pjit():
    def f(x):
        inner = jax.jit(lambda y: jnp.sin(y) * 2.0)(x)
        return jax.lax.cond(x.sum() > 0, jnp.cos, jnp.tanh, inner)
    closed = jax.make_jaxpr(f)(jnp.ones(3))
    top = core.primitives(core.summarize(closed))
    deep = core.summarize(closed, recursive=True)
    assert "pjit" not in top and "jit" in top and "cond" in top
    names = core.primitives(deep)
    assert {"sin", "mul", "cos", "tanh"} <= set(names)
    assert {e.depth for e in deep} == {0, 1}


def test_an_equation_survives_its_plain_form():
    import jax

    from grader.core.jaxprs import Eqn
    eqns = core.summarize_fn(jax.vmap(lambda x: jnp.sum(x, axis=0), in_axes=1), jnp.ones((3, 4, 5)))
    assert [Eqn.from_plain(e.to_plain()) for e in eqns] == list(eqns)


def test_widening_broadcasts_are_the_ones_that_grow():
    eqns = core.summarize_fn(lambda x: (jnp.broadcast_to(x, (4, 3)), x.reshape(1, 3)), jnp.ones(3))
    assert core.widening_broadcasts(eqns) == [((3,), (4, 3))]


def test_plain_rejects_objects():
    from grader.core.jaxprs import plain
    assert plain((np.int64(1), (2,))) == (1, (2,))
    assert plain(object()) is None and plain((1, object())) is None


def test_computed_by_follows_called_programs_and_refuses_a_result_computed_beside_it():
    import jax
    import jax.numpy as jnp

    from grader.core import jaxprs

    def by(fn, prim="sin"):
        return jaxprs.computed_by(jaxprs.flow(jax.make_jaxpr(fn)(jnp.ones((2, 3)))), prim)

    assert by(lambda x: jnp.sin(x).T)
    assert by(lambda x: jax.jit(lambda y: y.T)(jnp.sin(x)))                # a layout-only call
    assert by(lambda x: jax.jit(lambda a, y: y.T)(x, jnp.sin(x)))          # its second operand
    assert by(lambda x: jax.jit(jnp.sin)(x))                               # computed inside
    assert not by(lambda x: jax.jit(lambda y: jnp.cos(y))(jnp.sin(x)))
    assert not by(lambda x: (jnp.sin(x), jnp.cos(x))[1])                   # the sin dropped
    assert not by(lambda x: jax.jit(lambda y: (jnp.sin(y), y * 2))(x)[1])


def test_fed_by_inputs_accepts_moved_data_and_refuses_a_result_computed_before():
    import jax
    import jax.numpy as jnp

    from grader.core import jaxprs

    def fed(fn):
        return jaxprs.fed_by_inputs(jaxprs.flow(jax.make_jaxpr(fn)(jnp.ones((2, 3)))), "cumsum")

    assert fed(lambda x: jnp.cumsum(x.T, axis=0))
    assert fed(lambda x: jax.jit(lambda y: jnp.cumsum(jnp.broadcast_to(y, (4, 2, 3)), axis=2))(x))
    assert fed(lambda x: jnp.cumsum(jax.jit(lambda y: y.reshape(6))(x)))    # a layout-only call
    assert not fed(lambda x: jnp.cumsum(jnp.sin(x), axis=1))
    assert not fed(lambda x: jax.jit(lambda y: jnp.cumsum(y * y, axis=1))(x))
    assert fed(lambda x: jnp.cumsum(jnp.zeros((4, 2, 3)) + x, axis=2))        # a copy: +0
    assert fed(lambda x: jnp.cumsum(jnp.stack([x, x]), axis=2))
    assert not fed(lambda x: jnp.cumsum(jax.jit(jnp.sin)(x), axis=1))
