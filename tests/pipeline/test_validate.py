"""nbgrader's Validate, as the Validate button runs it in the course's JupyterLab (`make lab`):
POST /assignments/validate to a Jupyter server started at the top level, which reads the course's
configuration (the top-level nbgrader_config.py loads course/nbgrader_config.py). Validate runs the
student's notebook in the student's own environment, so every check really runs: the released
notebook, unanswered, fails; the same notebook with the instructor's solutions passes. (Autograde
alone runs in the sandboxed kernel, where the checks are stubs and the judge grades.)
"""
import json
import os
import shutil
import sys
from pathlib import Path

import nbformat
import pytest
from traitlets.config.loader import PyFileConfigLoader

from grader.judge import kernel
from tests.fixtures.servers import start_server
from tools import classroom as C

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.slow]
FIRST = C.assignments(str(ROOT / "exercises"))[0]


def test_only_autograde_uses_the_sandboxed_kernel():
    config = PyFileConfigLoader("nbgrader_config.py", path=str(ROOT / "course")).load_config()
    assert config.BoundedExecute.kernel_name == kernel.NAME
    assert "kernel_name" not in config.Execute          # validate's executor: the student's kernel
    assert config.ExecutePreprocessor.kernel_name == "inside-vmap"


@pytest.fixture(scope="module")
def layout(tmp_path_factory):
    """The top level's layout in a throw-away copy, with the first assignment generated and two
    copies of its student version: as released, and answered with the instructor's solutions."""
    top = tmp_path_factory.mktemp("validate")
    shutil.copy(ROOT / "nbgrader_config.py", top)
    (top / "course").mkdir()
    shutil.copy(ROOT / "course" / "nbgrader_config.py", top / "course")
    shutil.copytree(ROOT / "exercises", top / "exercises",
                    ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    C.nbgrader(["generate_assignment", FIRST], str(top / "course"))
    released = top / "course" / "release" / FIRST / f"{FIRST}.ipynb"
    source = nbformat.read(top / "exercises" / FIRST / f"{FIRST}.ipynb", as_version=4)
    work = top / "work"
    work.mkdir()
    shutil.copy(released, work / "blank.ipynb")
    nbformat.write(C.answer(C.FULL, nbformat.read(released, as_version=4), source),
                   work / "solved.ipynb")
    return top


@pytest.fixture(scope="module")
def server(layout, tmp_path_factory):
    """A Jupyter server at the top level, as `make lab` starts one."""
    bindir = os.path.dirname(sys.executable)
    env = dict(os.environ, PATH=bindir + os.pathsep + os.environ.get("PATH", ""),
               JUPYTER_PREFER_ENV_PATH="1")

    def command(port, token):
        cmd = [os.path.join(bindir, "jupyter"), "server", "--no-browser",
               "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}",
               "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}",
               f"--ServerApp.root_dir={layout}"]
        return cmd + (["--ServerApp.allow_root=True"] if os.getuid() == 0 else [])

    found = start_server(command, tmp_path_factory.mktemp("server") / "server.log", cwd=layout,
                         env=env)
    yield found
    found.stop()


def validate(server, name):
    status, body = server.post("/assignments/validate", {"path": f"work/{name}.ipynb"})
    assert status == 200
    answer = json.loads(body)
    assert answer["success"], answer["value"]          # validation ran (not its verdict)
    return answer["value"]


def graded_checks(layout) -> int:
    source = nbformat.read(layout / "exercises" / FIRST / f"{FIRST}.ipynb", as_version=4)
    return len(C.exercises_in(source))


def test_validate_fails_an_unanswered_notebook_on_every_graded_check(server, layout):
    value = validate(server, "blank")
    failed = value.get("failed", [])
    assert len(failed) >= graded_checks(layout), value
    assert all("FAILED check_" in f["error"] for f in failed), failed
    assert "not run while grading" not in json.dumps(value)


def test_validate_passes_a_solved_notebook(server):
    assert validate(server, "solved") == {}
