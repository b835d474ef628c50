"""Every hint of lesson 1 names what the answer did on that case, and only that: a plausible wrong answer
per mistake (at least two per exercise and self-check) gets a hint naming its mistake, and none naming another.

Each exercise's MISTAKES maps a mistake to the phrases that name it; `contract.assert_hints_name` checks
every finding of the wrong answer's result against them.
"""
import pytest

from grader import core
from grader.lessons.l1_rule_per_primitive import rules as R
from grader.lessons.l1_rule_per_primitive import selfchecks as S
from grader.lessons.l1_rule_per_primitive import spy, table_sizes, which_table

from .. import contract
from . import answers as A

SPY = {"negative in_axes": ("JAX normalises a negative in_axes",),
       "value shape": ("x.val.shape does not",),
       "seen shape": ("as the shape the function sees",),
       "unmapped argument": ("is not a BatchTracer", "is not in your vmap at all")}


@pytest.mark.parametrize("wrong, mistake", [
    (A.spy_copies_in_axes, "negative in_axes"),
    (A.spy_reports_seen_shape, "value shape"),
    (A.spy_reports_val_as_seen, "seen shape"),
    (A.spy_assumes_tracers, "unmapped argument"),
    (A.spy_trusts_hasattr, "unmapped argument"),
])
def test_spy_hints(wrong, mistake):
    hints = contract.assert_hints_name(spy.check_spy(wrong), SPY, mistake)
    assert not any(h.startswith("argument 1: argument") for h in hints)


def test_a_spy_hint_names_the_argument_once():
    (hint,) = contract.assert_hints_name(spy.check_spy(A.spy_trusts_hasattr), SPY, "unmapped argument")
    assert hint.startswith("argument 1 (in_axes None, shape (6, 5))") and hint.count("argument 1") == 1


RULES = {"out_dim": ("the out_dim you returned",),
         "never moved": ("never moved",),
         "one equation": ("exactly one",),
         "copy": ("materialised a copy per example",),
         "no size-1 axis": ("with one axis fewer than the mapped operand",),
         "params": ("pass **params on",),
         "misaligned": ("batch axes don't line up",),
         "axes": ("moves up by one",),
         "reduced axes before": ("Count the reduced axes before the batch dim",),
         "contract": ("breaks its contract",),
         "unfold": ("must undo the fold",)}


@pytest.mark.parametrize("exercise, wrong, mistake", [
    (R.SOFTSIGN, A.softsign_front, "out_dim"),
    (R.SOFTSIGN, A.softsign_loop, "one equation"),
    (R.SCALED_DIFF, A.scaled_diff_materialised, "copy"),
    (R.SCALED_DIFF, A.scaled_diff_no_size1, "no size-1 axis"),
    (R.SCALED_DIFF, A.scaled_diff_drops_scale, "params"),
    (R.SCALED_DIFF, A.scaled_diff_moves_one, "misaligned"),
    (R.SUMSQ, A.sumsq_axes_unshifted, "axes"),
    (R.SUMSQ, A.sumsq_out_dim_unadjusted, "reduced axes before"),
    (R.ROWMAX, A.rowmax_vectorized, "contract"),
    (R.ROWMAX, A.rowmax_assumes_front, "never moved"),
    (R.ROWMAX, A.rowmax_wrong_unfold, "unfold"),
], ids=lambda v: getattr(v, "__name__", v) if callable(v) else None)
def test_rule_hints(exercise, wrong, mistake):
    contract.assert_hints_name(exercise.check(wrong), RULES, mistake)


def test_rowmax_with_the_batch_at_1_is_told_it_never_moved_not_its_out_dim():
    # The case: in_axes=1, the batch never moved; the old hint blamed the out_dim.
    res = R.ROWMAX.check(A.rowmax_assumes_front)
    (hint,) = [f.hint for f in res.findings if "in_axes=(1,)" in f.case]
    assert "arrives at dims[0] = 1" in hint and "still at axis 1" in hint, hint


def test_sumsq_names_the_axis_that_was_summed():
    res = R.SUMSQ.check(A.sumsq_axes_unshifted)
    hint = next(f.hint for f in res.findings if "in_axes=(1,)" in f.case)
    assert "axes=(1,) on the batched operand (3, 7, 5)" in hint and "axes (2,)" in hint, hint


def test_a_dropped_parameter_is_named_with_its_values():
    (first, *_) = R.SCALED_DIFF.check(A.scaled_diff_drops_scale).findings
    assert "scale=1.0" in first.hint and "scale=2.0" in first.hint, first.hint


TABLES = {"proxy": ("not a dict",),
          "name": ("not names", "never its name"),
          "missing table": ("not every layout has every table",),
          "not a rule table": ("not among TABLE_NAMES",)}


@pytest.mark.parametrize("wrong, mistake", [
    (A.which_table_asks_proxies, "proxy"),
    (A.which_table_tries_in, "proxy"),
    (A.which_table_by_name, "name"),
    (A.which_table_assumes_every_table, "missing table"),
])
def test_which_table_hints(wrong, mistake):
    contract.assert_hints_name(which_table.check_which_table(wrong), TABLES, mistake)


def test_a_which_table_that_never_checks_for_a_dict_fails_on_the_readthrough_layout():
    res = which_table.check_which_table(A.which_table_tries_in)
    assert [f.got for f in res.findings if "collapsed-readthrough" in f.case] == ["'primitive_batchers'"]
    assert any("reading through" in f.hint for f in res.findings), res.summary()
    assert not which_table.check_which_table(A.which_table_tries_in, hidden=True).passed


@pytest.mark.parametrize("wrong, mistake", [
    (A.table_sizes_every_batchers_dict, "not a rule table"),
    (A.table_sizes_counts_proxies, "proxy"),
    (A.table_sizes_tries_len, "proxy"),
])
def test_table_sizes_hints(wrong, mistake):
    contract.assert_hints_name(table_sizes.check_table_sizes(wrong), TABLES, mistake)


def test_a_table_sizes_that_trusts_len_fails_on_the_readthrough_layout():
    res = table_sizes.check_table_sizes(A.table_sizes_tries_len)
    assert [f for f in res.findings if "collapsed-readthrough" in f.case], res.summary()


# ---- self-checks ---------------------------------------------------------------------------------

def one_hint(res) -> str:
    assert not res.passed and len(res.findings) == 1 and not res.graded, res.summary()
    return res.findings[0].hint


TRACER = {"normalised": ("stores it normalised",), "value as seen": ("is the value underneath",),
          "seen as value": ("is what f sees (x.shape)",)}


@pytest.mark.parametrize("answer, mistake", [
    ((-1, (2, 3), (2, 3, 4)), "normalised"),
    ((2, (2, 3, 4), (2, 3, 4)), "value as seen"),
    ((2, (2, 3), (2, 3)), "seen as value"),
])
def test_tracer_selfcheck_hints(answer, mistake):
    contract.assert_hints_name(S.selfcheck_tracer(answer), TRACER, mistake)


def test_route_selfcheck_names_the_layout_and_the_answer_given():
    wrong = "shortcut" if S.sin_route() == "rule" else "rule"
    hint = one_hint(S.selfcheck_route(wrong))
    assert f'You said "{wrong}"' in hint and f"tables are {core.layout()}" in hint
    assert "Answer" in one_hint(S.selfcheck_route("refused"))


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


ROWMAX = {"vmap's input": ("is the batch as vmap holds it",), "vmap's output": ("is the result vmap returns",),
          "name": ("is named",)}


@pytest.mark.parametrize("answer, mistake", [
    (("rowmax", (4, 3, 5), (4, 3)), "vmap's input"),
    (("rowmax", (12, 5), (4, 3)), "vmap's output"),
    (("rowmax_p", (12, 5), (12,)), "name"),
])
def test_rowmax_selfcheck_hints(answer, mistake):
    contract.assert_hints_name(S.selfcheck_rowmax_equation(answer, A.rowmax_rule), ROWMAX, mistake)
