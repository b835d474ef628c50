"""`grader.judge.box.outside` on Python 3.11, which raises no audit event for a new thread: the
start functions are wrapped (`_wrap_thread_starts`) and the wrapper must report each start. The
module is loaded by path in a fresh interpreter, beside a stand-in for its one sibling import, so
that the wrapping leaves this process alone and runs on an interpreter without JAX."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import grader.judge.box.outside as outside

_PROBE = r"""
import importlib.util, sys, types
package = types.ModuleType("box"); package.__path__ = []
tamper = types.ModuleType("box.tamper")
for _word in ("outside", "thread", "process", "monitor"):
    setattr(tamper, _word.upper(), _word)
sys.modules.update({"box": package, "box.tamper": tamper})
spec = importlib.util.spec_from_file_location("box.outside", sys.argv[1])
outside = importlib.util.module_from_spec(spec); spec.loader.exec_module(outside)

class Watch:                       # what `_hook` hands a thread start to
    count = 0
    def started(self, what):
        assert what == "thread", what
        Watch.count += 1
outside._watch[:] = [Watch()]
outside._wrap_thread_starts()      # (no audit hook is installed here: only the wrapper can report)

import _thread, threading, time
_thread.start_new_thread(abs, (1,))
time.sleep(0.05)
after_thread = Watch.count
t = threading.Thread(target=abs, args=(1,)); t.start(); t.join()
print(after_thread, Watch.count - after_thread)
"""


def _starts(python: str) -> tuple[int, int]:
    done = subprocess.run([python, "-c", _PROBE, outside.__file__], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    by_thread, by_threading = done.stdout.split()
    return int(by_thread), int(by_threading)


def test_the_wrapper_reports_a_start_through_thread_on_any_python():
    assert _starts(sys.executable)[0] == 1


def _python311() -> str | None:
    found = shutil.which("python3.11")
    if found is None:
        pyenv = Path.home() / ".pyenv" / "versions"
        found = next((str(p) for p in sorted(pyenv.glob("3.11*/bin/python3.11"))), None)
    return found


@pytest.mark.skipif(_python311() is None, reason="no Python 3.11 on this machine")
def test_on_python_311_a_threading_thread_is_reported_too():
    # 3.11's threading starts its threads through its own reference to _thread.start_new_thread.
    assert _starts(_python311()) == (1, 1)
