"""The set-up scaffolding: `make help`, the Python check, pip failures, the helper scripts, and `make lab` serving."""

import json
import os
import re
import socket
import subprocess
import sys
import urllib.error
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MAKE = ["make", "--no-print-directory", "-C", str(ROOT)]
TARGET_LINE = re.compile(r"^([A-Za-z0-9_.-]+):.*## (.+)$")


def run(cmd, **kwargs):
    return subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL, **kwargs)


def described_targets():
    """{target: description} for every Makefile line `target: ... ## description`."""
    lines = (ROOT / "Makefile").read_text().splitlines()
    return {m[1]: m[2].strip() for m in map(TARGET_LINE.match, lines) if m}


def phony_targets():
    text = (ROOT / "Makefile").read_text().replace("\\\n", " ")
    return {t for line in re.findall(r"^\.PHONY:(.*)$", text, re.M) for t in line.split()}


def fake_python(tmp_path, version):
    """An executable that answers every invocation with `version`, like a Python of that version would."""
    path = tmp_path / f"python{version}"
    path.write_text(f"#!/bin/sh\necho {version}\n")
    path.chmod(0o755)
    return path


# ---- make help ------------------------------------------------------------------------------------------------------

def test_help_lists_every_described_target_with_its_line():
    targets = described_targets()
    assert {"help", "setup", "setup-all", "setup-old", "practice", "lab", "lint", "test", "test-gpu", "test-matrix",
            "test-latest", "lessons", "sync-check", "lock", "clean", "distclean"} <= set(targets)
    out = run(MAKE + ["help"])
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    for target, description in targets.items():
        assert "\n" not in description and description
        assert any(line.split(None, 1) == [target, description] for line in lines), (target, out.stdout)


def test_help_is_the_default_goal():
    assert run(MAKE).stdout == run(MAKE + ["help"]).stdout


def test_every_phony_target_has_a_description():
    assert phony_targets() - set(described_targets()) == set()


# ---- the Python check ------------------------------------------------------------------------------------------------

def test_check_python_rejects_an_old_interpreter_in_one_line(tmp_path):
    fake = fake_python(tmp_path, "3.9.0")
    out = run([ROOT / "tools/check-python", fake])
    assert out.returncode == 1
    assert out.stderr == ""
    assert out.stdout == f"inside-vmap: Python 3.12 or newer is required, found 3.9 at {fake}\n"


def test_check_python_rejects_311_which_the_newest_jax_does_not_support(tmp_path):
    fake = fake_python(tmp_path, "3.11.7")
    out = run([ROOT / "tools/check-python", fake])
    assert (out.returncode, out.stdout) == (1, f"inside-vmap: Python 3.12 or newer is required, found 3.11 at {fake}\n")


@pytest.mark.parametrize("version", ["3.12.0", "3.13.0"])
def test_check_python_accepts_a_supported_interpreter(tmp_path, version):
    out = run([ROOT / "tools/check-python", fake_python(tmp_path, version)])
    assert (out.returncode, out.stdout, out.stderr) == (0, "", "")


def test_check_python_names_a_missing_interpreter(tmp_path):
    out = run([ROOT / "tools/check-python", "no-such-python3.11"])
    assert out.returncode == 1
    assert out.stdout.count("\n") == 1 and "'no-such-python3.11' was not found" in out.stdout


def test_make_setup_with_an_old_python_stops_with_the_one_line(tmp_path):
    fake = fake_python(tmp_path, "3.9.0")
    out = run(MAKE + ["setup", f"PYTHON={fake}", f"VENV={tmp_path / 'venv'}"])
    assert out.returncode != 0
    ours = [line for line in (out.stdout + out.stderr).splitlines() if line.startswith("inside-vmap:")]
    assert ours == [f"inside-vmap: Python 3.12 or newer is required, found 3.9 at {fake}"]
    assert "Traceback" not in out.stdout + out.stderr
    assert not (tmp_path / "venv").exists()


@pytest.mark.slow
def test_make_venv_without_the_package_index_says_so_in_one_line(tmp_path, unused_port):
    requirements = tmp_path / "requirements.txt"
    requirements.write_text("six==1.17.0\n")  # not installed in a fresh venv, so pip must ask the index
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_INDEX_URL=f"http://127.0.0.1:{unused_port}/simple", PIP_RETRIES="1",
               BUILD_DIR=str(tmp_path / "build"))
    out = run([ROOT / "tools/make-venv", "python3", tmp_path / "venv", requirements], env=env, timeout=300)
    assert out.returncode == 1
    log = tmp_path / "build" / "setup-venv.log"
    assert out.stdout.splitlines()[-1] == (
        "inside-vmap: cannot reach the package index; check your network/proxy and re-run `make lab` "
        f"(pip's output: {log})")
    assert out.stderr == ""
    assert "Traceback" not in out.stdout
    assert log.is_file()
    assert not (tmp_path / "venv" / ".installed").exists()


# ---- helper scripts and config ---------------------------------------------------------------------------------------

def pytest_on(tmp_path, paths):
    """`make probe` where probe's recipe is the Makefile's own `$(call pytest-on,...)` on ``paths``."""
    probe = tmp_path / "probe.mk"
    venv = os.path.relpath(sys.prefix, ROOT)
    probe.write_text(f"probe:\n\t$(call pytest-on,{venv},,-q -p no:cacheprovider,{paths})\n")
    return run(MAKE + ["-f", "Makefile", "-f", str(probe), "probe"], timeout=120)


def test_pytest_on_fails_for_a_missing_folder(tmp_path):
    out = pytest_on(tmp_path, f"{tmp_path}/lessons {tmp_path}")
    assert out.returncode != 0
    assert f"inside-vmap: {tmp_path}/lessons missing; nothing to test there" in out.stderr
    assert "passed" not in out.stdout


def test_pytest_on_fails_for_a_folder_with_nothing_to_collect(tmp_path):
    (tmp_path / "lessons").mkdir()
    (tmp_path / "lessons" / "01-a.md").write_text("# a lesson without its notebook\n")
    out = pytest_on(tmp_path, f"{tmp_path}/lessons")
    assert out.returncode != 0
    assert f"inside-vmap: no tests collected from {tmp_path}/lessons" in out.stderr


@pytest.mark.parametrize("body, passes", [("assert True", True), ("assert False", False)])
def test_pytest_on_passes_on_pytests_own_verdict(tmp_path, body, passes):
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "test_one.py").write_text(f"def test_one():\n    {body}\n")
    out = pytest_on(tmp_path, f"{tmp_path}/t")
    assert (out.returncode == 0) == passes, out.stdout + out.stderr
    assert ("1 passed" if passes else "1 failed") in out.stdout


def test_nbval_sanitize_rules():
    from nbval.plugin import get_sanitize_patterns

    rules = get_sanitize_patterns((ROOT / "tests/nbval-sanitize.cfg").read_text())
    assert len(rules) == 3  # an empty replacement without its trailing space would silently drop a rule

    def sanitize(text):
        for regex, replace in rules:
            text = re.sub(regex, replace, text)
        return text

    assert sanitize("<function f at 0x7f3a2b1c0d40>") == "<function f at 0xADDR>"
    assert sanitize("/tmp/ipykernel_4242/1234567.py:3: UserWarning") == "/tmp/ipykernel_PID/N.py:3: UserWarning"
    assert sanitize("\x1b[38;5;4mlambda\x1b[0m ; \x1b[1ma\x1b[22m:f32[3]") == "lambda ; a:f32[3]"


def test_ci_run_is_valid_bash():
    script = ROOT / ".ci/run"
    assert os.access(script, os.X_OK)
    assert run(["bash", "-n", script]).returncode == 0


# ---- make lab --------------------------------------------------------------------------------------------------------

@pytest.mark.slow
def test_make_lab_serves_the_course_on_loopback(serve, tmp_path):
    home = tmp_path / "home"                   # the student's home folder: make lab writes nothing there
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MAKE", "JUPYTER", "IPYTHON", "MPL"))}
    lab = serve(lambda port, token: MAKE + [
        "lab", f"PORT={port}", f"LAB_ARGS=--IdentityProvider.token={token} --ServerApp.port_retries=0"],
        env=dict(env, HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"),
                 XDG_CACHE_HOME=str(home / ".cache"), XDG_DATA_HOME=str(home / ".local/share")))
    assert lab.get("/lab")[0] == 200
    status, body = lab.get("/api/contents")
    assert status == 200
    names = {item["name"] for item in json.loads(body)["content"]}
    assert "Makefile" in names
    if (ROOT / "lessons").is_dir():
        assert "lessons" in names
    with pytest.raises(urllib.error.HTTPError) as denied:  # the token is required
        lab.get("/api/contents", token=False)
    assert denied.value.code == 403
    run_a_cell(lab, "import matplotlib.pyplot as plt; plt.plot([1, 2]); print('ran')")
    # nbgrader's Assignments tab: no error where this machine has no class exchange (issue 28), so
    # build/exchange stands in for it; where there is one, that is listed.
    status, body = lab.get("/assignments?course_id=inside-vmap")
    listed = json.loads(body)
    assert status == 200 and listed["success"] is True, listed
    text = lab.log.read_text()
    assert "Open the URL printed below" in text
    assert f"{lab.base}/lab/tree/lessons?token=" in text  # Jupyter masks a token it was given as "..."

    lab.stop()                                 # by pid: make, jupyter and its kernels
    assert sorted(str(p.relative_to(home)) for p in home.rglob("*")) == []
    with socket.socket() as s:  # nothing listens any more...
        assert s.connect_ex(("127.0.0.1", lab.port)) != 0
    with socket.socket() as s:  # ...and a new server could take the port
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", lab.port))


def run_a_cell(server, code):
    """Start a python3 kernel through the server's REST API and run ``code`` in it, as a notebook
    does (websocket-client and jupyter_client come with Jupyter Server)."""
    import jupyter_client
    import websocket
    auth = {"Authorization": f"token {server.token}", "Content-Type": "application/json"}
    request = urllib.request.Request(f"{server.base}/api/kernels", method="POST",
                                     data=json.dumps({"name": "python3"}).encode(), headers=auth)
    with urllib.request.urlopen(request, timeout=60) as response:
        kernel = json.loads(response.read())
    ws = websocket.create_connection(f"ws://127.0.0.1:{server.port}/api/kernels/{kernel['id']}/channels",
                                     header=[f"Authorization: token {server.token}"], timeout=60)
    msg = jupyter_client.session.Session().msg("execute_request", content={
        "code": code, "silent": False, "store_history": True, "user_expressions": {},
        "allow_stdin": False, "stop_on_error": True})
    msg["channel"] = "shell"
    ws.send(json.dumps(msg, default=str))
    seen = ""
    while "ran" not in seen:
        reply = json.loads(ws.recv())
        if reply["msg_type"] == "stream":
            seen += reply["content"]["text"]
        assert reply["msg_type"] != "error", reply["content"]
    ws.close()


# ---- finding Python (tools/find-python) -----------------------------------------------------------

def fake_named(folder, name, version):
    """An executable NAME in FOLDER that reports VERSION and can 'import venv, ensurepip'."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(f"#!/bin/sh\necho {version}\n")
    path.chmod(0o755)
    return path


def find_python(env, *args):
    return run([ROOT / "tools/find-python", *args], env=env)


def test_find_python_takes_the_one_named(tmp_path):
    py = fake_named(tmp_path / "bin", "python3.12", "3.12.4")
    out = find_python({"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}, str(py))
    assert (out.returncode, out.stdout.strip()) == (0, str(py))


def test_find_python_prefers_the_newest_on_path(tmp_path):
    bin_ = tmp_path / "bin"
    fake_named(bin_, "python3.12", "3.12.4")
    newest = fake_named(bin_, "python3.13", "3.13.1")
    fake_named(bin_, "python3", "3.11.7")
    out = find_python({"PATH": f"{bin_}:/usr/bin:/bin", "HOME": str(tmp_path)})
    assert (out.returncode, out.stdout.strip()) == (0, str(newest))


def test_find_python_falls_back_to_pyenv_when_path_has_only_an_old_one(tmp_path):
    bin_ = tmp_path / "bin"
    fake_named(bin_, "python3", "3.11.7")
    root = tmp_path / "pyenv"
    fake_named(root / "versions" / "3.12.1" / "bin", "python3", "3.12.1")
    newest = fake_named(root / "versions" / "3.13.0" / "bin", "python3", "3.13.0")
    out = find_python({"PATH": f"{bin_}:/usr/bin:/bin", "HOME": str(tmp_path),
                       "PYENV_ROOT": str(root)})
    assert (out.returncode, out.stdout.strip()) == (0, str(newest))


def test_find_python_says_in_one_line_what_to_install(tmp_path):
    bin_ = tmp_path / "bin"
    fake_named(bin_, "python3", "3.11.7")
    out = find_python({"PATH": f"{bin_}:/usr/bin:/bin", "HOME": str(tmp_path),
                       "PYENV_ROOT": str(tmp_path / "none")})
    assert out.returncode == 1 and out.stdout.count("\n") == 1
    assert "install Python 3.12 or 3.13" in out.stdout


# ---- bin/nbgrader: which set a command sets up -----------------------------------------------------------------------
STUDENT_COMMANDS = [["validate", "x.ipynb"], ["list"], ["fetch_assignment", "01-the-rule-per-primitive"],
                    ["submit", "01-the-rule-per-primitive"], ["fetch_feedback", "01-the-rule-per-primitive"]]
INSTRUCTOR_COMMANDS = [["db", "student", "list"], ["autograde", "01-the-rule-per-primitive"], ["export"],
                       ["generate_assignment", "01-the-rule-per-primitive"]]


def bin_nbgrader_in(tmp_path, stamps):
    """A copy of bin/nbgrader in a tree of its own whose .venv holds ``stamps`` and a python that only says how it
    was called, with a `make` first on PATH that only says how it was called: what the script would set up, and
    nothing installed."""
    repo = tmp_path / "repo"
    (repo / "bin").mkdir(parents=True)
    (repo / ".venv" / "bin").mkdir(parents=True)
    (repo / "bin" / "nbgrader").write_bytes((ROOT / "bin" / "nbgrader").read_bytes())
    (repo / "bin" / "nbgrader").chmod(0o755)
    (repo / "nbgrader_config.py").write_text("")
    for stamp in stamps:
        (repo / ".venv" / stamp).touch()
    fakes = tmp_path / "fakes"
    fakes.mkdir()
    for path, name in ((fakes / "make", "make"), (repo / ".venv" / "bin" / "python", "python")):
        path.write_text(f'#!/bin/sh\necho "{name} $*" >&2\n')
        path.chmod(0o755)

    def call(*args):
        out = run([str(repo / "bin" / "nbgrader"), *args], cwd=repo, env={"PATH": f"{fakes}:/usr/bin:/bin"})
        assert out.returncode == 0, out.stderr
        return [line.split(None, 1) for line in out.stderr.splitlines()], str(repo)
    return call


@pytest.mark.parametrize("args", STUDENT_COMMANDS + INSTRUCTOR_COMMANDS, ids=lambda a: a[0])
def test_bin_nbgrader_sets_up_the_student_set_for_a_student_s_command_and_the_full_one_otherwise(tmp_path, args):
    call = bin_nbgrader_in(tmp_path, stamps=[])
    target = "setup" if args in STUDENT_COMMANDS else "setup-all"
    lines, repo = call(*args)
    assert lines == [["make", f"-s -C {repo} {target}"], ["python", "-m grader.instructor nbgrader " + " ".join(args)]]


@pytest.mark.parametrize("args", STUDENT_COMMANDS + INSTRUCTOR_COMMANDS, ids=lambda a: a[0])
def test_bin_nbgrader_after_make_setup_adds_the_instructor_s_tools_only_for_an_instructor_s_command(tmp_path, args):
    call = bin_nbgrader_in(tmp_path, stamps=[".installed"])      # `make setup` (or `make lab`) ran
    lines, repo = call(*args)
    made = [line for line in lines if line[0] == "make"]
    assert made == ([] if args in STUDENT_COMMANDS else [["make", f"-s -C {repo} setup-all"]])


def instructor_only():
    """The distributions in requirements/lock.txt that lock-student.txt lacks, and their top-level modules."""
    from importlib.metadata import packages_distributions

    def names(lock):
        return {re.split(r"[=<>\[ ;]", line)[0].lower().replace("_", "-")
                for line in (ROOT / "requirements" / lock).read_text().splitlines() if line[:1].isalnum()}
    extra = names("lock.txt") - names("lock-student.txt")
    return extra, {top for top, dists in packages_distributions().items()
                   if top.isidentifier() and any(d.lower().replace("_", "-") in extra for d in dists)}


@pytest.mark.slow
def test_a_student_s_commands_run_with_the_instructor_s_packages_absent(tmp_path):
    """`bin/nbgrader validate` and `list` from the top level, as the README has students type them, in processes
    (nbgrader's and the kernel's) where every package only the instructor's set has cannot be imported, as in a
    student's .venv: an optional import falls back (jupyter_client's msgpack), a needed one fails the command."""
    dists, hidden = instructor_only()
    assert {"dask", "distributed", "psycopg2", "playwright", "pytest"} <= hidden, hidden
    site = tmp_path / "site"
    site.mkdir()
    # every finder behind one that finds nothing of those: importlib.util.find_spec says None, an import fails,
    # importlib.metadata knows no such distribution
    (site / "sitecustomize.py").write_text(
        "import sys\n"
        f"HIDDEN, DISTS = {hidden!r}, {dists!r}\n"
        "class Hide:\n"
        "    def __init__(self, finders):\n"
        "        self.finders = finders\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.partition('.')[0] in HIDDEN:\n"
        "            return None\n"
        "        for finder in self.finders:\n"
        "            spec = finder.find_spec(name, path, target) if hasattr(finder, 'find_spec') else None\n"
        "            if spec is not None:\n"
        "                return spec\n"
        "    def find_distributions(self, *args, **kwargs):\n"
        "        for finder in self.finders:\n"
        "            for dist in getattr(finder, 'find_distributions', lambda *a, **k: ())(*args, **kwargs):\n"
        "                if (dist.metadata['Name'] or '').lower().replace('_', '-') not in DISTS:\n"
        "                    yield dist\n"
        "    def invalidate_caches(self):\n"
        "        for finder in self.finders:\n"
        "            getattr(finder, 'invalidate_caches', lambda: None)()\n"
        "sys.meta_path[:] = [Hide(list(sys.meta_path))]\n")
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env.update(PATH="/usr/bin:/bin", PYTHONPATH=str(site), INSIDE_VMAP_EXCHANGE=str(tmp_path / "exchange"))
    (tmp_path / "exchange").mkdir()
    python = str(ROOT / ".venv" / "bin" / "python")
    hides = run([python, "-c", "import dask"], env=env)
    assert "No module named 'dask'" in hides.stderr, hides.stderr      # the hiding works
    notebook = tmp_path / "mine.ipynb"
    run([python, "-c", "import nbformat, sys; nb = nbformat.v4.new_notebook(); "
         "nb.cells = [nbformat.v4.new_code_cell('import jax; x = jax.numpy.ones(2)')]; nbformat.write(nb, sys.argv[1])",
         str(notebook)], check=True)
    said = {}
    for args in (["validate", str(notebook)], ["list"]):
        out = run([str(ROOT / "bin" / "nbgrader"), *args], cwd=ROOT, env=env, timeout=300)
        said[args[0]] = out.stdout + out.stderr
        assert out.returncode == 0 and "Traceback" not in said[args[0]], said[args[0]]
        assert "No module named" not in said[args[0]], said[args[0]]
    assert "Success! Your notebook passes all the tests." in said["validate"], said["validate"]
    assert "Released assignments:" in said["list"], said["list"]


def test_test_modules_outside_packages_have_unique_names():
    """pytest's default import mode imports a test folder without __init__.py by the file's bare name, so two
    such files called alike stop the whole run at collection (CI once failed so)."""
    seen = {}
    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        if (path.parent / "__init__.py").exists():
            continue
        seen.setdefault(path.name, []).append(str(path.relative_to(ROOT)))
    assert {n: p for n, p in seen.items() if len(p) > 1} == {}
