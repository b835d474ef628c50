"""The plain-data wire between the student's side and the trusted side (grader/wire.py): what
goes in comes out exactly, anything else is refused, and a student's error is one Failure."""
import json

import numpy as np
import pytest

from grader import wire
from grader.wire import Failure

VALUES = [
    None, True, False, 0, -3, 2 ** 62, 1.5, float("inf"), "", "ünïcode", b"", b"\x00\xff",
    (), (1, (2, None)), [], [1, [2, (3,)]], {}, {"a": {"b": [(), {"c": b"x"}]}},
    {"__tuple__": 1, "__dict__": [2]},                  # marker-like keys of a real dict
    Failure("vmap", "ValueError: bad spec"), [Failure("call", "E")],
    Failure("vmap", "ValueError: bad spec", {"in_axes": (7, None), "out_axes": 0}),
]


@pytest.mark.parametrize("value", VALUES, ids=repr)
def test_plain_data_round_trips_exactly(value):
    back = wire.loads(wire.dumps(value))
    assert back == value and type(back) is type(value)
    json.loads(wire.dumps(value))                       # real JSON on the way


def test_kinds_survive_where_json_would_merge_them():
    back = wire.loads(wire.dumps({"t": (1,), "l": [1], "b": True, "i": 1}))
    assert type(back["t"]) is tuple and type(back["l"]) is list
    assert back["b"] is True and type(back["i"]) is int


def test_numpy_scalars_become_python_scalars():
    back = wire.loads(wire.dumps([np.int64(3), np.float32(0.5), np.bool_(True)]))
    assert back == [3, 0.5, True] and [type(v) for v in back] == [int, float, bool]


@pytest.mark.parametrize("array", [np.arange(6, dtype=np.float32).reshape(2, 3),
                                   np.array(2.5), np.zeros((0, 4), np.int32),
                                   np.array([True, False]), np.arange(12).reshape(3, 4).T])
def test_arrays_travel_packed(array):
    back = wire.unpack(wire.loads(wire.dumps(wire.pack(array))))
    assert back.shape == array.shape and back.dtype == array.dtype
    assert np.array_equal(back, array)


@pytest.mark.parametrize("value", [object(), {1: "a"}, {"a": {2: "b"}}, {1, 2}, np.zeros(3),
                                   lambda: 0, [complex(1, 2)]], ids=repr)
def test_anything_else_is_refused(value):
    with pytest.raises(TypeError, match="not plain data"):
        wire.dumps(value)


@pytest.mark.parametrize("text", ['{"a": 1}', '{"__tuple__": [], "x": 1}', '{"__bytes__": 1, "y": 2}',
                                  '[{"__failure__": ["s", "e"], "z": 0}]'])
def test_dicts_plain_never_writes_are_refused(text):
    with pytest.raises(ValueError, match="not plain data"):
        wire.loads(text)


# ---- failures ------------------------------------------------------------------------------------

def test_observe_safely_turns_the_students_error_into_one_failure():
    def observe(fn, case):
        with wire.stage("answer"):
            return fn(case)
    assert wire.observe_safely(observe, (lambda c: c + 1,), 1) == 2
    got = wire.observe_safely(observe, (lambda c: c / 0,), 1)
    assert got == Failure("answer", "ZeroDivisionError: division by zero")
    assert got.kind == "ZeroDivisionError"
    assert wire.observe_safely(lambda fn, case: fn(case), (lambda c: c / 0,), 1).stage == "call"


def test_the_innermost_stage_names_the_failure():
    with pytest.raises(KeyError) as err:
        with wire.stage("outer"):
            with wire.stage("inner"):
                raise KeyError("k")
    assert wire.failure_from(err.value) == Failure("inner", "KeyError: 'k'")


def test_a_stage_can_attach_plain_detail_to_its_failure():
    def observe(fn, case):
        with wire.stage("vmap", detail={"in_axes": case}):
            return fn(case)
    got = wire.observe_safely(observe, (lambda c: 1 / 0,), (7,))
    assert got == Failure("vmap", "ZeroDivisionError: division by zero", {"in_axes": (7,)})
    assert wire.loads(wire.dumps(got)) == got
    # Without detail, a failure is written as before, so older readings still load.
    assert json.loads(wire.dumps(Failure("s", "e"))) == {"__failure__": ["s", "e"]}
    with pytest.raises(ValueError):
        wire.loads('{"__failure__": ["s", "e", 1, 2]}')


def test_a_failure_is_the_error_line_not_the_notes_after_it():
    # JAX adds a note ("For simplicity, JAX has removed its internal frames...") to errors raised
    # under its transformations; Python prints notes after the error line.
    err = RuntimeError("student bug")
    err.add_note("For simplicity, JAX has removed its internal frames from the traceback.")
    assert wire.failure_from(err) == Failure("call", "RuntimeError: student bug")


def test_a_jax_error_of_the_student_names_the_error():
    import jax

    def rule(x):
        raise NotImplementedError("not yet")
    got = wire.observe_safely(lambda fn, case: jax.vmap(fn)(np.ones((2, 3))), (rule,), None)
    assert got.error == "NotImplementedError: not yet"


def test_a_long_error_is_cut():
    assert len(wire.failure_from(ValueError("x" * 1000)).error) == 400


def test_keyboard_interrupt_is_not_the_students_failure():
    def interrupted(*args):
        raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt):
        wire.observe_safely(interrupted, (), None)


# What comes from the student's side is measured before it is decoded (issue 22, item 6).
@pytest.mark.parametrize("data, why", [
    (b"[" * 41 + b"]" * 41, "nested deeper than 40"),
    (b'{"a": [' + b"{}," * 600 + b"{}]}", "more than 1000 values"),
    (b'"' + b"x" * 5000 + b'"', "more than 4096"),
])
def test_data_too_deep_many_or_long_is_refused_before_decoding(data, why):
    with pytest.raises(wire.TooLarge, match=why):
        wire.bound(data, 4096, 40, 1000)


def test_structure_inside_strings_does_not_count():
    text = json.dumps({"s": "[[[[{{{{,,,," * 100 + '\\"]]]"', "t": [1, 2]}).encode()
    wire.bound(text, 1 << 20, 3, 10)
    assert wire.loads_bounded(wire.dumps({"e": 'a "quoted" [x]'}).encode(), 1 << 10, 5, 20) == \
        {"e": 'a "quoted" [x]'}
