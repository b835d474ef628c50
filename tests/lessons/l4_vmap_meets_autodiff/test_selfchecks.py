"""Lesson 4's self-check (grader/lessons/l4_vmap_meets_autodiff/selfchecks.py): the live answers, the
same on every release, and a check that never raises."""
from grader.lessons.l4_vmap_meets_autodiff import selfchecks as S


def test_the_routes_are_what_the_lesson_teaches():
    routes = S.routes()
    assert routes[1] == "process_custom_jvp_call" and routes[2] == "process_custom_vjp_call"
    assert routes[3] == "none" and routes[4] == "process_custom_vjp_call"
    assert routes[5] == "process_primitive" and routes[6] == "process_custom_jvp_call"


def test_right_predictions_pass_and_partial_ones_are_not_yet_complete():
    assert S.selfcheck_routes(S.routes()).passed
    partial = S.selfcheck_routes({1: "process_custom_jvp_call"})
    assert not partial.passed and not partial.findings
    assert partial.note == "not answered yet: [2, 3, 4, 5, 6]"
    for released in ({}, None, {n: None for n in range(1, 7)}):      # as the release leaves it
        blank = S.selfcheck_routes(released)
        assert not blank.passed and not blank.findings and blank.note.startswith("not answered yet")


def test_a_wrong_prediction_gets_the_reason_and_junk_never_raises():
    res = S.selfcheck_routes({3: "process_custom_vjp_call", 5: "process_custom_vjp_call"})
    hints = " ".join(f.hint for f in res.findings)
    assert "grad's own trace meets the custom_vjp call first" in hints
    assert "custom_vmap_call is an ordinary primitive" in hints
    for junk in (None, {"one": 1}, {9: "none"}, {1: 3.5}):
        res = S.selfcheck_routes(junk)
        assert not res.graded and not res.passed
        res.raise_if_failed()                                     # a self-check never raises


def test_the_calls_print_one_a_line():
    assert S.format_route_calls().count("\n") == 5 and "jax.vmap(jax.jit(f_jvp))" in S.format_route_calls()
