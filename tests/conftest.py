"""Shared fixtures: every test runs on the CPU, with the repository importable."""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)
os.environ.setdefault("JAX_PLATFORMS", "cpu")


# ---- a Jupyter server on loopback, for the tests that serve the course -------------------------
import pytest  # noqa: E402

from tests.fixtures.servers import Server, free_port, start_server  # noqa: E402


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
        started.append(start_server(command, tmp_path_factory.mktemp("server") / "server.log",
                                    **popen))
        return started[-1]

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
