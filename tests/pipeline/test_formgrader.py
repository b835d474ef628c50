"""nbgrader's formgrader, in a Jupyter server started at the top level, opens on this course.

The server runs in a throw-away copy of the layout (the top-level nbgrader_config.py, course/,
exercises/), so the real course/ gets no gradebook from the test.
"""
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not (ROOT / "exercises").is_dir(), reason="no exercises yet")]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url):
    with urllib.request.urlopen(url, timeout=10) as resp:
        return resp.status, resp.read().decode()


@pytest.fixture
def layout(tmp_path):
    shutil.copy(ROOT / "nbgrader_config.py", tmp_path)
    (tmp_path / "course").mkdir()
    shutil.copy(ROOT / "course" / "nbgrader_config.py", tmp_path / "course")
    shutil.copytree(ROOT / "exercises", tmp_path / "exercises",
                    ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    return tmp_path


def test_formgrader_lists_the_course_assignments(layout, tmp_path_factory):
    port, token = free_port(), secrets.token_hex(16)
    base = f"http://127.0.0.1:{port}"
    bindir = os.path.dirname(sys.executable)
    env = dict(os.environ, PATH=bindir + os.pathsep + os.environ.get("PATH", ""),
               JUPYTER_PREFER_ENV_PATH="1")
    log = tmp_path_factory.mktemp("server") / "server.log"
    cmd = [os.path.join(bindir, "jupyter"), "server", "--no-browser", "--ServerApp.ip=127.0.0.1",
           f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
           f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={layout}"]
    if os.getuid() == 0:
        cmd.append("--ServerApp.allow_root=True")
    with open(log, "w") as out:
        server = subprocess.Popen(cmd, cwd=layout, env=env, stdout=out, stderr=subprocess.STDOUT,
                                  stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            assert server.poll() is None, log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            try:
                if get(f"{base}/api/status?token={token}")[0] == 200:
                    break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(0.5)
        status, page = get(f"{base}/formgrader?token={token}")
        assert status == 200 and "formgrade" in page.lower()
        status, body = get(f"{base}/formgrader/api/assignments?token={token}")
        names = sorted(a["name"] for a in json.loads(body))
        assert names == sorted(p.name for p in (layout / "exercises").iterdir()
                               if any(p.glob("*.ipynb")))
        assert (layout / "course" / "gradebook.db").exists()     # the course's own gradebook
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait(timeout=10)
