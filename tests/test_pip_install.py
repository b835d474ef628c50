"""The course in anyone's Jupyter: `pip install .` alone, into a fresh venv, runs every notebook.

A student's own Jupyter, a university JupyterHub or VS Code has none of the course's Makefile: only a Python
environment with the course pip-installed in it, and its standard kernel, named `python3`. So this builds exactly
that: a fresh venv of the course's Python (tools/find-python), `pip install` of a copy of this repository
(non-editable, nothing else; pip's cache is reused), then plain `jupyter nbconvert --execute` on the lessons, the
appendix and the exercise sources (which hold their solutions) under that venv's `python3` kernel. Slow: minutes,
most of them the notebooks themselves.
"""
from __future__ import annotations

import json
import os
import pathlib
import re
import shutil
import subprocess

import nbformat
import pytest

from tests.fixtures.solutions import solution_blocks

pytestmark = pytest.mark.slow

ROOT = pathlib.Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted(ROOT.glob("lessons/*.ipynb")) + sorted(ROOT.glob("exercises/*/*.ipynb"))
# Not part of what a student would install: environments, build output, the git store, a term's gradebook.
NOT_COPIED = shutil.ignore_patterns(".git", ".venv*", "build", "*.egg-info", "__pycache__",
                                    ".ipynb_checkpoints", ".pytest_cache", "course", "node_modules")
# What pip logs when the index cannot be reached (as tools/make-venv reads it).
OFFLINE = re.compile(r"NewConnectionError|ConnectTimeoutError|ReadTimeoutError|ProxyError|Max retries exceeded|"
                     r"Temporary failure in name resolution|Name or service not known|Network is unreachable")
NOTEBOOK_TIMEOUT_S = 900


def run(cmd, **kwargs):
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, stdin=subprocess.DEVNULL,
                          **kwargs)


def student_env(venv: pathlib.Path, home: pathlib.Path) -> dict:
    """A shell with only the venv on it: no PYTHONPATH to the repository, no user kernels, no course variables."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTHON", "VIRTUAL_ENV", "JUPYTER", "IPYTHON", "MPLBACKEND", "PYDEVD"))}
    env.update(PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}", VIRTUAL_ENV=str(venv),
               JUPYTER_DATA_DIR=str(home / "jupyter-data"), JUPYTER_CONFIG_DIR=str(home / "jupyter-config"),
               IPYTHONDIR=str(home / "ipython"), MPLCONFIGDIR=str(home / "matplotlib"))
    return env


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """A fresh venv with a copy of this repository pip-installed in it (non-editable), and its environment."""
    found = run([ROOT / "tools" / "find-python"])
    if found.returncode != 0:
        pytest.skip(f"no Python for the course's environments: {found.stdout.strip()}")
    tmp = tmp_path_factory.mktemp("pip-install")
    repo, venv = tmp / "inside-vmap", tmp / "venv"
    shutil.copytree(ROOT, repo, ignore=NOT_COPIED)
    made = run([found.stdout.strip(), "-m", "venv", venv])
    assert made.returncode == 0, made.stderr
    env = student_env(venv, tmp / "home")
    pip = run([venv / "bin" / "python", "-m", "pip", "install", "--no-input", "--progress-bar", "off", repo],
              cwd=tmp, env=env)
    if pip.returncode != 0 and OFFLINE.search(pip.stdout + pip.stderr):
        pytest.skip("cannot reach the package index to pip install the course:\n" + pip.stderr[-2000:])
    assert pip.returncode == 0, pip.stdout[-3000:] + pip.stderr[-3000:]
    return venv, env, tmp


def installed_packages(venv: pathlib.Path, env: dict, cwd) -> dict:
    probe = ("import json, pkgutil, grader; print(json.dumps({'file': grader.__file__, 'packages': sorted("
             "m.name for m in pkgutil.walk_packages(grader.__path__, 'grader.') if m.ispkg)}))")
    out = run([venv / "bin" / "python", "-c", probe], cwd=cwd, env=env)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_there_are_four_notebooks_to_run():
    # Parametrized by notebook below: with none found, nothing would run and nothing would fail.
    assert [p.parent.name for p in NOTEBOOKS].count("lessons") >= 2 and len(NOTEBOOKS) >= 4, NOTEBOOKS


def test_a_plain_install_holds_every_grader_package(installed):
    venv, env, tmp = installed
    got = installed_packages(venv, env, tmp)
    assert pathlib.Path(got["file"]).is_relative_to(venv), f"grader comes from {got['file']}, not the venv"
    here = sorted("grader." + ".".join(p.parent.relative_to(ROOT / "grader").parts)
                  for p in (ROOT / "grader").rglob("__init__.py")
                  if p.parent != ROOT / "grader" and "__pycache__" not in p.parts)
    assert here and set(here) <= set(got["packages"]), sorted(set(here) - set(got["packages"]))
    for name in ("grader.core._jax", "grader.lessons.l1_rule_per_primitive.kit",
                 "grader.lessons.l2_where_the_axis_goes.kit"):
        assert name in got["packages"]


def test_what_a_class_installs_holds_no_solution_and_no_exercise(installed):
    """An instructor installs the package into the students' image: their students must never hold
    the sources (the exercises with their solutions and hidden tests), only what the checks need."""
    venv, env, tmp = installed
    site = pathlib.Path(installed_packages(venv, env, tmp)["file"]).parent
    files = [p for p in site.rglob("*") if p.is_file()]
    assert files and not [p for p in files if p.suffix in (".ipynb", ".md") or "exercises" in p.parts]
    answers = set().union(*(solution_blocks(nb) for nb in ROOT.glob("exercises/*/*.ipynb")))
    assert answers
    for path in files:
        if path.suffix == ".py":
            text = "\n".join(line.strip() for line in path.read_text(encoding="utf-8").splitlines()
                             if line.strip())
            assert not [block for block in answers if block in text], path


def test_the_python3_kernel_is_the_venvs(installed):
    venv, env, tmp = installed
    specs = run([venv / "bin" / "jupyter", "kernelspec", "list", "--json"], cwd=tmp, env=env)
    assert specs.returncode == 0, specs.stderr
    python3 = json.loads(specs.stdout)["kernelspecs"]["python3"]
    assert pathlib.Path(python3["resource_dir"]).is_relative_to(venv), python3
    # The kernel nbconvert starts by that name runs the venv's interpreter, not the one running this test.
    probe = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import sys; print(sys.executable)")])
    probe.metadata.kernelspec = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(probe, tmp / "probe.ipynb")
    ran = run([venv / "bin" / "jupyter", "nbconvert", "--to", "notebook", "--execute", "--stdout",
               "--ExecutePreprocessor.kernel_name=python3", tmp / "probe.ipynb"], cwd=tmp, env=env, timeout=120)
    assert ran.returncode == 0, ran.stderr
    printed = nbformat.reads(ran.stdout, as_version=4).cells[0].outputs[0]["text"].strip()
    assert pathlib.Path(printed).parent == venv / "bin", printed


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_notebook_runs_under_nbconvert_with_the_python3_kernel(installed, notebook):
    venv, env, tmp = installed
    work = tmp / "work" / notebook.parent.name
    work.mkdir(parents=True, exist_ok=True)
    copy = shutil.copy(notebook, work / notebook.name)
    out = run([venv / "bin" / "jupyter", "nbconvert", "--to", "notebook", "--execute",
               "--ExecutePreprocessor.kernel_name=python3",
               f"--ExecutePreprocessor.timeout={NOTEBOOK_TIMEOUT_S}",
               "--output", f"{notebook.stem}.executed", copy],
              cwd=work, env=env, timeout=NOTEBOOK_TIMEOUT_S + 60)
    assert out.returncode == 0, f"{notebook.name} failed under nbconvert:\n{out.stderr[-6000:]}"
    executed = nbformat.read(work / f"{notebook.stem}.executed.ipynb", as_version=4)
    assert executed.metadata.kernelspec.name == "python3"
    code = [c for c in executed.cells if c.cell_type == "code"]
    assert code and all(c.execution_count for c in code), "some code cell did not run"
    errors = [o for c in code for o in c.outputs if o.output_type == "error"]
    assert errors == []
