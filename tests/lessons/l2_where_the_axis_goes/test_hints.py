"""Every hint of lesson 2 names what the answer did on that case, and only that: a plausible wrong answer
per mistake (at least two per exercise and self-check) gets a hint naming its mistake, and none naming another.

Each exercise's MISTAKES maps a mistake to the phrases that name it; `contract.assert_hints_name` checks
every finding of the wrong answer's result against them.
"""
import pytest

from grader.lessons.l2_where_the_axis_goes import cheap_where as CW
from grader.lessons.l2_where_the_axis_goes import live
from grader.lessons.l2_where_the_axis_goes import selfchecks as S
from grader.lessons.l2_where_the_axis_goes import where_it_lands as W
from grader.lessons.l2_where_the_axis_goes import widened as WD

from .. import contract
from . import answers as A

LANDS = {"elementwise": ("an elementwise rule binds the primitive on the batched value",),
         "disagree": ("the operands do not agree",),
         "agree": ("both operands carry the batch at the same axis",),
         "reduction": ("count what is left in front of the batch axis",),
         "dot": ("dot_general writes its result as batch dimensions first",),
         "concatenate": ("read concatenate's batching rule",),
         "unmapped": ("gives an unmapped result",),
         "form": ("for every step",)}


@pytest.mark.parametrize("wrong, mistake", [
    (A.lands_sin_front, "elementwise"),
    (A.lands_broadcast_keeps, "disagree"),
    (A.lands_sum_unshifted, "reduction"),
    (A.lands_dot_lhs_first, "dot"),
    (A.lands_concat_keeps, "concatenate"),
    (A.lands_mapped_everywhere, "unmapped"),
    (lambda program, in_dims: {}, "form"),
], ids=lambda v: getattr(v, "__name__", v) if callable(v) else None)
def test_where_it_lands_hints(wrong, mistake):
    res = W.check_where_it_lands(wrong, hidden=True, seed=5)
    contract.assert_hints_name(res, LANDS, mistake)


WIDEN = {"size 1": ("has no axis of the batch size",),
         "already batched": ("already carries the batch",),
         "missed": ("your tool missed a widening",),
         "attribution": ("you traced it back to the inputs",)}


@pytest.mark.parametrize("wrong, mistake", [
    (A.widened_bigger_than_inputs, "size 1"),
    (A.widened_by_output_shape, "already batched"),
    (A.widened_broadcasts_only, "missed"),
    (A.widened_direct_operands, "attribution"),
], ids=lambda v: getattr(v, "__name__", v) if callable(v) else None)
def test_widened_hints(wrong, mistake):
    for hidden in (False, True):
        res = WD.check_widened(wrong, hidden=hidden, seed=3)
        if res.passed and not hidden:
            continue
        contract.assert_hints_name(res, WIDEN, mistake)


WHERE = {"widens": ("copies it out to that size", "copies them out to that size"),
         "values": ("does not give jnp.where's values",)}


@pytest.mark.parametrize("wrong, mistake", [
    (A.where_copied, "widens"),
    (A.where_select, "widens"),
    (A.where_swapped, "values"),
], ids=lambda v: getattr(v, "__name__", v) if callable(v) else None)
def test_cheap_where_hints(wrong, mistake):
    contract.assert_hints_name(CW.check_cheap_where(wrong, hidden=True, seed=1), WHERE, mistake)


def test_a_where_hint_names_the_operand_and_the_level():
    res = CW.check_cheap_where(A.where_copied)
    hint = res.findings[0].hint
    assert ("y is not mapped" in hint or "x is not mapped" in hint) and "of size 7" in hint, hint


def truth_mv():
    return {r["row"]: (r["shape"], r["prims"]) for r in live.mv_table()}


MV = {"missing transpose": ("moves it there with a transpose",), "extra transpose": ("nothing has to move",),
      "shape": ("goes where out_axes",)}


@pytest.mark.parametrize("row, change, mistake", [
    (5, "drop transpose", "missing transpose"),
    (1, "add transpose", "extra transpose"),
    (2, "reverse shape", "shape"),
])
def test_mv_selfcheck_hints(row, change, mistake):
    shape, prims = truth_mv()[row]
    if change == "drop transpose":
        assert "transpose" in prims
        prims = [p for p in prims if p != "transpose"]
    elif change == "add transpose":
        assert "transpose" not in prims
        prims = prims + ["transpose"]
    else:
        shape = shape[::-1]
    contract.assert_hints_name(S.selfcheck_mv_table({row: (shape, prims)}), MV, mistake)


DOT = {"keeps its number": ("after its contracting axis, so that axis keeps its number",),
       "moves up": ("before its contracting axis, so that axis moves up by one",),
       "batch pair": ("batch-dimension pair",), "no batch pair": ("stay empty",)}


def shifted_everywhere(number):
    """The answer of a student who always shifts the contracting axis of a batched operand by one."""
    (lc, rc), _ = live.dot_numbers(number)
    in_axes = live.DOT_CALLS[number - 1][0]
    shift = lambda axes: tuple(c + 1 for c in axes)  # noqa: E731
    return ((shift(lc), rc) if in_axes[0] is not None else (lc, shift(rc))), ((), ())


@pytest.mark.parametrize("number, answer, mistake", [
    (3, shifted_everywhere(3), "keeps its number"),    # the case: batch after the contracting axis
    (4, shifted_everywhere(4), "keeps its number"),
    (1, (((0,), (0,)), ((), ())), "moves up"),
    (2, (((1,), (0,)), ((), ())), "batch pair"),
    (1, (((0,), (1,)), ((), (0,))), "no batch pair"),
])
def test_dimension_numbers_selfcheck_hints(number, answer, mistake):
    assert answer != live.dot_numbers(number)
    contract.assert_hints_name(S.selfcheck_dimension_numbers({number: answer}), DOT, mistake)


REDUCE = {"kept": ("you kept the example's axis numbers",), "moved all": ("you moved every axis up by one",),
          "batch reduced": ("the batch axis is never reduced",)}


@pytest.mark.parametrize("number, answer, mistake", [
    (1, (1,), "kept"),
    (3, (1,), "kept"),
    (2, (1,), "moved all"),
    (4, (2,), "moved all"),
    (5, (1, 2), "moved all"),
    (2, (2,), "batch reduced"),
])
def test_reduce_selfcheck_hints(number, answer, mistake):
    assert answer != live.reduce_axes(number)
    contract.assert_hints_name(S.selfcheck_reduce_axes({number: answer}), REDUCE, mistake)
