"""The dependency files agree: requirements/*.in, the pip locks, and the conda environment.yml."""

import re
import tomllib
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent
REQ = ROOT / "requirements"

# conda-forge name -> pip name, where they differ.
CONDA_TO_PIP = {"matplotlib-base": "matplotlib", "playwright-python": "playwright"}
# Conda entries that are not Python packages from the lock.
CONDA_ONLY = {"python", "pip"}


def read_lock(path):
    """{canonical name: Version} from a pip freeze file."""
    pins = {}
    for line in path.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            req = Requirement(line)
            (spec,) = req.specifier
            assert spec.operator == "==", f"{path.name}: {line!r} is not an exact pin"
            pins[canonicalize_name(req.name)] = Version(spec.version)
    return pins


def read_in(path):
    return [Requirement(line.strip()) for line in path.read_text().splitlines()
            if line.strip() and not line.lstrip().startswith("#")]


def conda_pins():
    """{pip canonical name: version string} for the pinned conda dependencies of environment.yml."""
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    assert env["name"] == "inside-vmap"
    assert env["channels"] == ["conda-forge"]
    pins = {}
    for dep in env["dependencies"]:
        if isinstance(dep, dict):  # the pip: subsection
            assert set(dep) == {"pip"}, dep
            continue
        match = re.fullmatch(r"([A-Za-z0-9_.-]+)\s*(?:(==?)\s*(\S+))?", dep)
        assert match, f"environment.yml: cannot read dependency {dep!r}"
        name, op, version = match.groups()
        if name in CONDA_ONLY:
            continue
        assert op == "==", f"environment.yml: {dep!r} should be pinned exactly (name==version)"
        pins[canonicalize_name(CONDA_TO_PIP.get(name, name))] = version
    return pins


@pytest.mark.parametrize("in_file, lock_file", [("main.in", "lock.txt"), ("jax0438.in", "lock-jax0438.txt"),
                                               ("student.in", "lock-student.txt")])
def test_lock_satisfies_in_file(in_file, lock_file):
    lock = read_lock(REQ / lock_file)
    for req in read_in(REQ / in_file):
        name = canonicalize_name(req.name)
        assert name in lock, f"{in_file}: {req.name} is missing from {lock_file} (run `make lock`)"
        assert req.specifier.contains(lock[name], prereleases=True), (
            f"{lock_file} has {req.name}=={lock[name]}, which does not satisfy {in_file}'s {req} (run `make lock`)")


def test_the_students_set_is_part_of_the_whole_at_the_same_versions():
    """`make setup` installs lock-student.txt, and the targets that need more add lock.txt on top:
    that only adds packages when every student pin is the whole set's."""
    student, whole = read_lock(REQ / "lock-student.txt"), read_lock(REQ / "lock.txt")
    assert {name: v for name, v in student.items() if whole.get(name) != v} == {}
    assert len(student) < len(whole)
    for tool in ("dask", "playwright", "psycopg2-binary", "pytest", "nbval"):   # the rest's, not a student's
        assert tool not in student and tool in whole, tool


def test_the_package_extras_name_what_each_user_needs():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    base = {canonicalize_name(Requirement(r).name) for r in meta["dependencies"]}
    extras = {k: {canonicalize_name(Requirement(r).name) for r in v}
              for k, v in meta["optional-dependencies"].items()}
    assert {"jax", "matplotlib", "ipykernel"} <= base and not base & {"nbgrader", "dask", "pytest"}
    assert {"jupyterlab", "nbgrader"} <= extras["lab"]
    assert {"nbgrader", "dask", "psycopg2-binary"} <= extras["instructor"]
    assert {"pytest", "nbval", "hypothesis", "playwright", "ruff"} <= extras["test"]


def test_environment_yml_pins_match_lock():
    lock = read_lock(REQ / "lock.txt")
    pins = conda_pins()
    assert pins, "environment.yml pins nothing"
    for name, version in pins.items():
        assert name in lock, f"environment.yml pins {name}, which requirements/lock.txt does not have"
        assert Version(version) == lock[name], (
            f"environment.yml pins {name}=={version} but requirements/lock.txt has {lock[name]}")


def test_environment_yml_has_every_top_level_package():
    pins = conda_pins()
    missing = [str(req) for req in read_in(REQ / "main.in") if canonicalize_name(req.name) not in pins]
    assert not missing, f"requirements/main.in packages missing from environment.yml: {missing}"


def test_environment_yml_python_is_supported():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    # JAX 0.11 and later need Python 3.12 or newer (tools/check-python says the same).
    assert any(re.fullmatch(r"python=3\.1[2-9]", dep) for dep in env["dependencies"] if isinstance(dep, str))
