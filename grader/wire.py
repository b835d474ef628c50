"""Plain data between the student's side and the trusted side of a check.

An observer (in a lesson's ``kit``) runs the student's object on a case and returns plain data:
ints, floats, strings, bytes, tuples, lists and str-keyed dicts, arrays packed as shape, dtype
and bytes. When the student's code raises, the observer lets it raise; `observe_safely` turns it
into the one failure type, `Failure`, naming the stage it happened in (``with stage("vmap"):``).
The judge's child sends this data as JSON (`dumps`/`loads`); the trusted process decides on it.
Nothing here knows an answer.
"""
from __future__ import annotations

import base64
import contextlib
import json
import re
import traceback
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Failure:
    """The student's code raised while being observed: in which stage, and the error's last line.

    ``detail`` is plain data the stage attached (what the student's answer had returned when a
    later step refused it), so a hint can name the offending entry without reading the message."""
    stage: str
    error: str
    detail: object = None

    @property
    def kind(self) -> str:
        """The exception's class name, e.g. ``TypeError``."""
        return self.error.partition(":")[0]


@contextlib.contextmanager
def stage(name: str, detail=None):
    """Label exceptions raised inside the block with the observation stage they come from (and
    ``detail``, plain data about what reached that stage)."""
    try:
        yield
    except Exception as err:
        if not hasattr(err, "_inside_vmap_stage"):
            err._inside_vmap_stage = name
            err._inside_vmap_detail = detail
        raise


def failure_from(err: BaseException, default_stage: str = "call") -> Failure:
    # Without the exception's notes: Python prints them after the error line, and JAX adds one
    # (its traceback-filtering notice) to every error raised under a transformation.
    exc = traceback.TracebackException.from_exception(err, limit=0)
    exc.__notes__ = None
    last = list(exc.format_exception_only())[-1].strip()
    return Failure(getattr(err, "_inside_vmap_stage", default_stage), last[:400],
                   getattr(err, "_inside_vmap_detail", None))


def observe_safely(observe, objs, case):
    """``observe(*objs, case)``, with whatever the student's code raises as a `Failure`."""
    try:
        return observe(*objs, case)
    except Exception as err:  # a student's bug is an observation, not a grader crash
        return failure_from(err)


# ---- arrays --------------------------------------------------------------------------------------

def pack(x) -> dict:
    """An array as plain data: shape, dtype name and raw bytes (C order, whatever its strides)."""
    a = np.asarray(x)       # not ascontiguousarray: it makes a 0-d array 1-d
    return {"shape": tuple(int(d) for d in a.shape), "dtype": str(a.dtype), "data": a.tobytes()}


def unpack(p: dict) -> np.ndarray:
    return np.frombuffer(p["data"], dtype=np.dtype(p["dtype"])).reshape(tuple(p["shape"]))


# ---- JSON ----------------------------------------------------------------------------------------

def plain(value):
    """``value`` as JSON-safe data that `unplain` restores exactly; anything else is refused."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (np.integer, np.floating, np.bool_)):
        return plain(value.item())
    if isinstance(value, bytes):
        return {"__bytes__": base64.b64encode(value).decode()}
    if isinstance(value, Failure):
        extra = [] if value.detail is None else [plain(value.detail)]
        return {"__failure__": [value.stage, value.error, *extra]}
    if isinstance(value, tuple):
        return {"__tuple__": [plain(v) for v in value]}
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {"__dict__": {k: plain(v) for k, v in value.items()}}
    raise TypeError(f"observation is not plain data: {type(value).__name__}")


def unplain(value):
    """The inverse of `plain`; raises ValueError on data `plain` never writes."""
    if isinstance(value, list):
        return [unplain(v) for v in value]
    if isinstance(value, dict):
        if set(value) == {"__bytes__"}:
            return base64.b64decode(value["__bytes__"])
        if set(value) == {"__tuple__"}:
            return tuple(unplain(v) for v in value["__tuple__"])
        if set(value) == {"__dict__"}:
            return {str(k): unplain(v) for k, v in value["__dict__"].items()}
        if set(value) == {"__failure__"}:
            stage_name, error, *detail = value["__failure__"]
            if len(detail) > 1:
                raise ValueError("not plain data: a failure with more than one detail")
            return Failure(str(stage_name), str(error), unplain(detail[0]) if detail else None)
        raise ValueError(f"not plain data: a dict with keys {sorted(value)[:5]}")
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise ValueError(f"not plain data: {type(value).__name__}")


def dumps(value) -> str:
    return json.dumps(plain(value))


def loads(text: str):
    return unplain(json.loads(text))


class TooLarge(ValueError):
    """Data refused before it was decoded: too long, too deep or holding too many values."""


# What JSON's structure is made of, and what a string holds that could hide it.
_SPECIAL = re.compile(rb'[\[\]{}",\\]')
_QUOTE, _BACKSLASH, _COMMA = ord('"'), ord("\\"), ord(",")


def loads_bounded(data: bytes, max_bytes: int, max_depth: int, max_values: int):
    """`loads`, for data from the student's side, within `bound`."""
    bound(data, max_bytes, max_depth, max_values)
    return loads(data)


def bound(data: bytes, max_bytes: int, max_depth: int, max_values: int) -> None:
    """Refuse (`TooLarge`) JSON ``data`` before a single object is built from it when it is
    longer than ``max_bytes``, nests deeper than ``max_depth`` or holds more than ``max_values``
    containers and elements, so decoding it costs at most a small multiple of ``max_bytes``.
    One pass over its structural bytes, strings skipped."""
    if len(data) > max_bytes:
        raise TooLarge(f"{len(data)} bytes, more than {max_bytes}")
    depth = values = 0
    in_string, escaped = False, -1
    for match in _SPECIAL.finditer(data):
        at = match.start()
        byte = data[at]
        if at == escaped:
            continue
        if in_string:
            if byte == _BACKSLASH:
                escaped = at + 1                  # whatever follows is the string's
            elif byte == _QUOTE:
                in_string = False
        elif byte == _QUOTE:
            in_string = True
        elif byte == _COMMA:
            values += 1
        elif byte in b"[{":
            depth, values = depth + 1, values + 1
            if depth > max_depth:
                raise TooLarge(f"nested deeper than {max_depth}")
        else:
            depth -= 1
        if values > max_values:
            raise TooLarge(f"more than {max_values} values")
