"""Shared fixtures: every test runs on the CPU, with the repository importable."""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)
os.environ.setdefault("JAX_PLATFORMS", "cpu")


# ---- a Jupyter server on loopback, for the tests that serve the course -------------------------
import secrets  # noqa: E402
import signal  # noqa: E402
import socket  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402
import urllib.error  # noqa: E402
import urllib.request  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402

import pytest  # noqa: E402


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Server:
    """A started server: its URL and token, its log, and its process group to stop."""
    port: int
    token: str
    log: object
    proc: subprocess.Popen = field(repr=False)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def get(self, path: str, token: bool = True) -> tuple[int, bytes]:
        url = f"{self.base}{path}" + (("&" if "?" in path else "?") + f"token={self.token}"
                                      if token else "")
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.read()

    def wait_until_answering(self, timeout_s: float = 60) -> None:
        deadline = time.monotonic() + timeout_s
        while True:
            assert self.proc.poll() is None, \
                f"the server exited with {self.proc.returncode}:\n{self.log.read_text()}"
            assert time.monotonic() < deadline, \
                f"the server did not answer within {timeout_s:.0f} s:\n{self.log.read_text()}"
            try:
                if self.get("/api/status")[0] == 200:
                    return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(0.5)

    def stop(self) -> None:
        """Stop the whole process group (make, jupyter, kernels), by pid, politely first."""
        if self.proc.poll() is not None:
            return
        os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)


@pytest.fixture
def unused_port() -> int:
    """A loopback port nothing listens on."""
    return free_port()


@pytest.fixture
def serve(tmp_path_factory):
    """``serve(lambda port, token: cmd, cwd=..., env=...)`` starts a server on a free loopback port
    with a fresh token and waits until it answers; every server started is stopped afterwards."""
    started = []

    def start(command, **popen) -> Server:
        port, token = free_port(), secrets.token_hex(16)
        log = tmp_path_factory.mktemp("server") / "server.log"
        with open(log, "w") as out:
            proc = subprocess.Popen(command(port, token), stdout=out, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, start_new_session=True, **popen)
        server = Server(port, token, log, proc)
        started.append(server)
        server.wait_until_answering()
        return server

    yield start
    for server in started:
        server.stop()


# ---- a real PostgreSQL server, for the tests of a shared gradebook (tests/fixtures/postgres.py) ---------------------
@pytest.fixture(scope="session")
def postgres(request):
    """A PostgreSQL server on a loopback port for the whole session (Debian's postgresql, installed
    when missing and allowed); skips, saying why in one line, when none can be started."""
    from tests.fixtures.postgres import PostgresServer, PostgresUnavailable
    try:
        server = PostgresServer.start()
    except (PostgresUnavailable, ImportError) as err:
        why = f"inside-vmap: no PostgreSQL server for the shared-gradebook tests: {err}"
        reporter = request.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line(why, yellow=True)
        pytest.skip(why)
    yield server
    server.stop()


@pytest.fixture
def postgres_url(postgres, request):
    """The SQLAlchemy URL of a fresh database on that server, named after the test."""
    name = "t_" + "".join(ch if ch.isalnum() else "_" for ch in request.node.name.lower())[:50]
    return postgres.create_database(name)
