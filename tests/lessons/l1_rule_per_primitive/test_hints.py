"""Every hint of lesson 1 names what the answer did on that case, and only that: a plausible wrong answer
per mistake (at least two per exercise and self-check) gets a hint naming its mistake, and none naming another.

Each exercise's MISTAKES maps a mistake to the phrases that name it; `contract.assert_hints_name` checks
every finding of the wrong answer's result against them, on the visible cases and on cases drawn now.
"""
import pytest

from grader.lessons.l1_rule_per_primitive import moments, prefix, spy, stack2
from grader.lessons.l1_rule_per_primitive import selfchecks as S

from .. import contract
from . import answers as A

SPY = {"own level only": ("so its list needs",),
       "peeled": ("peel off it",),
       "not mapped there": ("is not mapped at",),
       "outermost first": ("outermost first",),
       "negative in_axes": ("normalises a negative in_axes",)}


@pytest.mark.parametrize("wrong, mistake, hidden", [
    (A.spy_copies_the_lesson, "own level only", True),
    (A.spy_peels_tracers, "peeled", False),
    (A.spy_peels_after_in_axes, "not mapped there", True),
    (A.spy_outermost_first, "outermost first", False),
    (A.spy_copies_in_axes, "negative in_axes", False),
], ids=lambda v: getattr(v, "__name__", v) if callable(v) else None)
def test_spy_hints(wrong, mistake, hidden):
    contract.assert_hints_name(spy.check_spy(wrong, hidden=hidden, seed=2), SPY, mistake)


def test_a_spy_hint_names_the_argument_and_never_the_answer():
    (first, *_) = spy.check_spy(A.spy_peels_after_in_axes, hidden=True, seed=2).findings
    assert first.hint.startswith("argument ") and "level" in first.hint
    assert first.expected not in first.hint


RULES = {"two outputs": ("two outputs",),
         "moved": ("moved the batch axis", "moved a batch axis", "moved both operands"),
         "out dim": ("you gave its batch dim as",),
         "axis": ("you bound moments with axis=",),
         "size 1": ("broadcasts nothing, not even",),
         "a total": ("as psum's rule does", "that is psum of an unmapped value"),
         "every level": ("the rule is called by every level",),
         "unmapped as is": ("handed it back unmapped",),
         "binds again": ("reached a place no vmap named its axis",),
         "None as an axis": ("an operand whose dim is None has no batch axis",)}


@pytest.mark.parametrize("exercise, wrong, mistake", [
    (moments.MOMENTS, A.moments_vectorized, "two outputs"),
    (moments.MOMENTS, A.moments_single_output, "two outputs"),
    (moments.MOMENTS, A.moments_to_the_front, "moved"),
    (moments.MOMENTS, A.moments_reducer, "out dim"),
    (moments.MOMENTS, A.moments_axis_unshifted, "axis"),
    (stack2.STACK2, A.stack2_size1, "size 1"),
    (stack2.STACK2, A.stack2_concatenate_rule, "moved"),
    (stack2.STACK2, A.stack2_out_dim_kept, "out dim"),
    (stack2.STACK2, A.stack2_moveaxis_none, "None as an axis"),
    (prefix.PREFIX, A.prefix_psum, "a total"),
    (prefix.PREFIX, A.prefix_every_level, "every level"),
    (prefix.PREFIX, A.prefix_unmapped_as_is, "unmapped as is"),
    (prefix.PREFIX, A.prefix_binds_again, "binds again"),
], ids=lambda v: getattr(v, "__name__", v) if callable(v) else None)
@pytest.mark.parametrize("hidden", [False, True])
def test_rule_hints(exercise, wrong, mistake, hidden):
    res = exercise.check(wrong, hidden=hidden, seed=4)
    flat = [f for f in res.findings if "outer_axes=None" in f.case or exercise is prefix.PREFIX]
    if not flat and not res.passed:        # nested cases only: their hint is general, by design
        return
    contract.assert_hints_name(res.__class__(res.check, res.cases, tuple(flat)), RULES, mistake)


def test_the_moments_hint_names_the_output_and_not_the_number():
    res = moments.check_moments_rule(A.moments_reducer)
    hint = next(f.hint for f in res.findings)
    assert "output 1 (centred)" in hint and "keeps every axis" in hint, hint


# ---- self-checks ---------------------------------------------------------------------------------

TRACER = {"normalised": ("stores it normalised",), "value as seen": ("is the value underneath",),
          "seen as value": ("is what f sees (x.shape)",)}


@pytest.mark.parametrize("answer, mistake", [
    ((-1, (2, 3), (2, 3, 4)), "normalised"),
    ((2, (2, 3, 4), (2, 3, 4)), "value as seen"),
    ((2, (2, 3), (2, 3)), "seen as value"),
])
def test_tracer_selfcheck_hints(answer, mistake):
    contract.assert_hints_name(S.selfcheck_tracer(answer), TRACER, mistake)


def one_hint(res) -> str:
    assert not res.passed and len(res.findings) == 1 and not res.graded, res.summary()
    return res.findings[0].hint


def test_route_selfcheck_explains_dispatch_and_the_branch_order():
    assert "dispatches on the current trace" in one_hint(S.selfcheck_route("not at all"))
    wrong = "shortcut" if S.sin_route() == "rule" else "rule"
    assert "in_dims (None,)" in one_hint(S.selfcheck_route(wrong))
    assert "Answer one of" in one_hint(S.selfcheck_route("refused"))


REDUCE = {"shifted before the batch": ("you moved the example's axis 1 up by one",),
          "final shape": ("is the shape vmap returns",),
          "batch reduced": ("the batch axis is never reduced",)}


@pytest.mark.parametrize("answer, mistake", [
    (((2,), (3, 5)), "shifted before the batch"),
    (((1,), (5, 3)), "final shape"),          # the case: vmap's output shape, not the equation's
    (((1, 2), (3,)), "batch reduced"),
])
def test_reduce_selfcheck_hints(answer, mistake):
    contract.assert_hints_name(S.selfcheck_reduce_axes(answer), REDUCE, mistake)
