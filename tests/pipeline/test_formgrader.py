"""nbgrader's formgrader, in a Jupyter server started at the top level, opens on this course.

The server runs in a throw-away copy of the layout (the top-level nbgrader_config.py, course/,
exercises/), so the real course/ gets no gradebook from the test.
"""
import json
import os
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not (ROOT / "exercises").is_dir(), reason="no exercises yet")]


@pytest.fixture
def layout(tmp_path):
    shutil.copy(ROOT / "nbgrader_config.py", tmp_path)
    (tmp_path / "course").mkdir()
    shutil.copy(ROOT / "course" / "nbgrader_config.py", tmp_path / "course")
    shutil.copytree(ROOT / "exercises", tmp_path / "exercises",
                    ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    return tmp_path


def test_formgrader_lists_the_course_assignments(layout, serve):
    bindir = os.path.dirname(sys.executable)
    env = dict(os.environ, PATH=bindir + os.pathsep + os.environ.get("PATH", ""),
               JUPYTER_PREFER_ENV_PATH="1")

    def command(port, token):
        cmd = [os.path.join(bindir, "jupyter"), "server", "--no-browser",
               "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}",
               "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}",
               f"--ServerApp.root_dir={layout}"]
        return cmd + (["--ServerApp.allow_root=True"] if os.getuid() == 0 else [])

    server = serve(command, cwd=layout, env=env)
    status, page = server.get("/formgrader")
    assert status == 200 and "formgrade" in page.decode().lower()
    status, body = server.get("/formgrader/api/assignments")
    names = sorted(a["name"] for a in json.loads(body))
    assert names == sorted(p.name for p in (layout / "exercises").iterdir()
                           if any(p.glob("*.ipynb")))
    assert (layout / "course" / "gradebook.db").exists()     # the course's own gradebook
