"""nbgrader's formgrader, in a Jupyter server started at the top level (as `make lab` starts it),
opens on this course, with the term's settings from course/nbgrader_config.py: the exchange an
assignment was released to, and its due date; `make lab` itself offers no terminal and sends the
course's Content-Security-Policy (tests/browser/test_formgrader_xss.py: what that holds off).

The server runs in a throw-away copy of the layout (the top-level nbgrader_config.py, course/,
exercises/), so the real course/ gets no gradebook from the test; the copy's exchange and due date
are set at the end of its course/nbgrader_config.py, the one place an instructor sets them.
"""
import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from tools import classroom as C

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.slow]


@pytest.fixture
def layout(tmp_path):
    shutil.copy(ROOT / "nbgrader_config.py", tmp_path)
    (tmp_path / "course").mkdir()
    shutil.copy(ROOT / "course" / "nbgrader_config.py", tmp_path / "course")
    shutil.copytree(ROOT / "exercises", tmp_path / "exercises",
                    ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    (tmp_path / "exchange").mkdir(mode=0o777)
    first = sorted(p.name for p in (tmp_path / "exercises").iterdir() if any(p.glob("*.ipynb")))[0]
    C.set_term(C.Paths(str(tmp_path)), {"Exchange.root": str(tmp_path / "exchange"),
                                        "DueDates.dates": {first: "2026-10-05 17:00:00 UTC"}})
    for step in ("generate_assignment", "release_assignment"):
        C.nbgrader([step, first], str(tmp_path / "course"))
    C.nbgrader(["term"], str(tmp_path / "course"), app_class=_term_app())
    return tmp_path


def _term_app():
    from grader.instructor.term import TermApp
    return TermApp


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
    found = {a["name"]: a for a in json.loads(body)}
    names = sorted(p.name for p in (layout / "exercises").iterdir() if any(p.glob("*.ipynb")))
    assert sorted(found) == names
    # the exchange from the config: releasable, and the released one shows as released
    assert all(a["releaseable"] for a in found.values()), found
    assert [found[n]["status"] for n in names] == ["released"] + ["draft"] * (len(names) - 1)
    assert found[names[0]]["duedate_notimezone"].startswith("2026-10-05T17:00")
    assert (layout / "course" / "gradebook.db").exists()     # the course's own gradebook


def test_make_lab_offers_no_terminal_and_sends_the_courses_policy(serve, tmp_path):
    """`make lab` (the server the formgrader runs in, showing students' notebooks): every page, the formgrader's
    too, carries jupyter/jupyter_server_config.py's Content-Security-Policy, files served raw are sandboxed on top,
    and no terminal can be opened."""
    import urllib.error
    import urllib.request

    env = {k: v for k, v in os.environ.items() if not k.startswith("MAKE")}
    env["JUPYTER_CONFIG_DIR"] = str(tmp_path / "config")       # nothing of the user's own config
    lab = serve(lambda port, token: [
        "make", "--no-print-directory", "-C", str(ROOT), "-o", ".venv/.installed", "lab", f"PORT={port}",
        f"LAB_ARGS=--IdentityProvider.token={token} --ServerApp.port_retries=0"], env=env)

    def headers(path, method="GET"):
        req = urllib.request.Request(f"{lab.base}{path}", method=method,
                                     headers={"Authorization": f"token {lab.token}"})
        try:
            with urllib.request.urlopen(req, timeout=10) as resp:
                return resp.status, resp.headers
        except urllib.error.HTTPError as err:
            return err.code, err.headers

    for path in ("/lab", "/formgrader/manage_assignments", "/api/contents"):
        status, got = headers(path)
        assert status == 200, path
        policy = got["Content-Security-Policy"]
        assert "script-src 'self'" in policy and "frame-ancestors 'self'" in policy, (path, policy)
        assert "object-src 'none'" in policy and "connect-src 'self'" in policy, (path, policy)
    assert "sandbox" in headers("/files/README.md")[1]["Content-Security-Policy"]
    assert headers("/api/terminals", "POST")[0] == 404
    assert headers("/api/terminals")[0] == 404
