"""The release matrix's scaffolding: which releases `make test-matrix` runs, its caps file, the CUDA extra of
`make test-gpu`, and the scripts themselves (running them needs the package index: `make test-matrix`)."""
import importlib.metadata
import re
import subprocess
from pathlib import Path

import pytest

from grader.core._jax.history import MEASURED

ROOT = Path(__file__).resolve().parent.parent


def minor(release: str) -> str:
    return ".".join(release.split(".")[:2])


def matrix_releases() -> list[str]:
    text = (ROOT / "tools/test-matrix").read_text()
    return re.search(r"^RELEASES=\(([^)]*)\)", text, re.M)[1].split()


def test_the_matrix_runs_one_measured_release_of_every_minor_line():
    releases = matrix_releases()
    assert all(r in MEASURED for r in releases), releases
    assert [minor(r) for r in releases] == list(dict.fromkeys(minor(r) for r in MEASURED))
    assert releases[0] == MEASURED[0] and releases[-1] == MEASURED[-1]   # the oldest supported, the newest


def test_every_cap_names_a_measured_release():
    lines = [line.split("#")[0].split() for line in (ROOT / "requirements/matrix.txt").read_text().splitlines()]
    for words in filter(None, lines):
        assert words[0] in MEASURED and len(words) > 1, words


def test_make_test_gpu_asks_for_a_cuda_extra_the_locked_jax_declares():
    out = subprocess.run(["make", "--no-print-directory", "-n", "-C", str(ROOT), "test-gpu"],
                         capture_output=True, text=True, stdin=subprocess.DEVNULL)
    assert out.returncode == 0, out.stderr
    extra = re.search(r"jax\[(\w+)\]==", out.stdout)[1]
    locked = re.search(r"^jax==(\S+)$", (ROOT / "requirements/lock.txt").read_text(), re.M)[1]
    if importlib.metadata.version("jax") != locked:
        pytest.skip(f"the installed jax is not the main lock's {locked}")
    assert extra in importlib.metadata.metadata("jax").get_all("Provides-Extra")


@pytest.mark.parametrize("script", ["tools/test-matrix", "tools/matrix-venv"])
def test_the_matrix_scripts_are_valid_bash(script):
    assert subprocess.run(["bash", "-n", ROOT / script]).returncode == 0


def test_measure_history_compiles():
    compile((ROOT / "tools/measure-history").read_text(), "measure-history", "exec")


def test_the_vmap_contract_runs_on_every_release_and_on_the_old_venv():
    """tests/properties (vmap against the loop over examples) is part of each matrix run and of `make test`'s
    JAX 0.4.38 step, not only of the main run: the property is about the JAX each of them runs."""
    paths = re.search(r"local paths=\(([^)]*)\)", (ROOT / "tools/test-matrix").read_text())[1].split()
    assert "tests/properties" in paths and "tests/core" in paths
    out = subprocess.run(["make", "--no-print-directory", "-n", "-C", str(ROOT), "test"],
                         capture_output=True, text=True, stdin=subprocess.DEVNULL)
    old = [line for line in out.stdout.splitlines() if ".venv-jax0438/bin/python -m pytest" in line]
    assert any("tests/properties" in line for line in old), old
