"""Both kinds of watch on JAX's functions: the monitor (3.12+) and the wrappers (3.11's fallback,
run here on any release): a call from an answer is noted, however the function was reached, and
a watch taken apart says so."""
import functools
import sys
import types

import pytest

from grader.judge.box import child, tripwires

SPEC = "jax._src.interpreters.batching:matchaxis"
PREFIX = child.ANSWER_FILE.partition("{")[0]
KINDS = [tripwires.Wrappers] + ([tripwires.Monitor] if hasattr(sys, "monitoring") else [])


def from_an_answer(source: str, **names):
    """Run ``source`` as if it were an answer cell; returns its namespace."""
    namespace = dict(names)
    exec(compile(source, child.ANSWER_FILE.format("t"), "exec"), namespace)
    return namespace


@pytest.fixture(params=KINDS, ids=lambda k: k.__name__)
def watch(request):
    w = request.param([SPEC], PREFIX)
    yield w
    w.remove()


def matchaxis():
    from grader.core import _jax
    return _jax.batching.matchaxis


def test_a_call_from_an_answer_is_noted_and_one_from_elsewhere_is_not(watch):
    real = watch.originals[SPEC]
    with watch.watching() as hits:
        from_an_answer("try:\n    f(None, 0, 0, None, False)\nexcept Exception:\n    pass\n",
                       f=matchaxis())
    assert hits == {SPEC}
    with watch.watching() as hits:
        with pytest.raises(Exception):  # noqa: B017  (junk arguments: only the watch's count matters)
            real(None, 0, 0, None, False)          # this test file is no answer cell
    assert hits == set()


def test_the_original_held_in_a_partial_is_still_seen_by_the_monitor():
    if not hasattr(sys, "monitoring"):
        pytest.skip("sys.monitoring is Python 3.12+")
    w = tripwires.Monitor([SPEC], PREFIX)
    try:
        with w.watching() as hits:
            from_an_answer("try:\n    p.func(None, 0, 0, None, False)\nexcept Exception:\n"
                           "    pass\n", p=functools.partial(w.originals[SPEC]))
        assert hits == {SPEC}
    finally:
        w.remove()


def test_a_strict_watch_counts_any_call(watch):
    with watch.watching(strict=True) as hits:
        with pytest.raises(Exception):  # noqa: B017  (junk arguments: only the watch's count matters)
            matchaxis()(None, 0, 0, None, False)
    assert hits == {SPEC}


def test_an_answer_that_is_the_function_is_recognised(watch):
    assert watch.is_one(functools.partial(matchaxis()), [SPEC]) == [SPEC]
    assert watch.is_one(lambda *a: None, [SPEC]) == []


def test_a_watch_taken_apart_is_broken(watch):
    assert watch.broken() == []
    if isinstance(watch, tripwires.Wrappers):
        from grader.core import _jax
        _jax.batching.matchaxis = watch.originals[SPEC]     # what a closure hands out on 3.11
    else:
        with pytest.raises(ValueError):
            sys.monitoring.set_local_events(watch.tool, watch.originals[SPEC].__code__, 0)
    assert watch.broken() == ["monitor"]


SWAP = """
import sys
E = sys.monitoring.events.PY_START
for tool in range(6):
    try:
        saved = sys.monitoring.register_callback(tool, E, None)   # the judge's callback, out
    except ValueError:
        continue
    try:
        result = matchaxis()                                       # unseen, were it let through
    finally:
        sys.monitoring.register_callback(tool, E, saved)          # and back before the check
"""


@pytest.mark.skipif(not hasattr(sys, "monitoring"), reason="sys.monitoring is 3.12+")
def test_a_watch_switched_off_and_on_again_between_two_checks_is_broken():
    # Red team, round 5: an answer swapped the judge's callback out around its own call and put
    # it back in ``finally``, so the check after the cells found the watch standing.
    watch = tripwires.Monitor([SPEC], PREFIX)
    try:
        assert watch.broken() == []
        from_an_answer(SWAP, matchaxis=matchaxis)
        assert watch.broken() == ["monitor"]
        assert sys.monitoring.get_tool(watch.tool) == tripwires.NAME     # its own tool refused
    finally:
        watch.remove()
    assert isinstance(sys.monitoring.register_callback, types.BuiltinFunctionType)  # back
    sys.monitoring.use_tool_id(watch.tool, "after")                     # and work again
    sys.monitoring.free_tool_id(watch.tool)


def test_removing_the_watch_leaves_jax_as_it_was(watch):
    real = watch.originals[SPEC]
    watch.remove()
    assert matchaxis() is real
    if isinstance(watch, tripwires.Monitor):
        assert sys.monitoring.get_tool(watch.tool) is None


VB = "jax._src.interpreters.batching:vectorized_batcher"


@pytest.fixture(params=KINDS, ids=lambda k: k.__name__)
def rule_watch(request):
    calls = []
    w = request.param([VB], PREFIX, lambda spec, direct, own: calls.append((spec, direct, own)))
    w.calls = calls
    yield w
    w.remove()


def vb():
    from grader.core import _jax
    return _jax.batching.vectorized_batcher


# A rule maker called on ``n`` unbatched values, whichever signature this release gives it (newer
# ones take axis_data second).
CALL = ("def call(g, p, d, n=1, **params):\n"
        "    vals, dims = [1.0] * n, [d] * n\n"
        "    try:\n        return g(p, None, vals, dims, **params)\n"
        "    except TypeError:\n        return g(p, vals, dims, **params)\n")


def test_a_call_through_jax_code_that_passes_the_function_on_is_the_answer_s(rule_watch):
    from jax import lax
    from_an_answer(CALL + "from jax._src.traceback_util import api_boundary\n"
                   "call(api_boundary(f), lax.neg_p, None)\n", f=vb(), lax=lax)
    assert (VB, True, False) in rule_watch.calls


def test_jax_running_its_own_rule_from_its_table_is_not_the_answer_s(rule_watch):
    import jax
    import jax.numpy as jnp
    from jax import lax
    # lax.neg binds its primitive (no jit in between, whose batched jaxprs JAX caches).
    from_an_answer("jax.vmap(lambda v: lax.neg(v))(jnp.ones(3))\n", jax=jax, jnp=jnp, lax=lax)
    # (JAX's tables hold the original, so 3.11's wrappers never see this call at all.)
    assert all(call == (VB, False, False) for call in rule_watch.calls)
    assert rule_watch.calls or isinstance(rule_watch, tripwires.Wrappers)


def test_a_rule_maker_run_on_a_primitive_jax_does_not_give_it_counts_whoever_calls_it(rule_watch):
    from grader.lessons.l1_rule_per_primitive import kit
    prim = kit.make_primitives().stack2_p        # single-output, as vectorized_batcher asserts
    namespace = {}
    exec(CALL, namespace)                            # in this test file: no answer's frame
    namespace["call"](vb(), prim, 0, 2, axis=0)
    assert (VB, False, True) in rule_watch.calls


@pytest.mark.skipif(not hasattr(sys, "monitoring"), reason="sys.monitoring is Python 3.12+")
def test_what_a_watched_function_made_counts_when_it_runs_under_a_strict_watch_only():
    import jax
    import jax.numpy as jnp
    w = tripwires.Monitor(["jax._src.api:jacrev"], PREFIX)
    try:
        made = jax.jacrev(jnp.sin)                 # made outside any watching: nothing counts
        with w.watching() as hits:
            made(jnp.ones(2))
        assert hits == set()
        with w.watching(strict=True) as hits:
            made(jnp.ones(2))
        assert hits == {"jax._src.api:jacrev"}
    finally:
        w.remove()


@pytest.mark.skipif(not hasattr(sys, "monitoring"), reason="sys.monitoring is Python 3.12+")
def test_a_rule_table_named_as_a_spec_watches_every_rule_it_holds():
    from grader.core import _jax
    spec = "jax._src.interpreters.batching:fancy_primitive_batchers"
    w = tripwires.Monitor([spec], PREFIX)
    try:
        table = _jax.batching.fancy_primitive_batchers
        assert len(w.rules) >= len({id(r) for r in table.values()}) // 4 > 0
        rule = next(iter(table.values()))
        assert w.is_one(rule, [spec]) == [spec]
        # junk arguments, as many as the rule takes (its signature differs across releases):
        # only the watch's count matters
        import inspect
        params = inspect.signature(rule).parameters.values()
        args = [None for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                and p.default is p.empty]
        with w.watching() as hits:
            from_an_answer("try:\n    r(*a)\nexcept Exception:\n    pass\n", r=rule, a=args)
        assert hits == {spec}
    finally:
        w.remove()
