"""The trusted side of a child's run (grader/judge/session.py): a case is sent only after the
cells ran and the case before was answered; only the child's sealed lines, in their order,
count; what is reported cannot be taken back; an observation is refused before it is decoded
when it is too large, too deep or holds too many values."""
import json

import pytest

from grader.judge import session
from grader.judge.box import channel

JOB = {"observe": "x:y", "needs": ["f"], "calls": ["m:f"], "strict": False}


class Child:
    """The child's end of a session, played here: its sealer, writing to a list."""

    def __init__(self, talk):
        opening = talk.opening()
        self.talk, self.sent = talk, [json.loads(opening[channel.KEY_BYTES:])]
        self.lines = []
        key = bytearray(opening[:channel.KEY_BYTES])
        self.sealer = channel.Sealer(-1, key, self._write)

    def _write(self, _fd, data) -> int:
        self.lines.append(bytes(data).rstrip(b"\n"))
        return len(data)

    def say(self, kind, **fields):
        self.sealer.send(kind, **fields)
        reply = self.talk.receive(self.lines[-1])
        if reply:
            self.sent.append(json.loads(reply))
        return self.sent[-1]


def talk(cases=("c0", "c1"), case_bytes=1 << 16):
    return session.Session([{"name": "a", "kind": "answer", "source": ""}],
                           {"g": (JOB, list(cases))}, lambda g, seen: list(seen), case_bytes)


def test_no_case_goes_out_before_the_cells_ran_and_each_only_after_the_last_was_answered():
    t = talk()
    c = Child(t)
    assert c.sent == [{"cells": [{"name": "a", "kind": "answer", "source": ""}],
                       "exercises": {"g": JOB}}]                      # no case in the request
    c.say("cell", name="a")
    assert len(c.sent) == 1
    assert c.say("ready", cell_errors=[], missing={}) == {"op": "case", "gid": "g", "i": 0,
                                                          "case": "c0"}
    c.say("hit", spec="m:f", phase="g", cell=None, direct=True, own=False)
    assert len(c.sent) == 2                                          # a report: nothing sent
    assert c.say("obs", gid="g", i=0, v=1)["i"] == 1
    assert c.say("obs", gid="g", i=1, v=2) == {"op": "close", "gid": "g"}
    assert c.say("closed", gid="g") == {"op": "end"}
    c.say("bye")
    assert t.said_bye and t.verdicts == {"g": [1, 2]}
    assert t.calls("g", {"m:f"}, False, ()) == ["m:f"]


@pytest.mark.parametrize("wrong", ["an answer to a case not sent", "a second answer",
                                   "a close before the last case", "a second ready"])
def test_a_sealed_line_out_of_the_child_s_order_ends_the_run_as_forged(wrong):
    c = Child(talk())
    c.say("ready", cell_errors=[], missing={})
    with pytest.raises(session.Stop) as stop:
        if wrong == "an answer to a case not sent":
            c.say("obs", gid="g", i=1, v=0)
        elif wrong == "a second answer":
            c.say("obs", gid="g", i=0, v=0)
            c.say("obs", gid="g", i=0, v=0)
        elif wrong == "a close before the last case":
            c.say("closed", gid="g")
        else:
            c.say("ready", cell_errors=[], missing={})
    assert stop.value.forged and c.talk.forged_at == "g"


def test_an_unsealed_or_replayed_line_ends_the_run_as_forged():
    t = talk()
    c = Child(t)
    c.say("cell", name="a")
    for line in (b'{"n": 1, "t": "ready"}', c.lines[-1]):            # no seal; seal, old number
        with pytest.raises(session.Stop) as stop:
            t.receive(line)
        assert stop.value.forged and t.forged_at == session.CELLS


def test_what_was_reported_stays_whatever_comes_after():
    t = talk()
    c = Child(t)
    c.say("tampered", what=["grader.core._jax.f"])
    c.say("ready", cell_errors=[], missing={})
    c.say("hit", spec="m:f", phase="g", cell=None, direct=False, own=True)
    with pytest.raises(session.Stop):
        t.receive(b"0" * 64 + b' {"n": 3, "t": "tampered", "what": []}')
    assert t.changes("g") == ["grader.core._jax.f"] and t.calls("g", {"m:f"}, False, ()) == ["m:f"]


def _peak_kib() -> int:
    with open("/proc/self/status") as fh:
        return next(int(ln.split()[1]) for ln in fh if ln.startswith("VmHWM"))


@pytest.mark.parametrize("value, case_bytes, why", [
    ("[" * 5000 + "]" * 5000, 16 << 20, "nested deeper"),
    ("[" + "[]," * 200_000 + "[]]", 16 << 20, "values"),
    ("[" + "0.5," * 3_000_000 + "0.5]", 1 << 20, "bytes"),      # 16M floats' worth, as text
])
def test_an_observation_too_large_deep_or_many_is_refused_before_it_is_decoded(
        value, case_bytes, why):
    t = talk(case_bytes=case_bytes)
    c = Child(t)
    c.say("ready", cell_errors=[], missing={})
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")
    before = _peak_kib()
    payload = f'{{"n": 1, "t": "obs", "gid": "g", "i": 0, "v": {value}}}'.encode()
    line = channel.tag(t.key, payload).encode() + b" " + payload
    with pytest.raises(session.Stop) as stop:
        t.receive(line)
    assert not stop.value.forged and "cannot read" in stop.value.reason
    assert why in stop.value.reason
    # Refused without building it: a few times the line at most, not the objects it names.
    assert _peak_kib() - before < 3 * len(line) // 1024 + 16 * 1024


def test_a_line_longer_than_one_case_may_be_is_named_for_the_exercise():
    t = talk(case_bytes=1024)
    Child(t).say("ready", cell_errors=[], missing={})
    assert t.too_long() == "answered more than 1 KiB for one case of g"
