"""Rule tables: layout, counts and membership, on the installed JAX and on stand-ins."""
import types

import jax
import jax.numpy as jnp
import pytest

from grader import core

B = core._jax.batching


def test_layout_matches_the_tables_jax_has():
    tables = core.real_tables()
    assert all(type(t) is dict for t in tables.values())
    expected = ("collapsed" if not isinstance(B.primitive_batchers, dict)
                else "split")
    assert core.layout() == expected


def test_fresh_reading_agrees_with_tables_read_in_process():
    here = core.read_here()
    fresh = core.read_fresh()
    assert fresh.layout == here.layout
    # This process may have imported more rules than a fresh one; never fewer.
    for name, count in fresh.counts.items():
        assert 0 < count <= here.counts[name]
    assert fresh.jax_version == jax.__version__


@pytest.mark.skipif(jax.__version__ != "0.4.38", reason="the seeds' reading was taken on 0.4.38")
def test_seed_reading_on_0_4_38():
    fresh = core.read_fresh()
    assert fresh.counts == {"primitive_batchers": 180, "fancy_primitive_batchers": 21}
    assert fresh.holders("psum") == ["fancy_primitive_batchers"]
    assert fresh.holders("sin") == ["primitive_batchers"]


def test_holders_follow_the_primitive_objects():
    reading = core.read_here()
    sin_tables = core.tables_holding(jax.lax.sin_p)
    assert list(sin_tables) == reading.holders("sin")
    assert core.rule_for(jax.lax.sin_p)[0] == sin_tables[0]


class ReadableProxy:
    """Like the first collapsed layout's ``primitive_batchers``: ``[]`` reads through, ``in``
    raises KeyError(0) and ``len`` TypeError (it was lesson 1's exercise stand-in)."""

    def __init__(self, fancy):
        self._fancy = fancy

    def __getitem__(self, prim):
        return self._fancy[prim]

    def __contains__(self, prim):
        raise KeyError(0)

    def __len__(self):
        raise TypeError("object of type 'PrimitiveBatchersProxy' has no len()")


def test_stand_ins_key_by_object_and_skip_proxies():
    a, b = core._jax.new_primitive("twin"), core._jax.new_primitive("twin")
    split = types.SimpleNamespace(primitive_batchers={a: 1}, fancy_primitive_batchers={b: 2})
    collapsed = types.SimpleNamespace(primitive_batchers=ReadableProxy({}), fancy_primitive_batchers={a: 1, b: 2})
    legacy = types.SimpleNamespace(primitive_batchers={a: 1}, axis_primitive_batchers={b: 2})
    assert core.layout(split) == "split" and core.layout(collapsed) == "collapsed"
    assert core.layout(legacy) == "legacy"
    assert core.tables_holding(a, split) == ("primitive_batchers",)
    assert core.tables_holding(b, split) == ("fancy_primitive_batchers",)
    assert set(core.real_tables(collapsed)) == {"fancy_primitive_batchers"}
    assert core.tables_holding(b, legacy) == ("axis_primitive_batchers",)


def test_register_and_unregister_an_old_style_rule(doubling_primitive):
    p = doubling_primitive("double_for_test")
    with pytest.raises(NotImplementedError, match="double_for_test"):
        jax.vmap(p.bind)(jnp.ones((4, 3)))
    core.register_rule(p, lambda vals, dims: (p.bind(*vals), dims[0]))
    try:
        assert jax.vmap(p.bind)(jnp.ones((4, 3))).shape == (4, 3)
        assert core.tables_holding(p)
    finally:
        core.unregister_rule(p)
    assert core.tables_holding(p) == ()
    with pytest.raises(NotImplementedError):
        jax.vmap(p.bind)(jnp.ones((4, 3)))
