"""Every hint of lesson 2 names what the answer did on that case, and only that: a plausible wrong answer
per mistake (at least two per exercise and self-check) gets a hint naming its mistake, and none naming another.

Each exercise's MISTAKES maps a mistake to the phrases that name it; `contract.assert_hints_name` checks
every finding of the wrong answer's result against them.
"""
import pytest

from grader.lessons.l2_where_the_axis_goes import choose_axes as C
from grader.lessons.l2_where_the_axis_goes import live
from grader.lessons.l2_where_the_axis_goes import matchaxis as M
from grader.lessons.l2_where_the_axis_goes import pairwise as P
from grader.lessons.l2_where_the_axis_goes import score_batch as SB
from grader.lessons.l2_where_the_axis_goes import selfchecks as S

from .. import contract
from . import answers as A

MATCHAXIS = {"swapaxes": ("swapaxes exchanges two axes",),
             "negative dst": ("ndim + 1",),
             "sum without sum_match": ("JAX raises here",),
             "raises on None": ("None == None counts", "is summed away"),
             "reshape": ("keeps the element order",)}


@pytest.mark.parametrize("wrong, mistake", [
    (A.swapaxes_matchaxis, "swapaxes"),
    (A.ndim_matchaxis, "negative dst"),
    (A.always_sum_matchaxis, "sum without sum_match"),
    (A.none_raises_matchaxis, "raises on None"),
    (A.reshape_matchaxis, "reshape"),
])
def test_matchaxis_hints(wrong, mistake):
    contract.assert_hints_name(M.check_matchaxis(wrong), MATCHAXIS, mistake)


def test_a_matchaxis_hint_names_the_shapes_of_its_case():
    (first, *_) = M.check_matchaxis(A.swapaxes_matchaxis).findings
    assert "axes 0 and 2 of (4, 2, 3) swapped give (3, 2, 4)" in first.hint and "(2, 3, 4)" in first.hint


CHOOSE = {"transpose": ("moves it with a transpose",),
          "widened": ("out_axes=None keeps it unmapped",),
          "in_axes": ("and your in_axes says", "and your in_axes maps it"),
          "axis it lacks": ("which it does not have",),
          "out_axes None": ("out_axes=None is only allowed",)}


@pytest.mark.parametrize("wrong, mistake", [
    (A.out_axes_zero, "transpose"),
    (A.broadcasts_unbatched, "widened"),
    (A.front_in_axes, "in_axes"),
    (lambda layout: ((7,) * len(layout["args"]), 0), "axis it lacks"),
    (A.none_out_axes, "out_axes None"),
], ids=["out_axes_zero", "broadcasts_unbatched", "front_in_axes", "in_axes_7", "none_out_axes"])
def test_choose_axes_hints(wrong, mistake):
    contract.assert_hints_name(C.check_choose_axes(wrong), CHOOSE, mistake)


def test_a_refused_spec_is_named_not_sent_to_vmaps_message():
    # The case: "vmap refused the spec; read its message" named nothing.
    res = C.check_choose_axes(lambda layout: ((7,) * len(layout["args"]), 0))
    assert all("read its message" not in f.hint for f in res.findings)
    assert "gives argument 0, of rank 3, the axis 7" in res.findings[0].hint, res.findings[0].hint
    res = C.check_choose_axes(A.front_in_axes)
    assert any("argument 1 is not batched in the layout, and your in_axes maps it at 0" in f.hint
               for f in res.findings), res.summary()


def test_a_transpose_hint_says_where_the_primitives_leave_the_batch():
    res = C.check_choose_axes(A.out_axes_zero)
    hint = next(f.hint for f in res.findings if "'colsum'" in f.case)
    assert "leave output 0's batch at axis 1" in hint and "asks for it at 0" in hint, hint


PAIRWISE = {"left operand": ("LEFT operand",), "no dot": ("with no dot_general",),
            "order": ("other order",), "widened": ("once per row of the other",),
            "loop": ("dot_generals: one dot_general covers all pairs",)}


@pytest.mark.parametrize("wrong, mistake", [
    (A.swapped_nesting, "left operand"),
    (A.elementwise_pair, "no dot"),
    (A.ignores_order, "order"),
    (A.widened_operand, "widened"),
    (A.loops_over_rows, "loop"),
])
def test_pairwise_hints(wrong, mistake):
    contract.assert_hints_name(P.check_pairwise(wrong), PAIRWISE, mistake)


SCORE = {"elementwise": ("elementwise product",), "broadcast": ("copies w once per example",),
         "tanh": ("without the tanh",), "no vmap": ("let vmap batch",),
         "dot outside": ("outside it",), "batch last": ("goes first",)}


@pytest.mark.parametrize("wrong, mistake", [
    (A.naive_score_batch, "elementwise"),
    (A.copied_weight, "broadcast"),
    (A.no_tanh, "tanh"),
    (A.hand_batched, "no vmap"),
    (A.vmaps_only_the_tanh, "dot outside"),
    (A.batch_last, "batch last"),
])
def test_score_batch_hints(wrong, mistake):
    contract.assert_hints_name(SB.check_score_batch(wrong), SCORE, mistake)


def test_score_batch_demands_vmap_over_the_dot_with_the_weight_unmapped():
    # The case: tanh(xs @ w) passed with no vmap at all.
    for wrong in (A.hand_batched, A.vmaps_only_the_tanh, A.copied_weight):
        for hidden in (False, True):
            res = SB.check_score_batch(wrong, hidden=hidden)
            assert not res.passed and res.failed == res.cases, res.summary()


# ---- self-checks ---------------------------------------------------------------------------------

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
