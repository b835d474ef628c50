"""The judge's conversation with its child (grader/judge/box/channel.py): the key is held by the
hash library alone, and only a line sealed with it, unchanged, is read."""
import os

import pytest

from grader.judge.box import channel


def sealed_lines(key: bytes, *messages) -> list[bytes]:
    r, w = os.pipe()
    buffer = bytearray(key)
    sealer = channel.Sealer(w, buffer)
    for kind, fields in messages:
        sealer.send(kind, **fields)
    os.close(w)
    with os.fdopen(r, "rb") as fh:
        return fh.read().splitlines()


def test_the_key_is_read_into_a_buffer_that_is_zeroed_once_sealed():
    key = channel.new_key()
    r, w = os.pipe()
    os.write(w, key + b'{"cells": []}\n')
    got = channel.read_key(r)
    assert bytes(got) == key
    assert channel.Inbox(r).next() == {"cells": []}       # nothing of the line was read ahead
    channel.Sealer(w, got)
    assert bytes(got) == bytes(channel.KEY_BYTES)
    os.close(r)
    os.close(w)


def test_a_sealed_line_opens_and_an_altered_or_unsealed_one_does_not():
    key = channel.new_key()
    (line,) = sealed_lines(key, ("obs", {"gid": "g", "i": 0, "v": [1]}))
    assert channel.opened(key, line).startswith(b'{"n": 0, "t": "obs"')
    tampered = line[:-2] + (b"2" if line[-2:-1] != b"2" else b"3") + line[-1:]
    for bad in (tampered, line[channel.TAG + 1:], b"0" * channel.TAG + line[channel.TAG:],
                line.replace(b'"obs"', b'"bye"')):
        with pytest.raises(channel.Forged):
            channel.opened(key, bad)
    with pytest.raises(channel.Forged):
        channel.opened(channel.new_key(), line)            # another run's key


def test_lines_are_numbered_in_the_order_they_are_sent():
    key = channel.new_key()
    lines = sealed_lines(key, ("cell", {"name": "a"}), ("ready", {}), ("bye", {}))
    assert [channel.opened(key, ln)[:8] for ln in lines] == [b'{"n": 0,', b'{"n": 1,',
                                                             b'{"n": 2,']
