"""The grading kernel runs in the sandbox: it computes, but sees neither the course nor the network."""
import json
import pathlib

import nbformat
import pytest
from nbclient import NotebookClient
from traitlets.config import Config

from grader.judge import kernel, sandbox
from tests.fixtures.attacks import ESCALATIONS
from tests.fixtures.kernelspec import installed

ROOT = pathlib.Path(__file__).resolve().parents[2]

PROBE = f"""\
import json, os, socket
try:
    socket.create_connection(("127.0.0.1", 22), timeout=1); net = True
except OSError:
    net = False
print(json.dumps({{"course": os.path.exists({str(ROOT / 'exercises')!r}), "net": net,
                  "cwd_files": sorted(os.listdir("."))}}))
"""


@pytest.fixture
def ipc_config(tmp_path):
    c = Config()
    c.KernelManager.transport = "ipc"
    c.KernelManager.ip = str(tmp_path / "ipc" / "kernel")
    (tmp_path / "ipc").mkdir()
    return c


@pytest.mark.skipif(not (sandbox.available() and installed()),
                    reason="needs bubblewrap and the inside-vmap-sandboxed kernelspec (make setup)")
def test_sandboxed_kernel_hides_course_and_network(tmp_path, ipc_config):
    work = tmp_path / "submission"
    work.mkdir()
    (work / "answer.ipynb").write_text("{}")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(PROBE),
                nbformat.v4.new_code_cell("import jax.numpy as jnp, jax\n"
                                          "print(jax.vmap(jnp.sin)(jnp.ones((2, 3))).shape)"),
                nbformat.v4.new_code_cell(ESCALATIONS + "import json, os\n"
                                          "print(json.dumps(escalations(os.getcwd())))")]
    NotebookClient(nb, kernel_name=kernel.NAME, config=ipc_config, timeout=120,
                   resources={"metadata": {"path": str(work)}}).execute()
    seen = json.loads(nb.cells[0].outputs[0]["text"])
    assert seen == {"course": False, "net": False, "cwd_files": ["answer.ipynb"]}
    assert nb.cells[1].outputs[0]["text"].strip() == "(2, 3)"
    escaped = json.loads(nb.cells[2].outputs[0]["text"])
    assert not any(escaped.values()), escaped       # and the submission's folder stays read-only
    assert sorted(p.name for p in work.iterdir()) == ["answer.ipynb"]


def test_tcp_connection_keeps_the_network_and_says_so(tmp_path, capsys):
    conn = tmp_path / "kernel.json"
    conn.write_text(json.dumps({"transport": "tcp", "ip": "127.0.0.1"}))
    cmd = kernel.command(str(conn), str(tmp_path))
    assert "--share-net" in cmd and "ipykernel_launcher" in cmd
    assert "network" in capsys.readouterr().err
    conn.write_text(json.dumps({"transport": "ipc", "ip": str(tmp_path / "ipc" / "k")}))
    assert "--share-net" not in kernel.command(str(conn), str(tmp_path))
