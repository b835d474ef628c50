"""One seed per run and a cache the students' children only read: fast, fair and unpoisonable."""
import hashlib
import pathlib

import nbformat
import pytest

from grader.judge import runner, sandbox, warm
from grader.lessons import exercises

ROOT = pathlib.Path(__file__).resolve().parents[2]
SOURCES = {runner.case_key(d.name, d.name): str(d / f"{d.name}.ipynb")
           for d in sorted((ROOT / "exercises").iterdir()) if d.is_dir()}
FIRST = next(iter(SOURCES))
FAST = sandbox.Limits(wall_s=60, cpu_s=120, memory_mb=4096)
SEED = 20261130

POISON = """\
import os
_cache = os.environ.get("JAX_COMPILATION_CACHE_DIR", "")
for _name in (os.listdir(_cache) if _cache else []):
    try:
        with open(os.path.join(_cache, _name), "wb") as _fh:
            _fh.write(b"poison")
    except OSError:
        pass
try:
    open(os.path.join(_cache, "planted"), "w").write("x")
except OSError:
    pass
"""

boxed = pytest.mark.skipif(not sandbox.available(), reason="needs bubblewrap")


def snapshot(folder) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
            for p in pathlib.Path(folder).rglob("*") if p.is_file()}


def test_a_seed_fixes_the_cases_per_notebook_and_no_seed_draws_fresh_ones():
    known = exercises()
    cases = lambda rng: {g: repr(ex.cases(rng, True)) for g, ex in known.items()}
    assert cases(runner.cases_rng(SEED, "a/nb")) == cases(runner.cases_rng(SEED, "a/nb"))
    assert cases(runner.cases_rng(SEED, "a/nb")) != cases(runner.cases_rng(SEED, "b/nb"))
    assert cases(runner.cases_rng(-1, "a/nb")) != cases(runner.cases_rng(-1, "a/nb"))


@pytest.fixture(scope="module")
def warmed(tmp_path_factory):
    """A cache filled from lesson 1's solutions, and what the warm-up reported."""
    cache = str(tmp_path_factory.mktemp("cache"))
    found = warm.warm({FIRST: SOURCES[FIRST]}, SEED, cache, FAST, sandbox.available())
    return cache, found


def test_warming_judges_the_solution_and_fills_the_cache(warmed):
    cache, found = warmed
    assert found == [warm.Warmed(FIRST, ())]
    assert snapshot(cache)


def test_an_unreadable_source_is_reported_not_raised(tmp_path):
    bad = tmp_path / "bad.ipynb"
    bad.write_text("{ not json")
    [w] = warm.warm({"a/bad": str(bad)}, SEED, str(tmp_path), FAST, False)
    assert w.key == "a/bad" and w.error and not w.failed


@boxed
def test_a_student_child_reads_the_cache_but_cannot_change_it(warmed):
    cache, _ = warmed
    before = snapshot(cache)
    nb = nbformat.read(SOURCES[FIRST], as_version=4)
    first = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution"))
    first.source = POISON + first.source
    verdicts = runner.judge(nb, FAST, True, runner.cases_rng(SEED, FIRST),
                            sandbox.CompileCache(cache))
    assert all(r.passed for r in verdicts.values())        # the poisoner's answers still count
    assert snapshot(cache) == before                        # and nothing was written


def test_a_reader_is_told_never_to_write():
    env = sandbox.CompileCache("/somewhere").env()
    assert float(env["JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"]) >= 1e9
    writer = sandbox.CompileCache("/somewhere", writable=True)
    assert writer.env()["JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"] == "0"
    assert writer.bwrap_args()[0] == "--bind" and sandbox.CompileCache("/x").bwrap_args()[0] \
        == "--ro-bind"


def test_verdicts_with_the_cache_equal_verdicts_without(warmed):
    """Same seed, same feedback, failures included (a rule that moves every batch to the front)."""
    cache, _ = warmed
    nb = nbformat.read(SOURCES[FIRST], as_version=4)
    rule = next(c for c in nb.cells if "def moments_rule" in c.source)
    rule.source = ("def moments_rule(prim, vals, dims, *, axis):\n"
                   "    return prim.bind(jnp.moveaxis(vals[0], dims[0], 0), axis=axis + 1), [0, 0]\n")
    use = sandbox.available()
    with_cache = runner.judge(nb, FAST, use, runner.cases_rng(SEED, FIRST),
                              sandbox.CompileCache(cache))
    without = runner.judge(nb, FAST, use, runner.cases_rng(SEED, FIRST))
    assert not with_cache["moments_rule"].passed
    assert {g: r.to_dict() for g, r in with_cache.items()} == \
        {g: r.to_dict() for g, r in without.items()}
