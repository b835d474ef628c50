"""Exercise 2, which unmapped inputs were widened (grader/lessons/l2_where_the_axis_goes/widened.py)."""
import numpy as np
import pytest

from grader.lessons.l2_where_the_axis_goes import widened as WD

from .. import contract
from . import answers as A


def test_reference_passes_visible_and_hidden():
    contract.assert_passes(WD.WIDENED, A.widened, min_cases=2)


def test_the_tool_the_wrong_answers_vary_is_the_solution_unvaried():
    # each wrong tool is tracing() with another test, attribution or data flow: with none it is
    # the solution, so it must pass where the solution does
    contract.assert_passes(WD.WIDENED, A.widened_by_the_definition, min_cases=2)


# The course's widening_broadcasts transcribed (every broadcast that grows); the lesson's own
# widened_to_batch (a broadcast adding one axis of the batch size: the right equations here)
# with the operand's input blamed, or every unmapped input; a broadcast to the batch size blamed
# on every unmapped input; the right equations without the data flow; the visible cases looked up.
PATTERN_MATCHERS = [A.widened_transcribed, A.widened_lesson_helper,
                    A.widened_lesson_helper_blames_all, A.widened_lesson_cell,
                    A.widened_no_data_flow, A.widened_fitted(WD.WIDENED)]


@pytest.mark.parametrize("answer", PATTERN_MATCHERS, ids=lambda a: a.__name__)
def test_a_pattern_matching_tool_earns_what_a_blank_earns(answer):
    contract.assert_earns_what_a_blank_earns(WD.WIDENED, answer)


def test_the_honest_tool_earns_every_point_through_the_wire():
    contract.assert_honest_earns_everything(WD.WIDENED, A.widened)


def test_every_hidden_set_holds_every_widening_and_every_decoy():
    for seed in range(4):
        motifs = {m for c in WD.cases(np.random.default_rng(seed), True) for m in c["_motifs"]}
        assert motifs >= set(WD.WIDENS) | set(WD.DECOYS)


def test_the_definition_on_the_visible_programs():
    # concatenate widens u; the size-1 axis of the mul does not
    assert WD.expect(WD.VISIBLE[0]) == [[0, [0]]]
    # select widens sin(w) (input 2) and nothing else: the broadcast of x carries the batch
    (widening,) = WD.expect(WD.VISIBLE[1])
    assert widening[1] == [2]


@pytest.mark.parametrize("motif", sorted(WD.MOTIFS))
def test_each_motif_widens_exactly_when_its_name_says(motif):
    rng = np.random.default_rng(0)
    program = WD._program(rng, [motif], (3,))
    case = {"program": program, "in_dims": {"u": None, "w": None, "x": 0, "y": 1}, "size": 7}
    assert bool(WD.expect(case)) == (motif in WD.WIDENS), (motif, WD.expect(case))


def test_a_raising_answer_is_a_failed_result():
    contract.assert_raising_answer_fails(WD.WIDENED)


def test_hidden_cases_are_fresh_and_never_visible():
    contract.assert_fresh(WD.WIDENED, key=lambda c: repr((c["program"], c["in_dims"])))


def test_cases_observations_and_expectations_are_plain_data():
    contract.assert_plain_and_judged_alike(WD.WIDENED, A.widened)
