"""How the lessons are found (grader/lessons/__init__.py): every module-level Exercise is
discovered by scanning, a lesson that fails to import or repeats a grade id stops grading loudly,
a lesson package's attributes are looked up by each module's ``__all__``, and in the judge's
kit-only copy of grader/ the checks are stubs."""
import os
import pathlib
import shutil
import subprocess
import sys
import textwrap

import pytest

from grader import lessons
from grader.exercise import Exercise
from grader.judge import kit_tree
from grader.lessons import l1_rule_per_primitive as L1
from grader.lessons import l2_where_the_axis_goes as L2

GRADER = pathlib.Path(lessons.__file__).resolve().parents[1]


def declared_in_files() -> dict:
    """Every module-level Exercise of every lesson module, found by walking the files."""
    import importlib
    found = {}
    for path in sorted((GRADER / "lessons").glob("l*_*/*.py")):
        if path.stem == "__init__":
            continue
        module = importlib.import_module(f"grader.lessons.{path.parent.name}.{path.stem}")
        for value in vars(module).values():
            if isinstance(value, Exercise):
                found.setdefault(value.grade_id, set()).add(id(value))
    return found


def test_exercises_finds_every_declaration():
    declared = declared_in_files()
    found = lessons.exercises()
    assert set(found) == set(declared)
    assert all(declared[gid] == {id(ex)} for gid, ex in found.items())    # one object per id


def test_each_lesson_declares_its_exercises_with_their_needs():
    found = {gid: ex.needs for gid, ex in lessons.exercises().items()}
    assert {gid: n for gid, n in found.items() if gid.startswith("l2_")} == {
        "l2_where_it_lands": ("where_it_lands",), "l2_widened": ("widened",),
        "l2_cheap_where": ("cheap_where",)}
    assert {gid: n for gid, n in found.items() if gid.startswith("l4_")} == {
        "l4_per_example_grads": ("per_example_grads",), "l4_clipped_scale": ("clipped_scale",),
        "l4_floored_cummax": ("floored_cummax",), "l4_vmap_jacobian": ("vmap_jacobian",)}
    assert {gid: n for gid, n in found.items() if not gid[:1] == "l" or not gid[1:2].isdigit()} == {
        "spy": ("spy",), "moments_rule": ("moments_rule",), "stack2_rule": ("stack2_rule",),
        "prefix_rule": ("prefix_rule",)}


def test_packages_are_the_lesson_folders_in_lesson_order():
    assert lessons.packages() == sorted(
        (p.name for p in (GRADER / "lessons").iterdir()
         if p.is_dir() and lessons.PACKAGE.match(p.name)),
        key=lambda n: int(n[1:].split("_")[0]))
    assert lessons.packages()[:2] == ["l1_rule_per_primitive", "l2_where_the_axis_goes"]


# ---- lookup by __all__ ---------------------------------------------------------------------------

def test_lookup_finds_a_check_by_name():
    from grader.lessons.l1_rule_per_primitive import spy
    from grader.lessons.l2_where_the_axis_goes import live
    assert lessons.lookup(L1.__name__, "check_spy") is spy.check_spy
    assert L1.check_spy is spy.check_spy and L2.mv_table is live.mv_table


@pytest.mark.parametrize("package", [L1, L2], ids=lambda p: p.__name__.rpartition(".")[2])
def test_every_exercise_check_is_reachable_by_its_name(package):
    mine = [ex for ex in lessons.exercises().values()
            if ex.observe.__module__.startswith(package.__name__ + ".")]
    assert mine
    for ex in mine:
        assert getattr(package, ex.name).__name__ == ex.name


@pytest.mark.parametrize("name", ["check_nothing", "selfcheck_nothing", "cases", "_hint", "SPY_"])
def test_lookup_raises_attribute_error_for_unknown_names(name):
    with pytest.raises(AttributeError, match=name):
        lessons.lookup(L1.__name__, name)
    with pytest.raises(AttributeError):
        getattr(L1, name)
    assert not hasattr(L1, name)


def test_no_two_modules_of_a_lesson_export_one_name():
    for package in lessons.packages():
        names = [n for m in lessons._trusted_modules(package) for n in getattr(m, "__all__", ())]
        assert len(names) == len(set(names)), package


# ---- a lesson that is broken stops grading, loudly -----------------------------------------------

def grader_copy(tmp_path, extra: dict) -> pathlib.Path:
    """A copy of grader/ with throw-away files added under grader/lessons/."""
    shutil.copytree(GRADER, tmp_path / "grader", ignore=shutil.ignore_patterns("__pycache__"))
    for rel, text in extra.items():
        path = tmp_path / "grader" / "lessons" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return tmp_path


def run_python(root, code):
    path = os.pathsep.join(p for p in (str(root), os.environ.get("PYTHONPATH", "")) if p)
    env = dict(os.environ, PYTHONPATH=path, JAX_PLATFORMS="cpu")
    return subprocess.run([sys.executable, "-c", code], cwd=root, env=env, capture_output=True,
                          text=True, timeout=120)


SCAN = "from grader import lessons; print(sorted(lessons.exercises()))"


def test_a_lesson_that_fails_to_import_makes_exercises_raise(tmp_path):
    root = grader_copy(tmp_path, {
        "l3_broken/__init__.py": '"""A lesson whose exercise module cannot import."""\n',
        "l3_broken/kit/__init__.py": "",
        "l3_broken/exercise_one.py": "import no_such_module_of_the_course\n",
    })
    out = run_python(root, SCAN)
    assert out.returncode != 0, out.stdout
    assert "ModuleNotFoundError: No module named 'no_such_module_of_the_course'" in out.stderr
    # The same copy without the broken lesson scans fine: it is the import that stopped it.
    shutil.rmtree(root / "grader" / "lessons" / "l3_broken")
    out = run_python(root, SCAN)
    assert out.returncode == 0, out.stderr
    assert "'spy'" in out.stdout and "'l2_widened'" in out.stdout


def test_a_grade_id_declared_twice_makes_exercises_raise(tmp_path):
    root = grader_copy(tmp_path, {
        "l3_copycat/__init__.py": '"""A lesson repeating lesson 1\'s grade id."""\n',
        "l3_copycat/kit/__init__.py": "",
        "l3_copycat/spy_again.py": """\
            from ...exercise import Exercise
            SPY = Exercise("spy", 1, ("spy",), lambda spy, case: spy(case),
                           lambda rng, hidden: [1], lambda case: case, lambda c, e, g: None)
            """,
    })
    out = run_python(root, SCAN)
    assert out.returncode != 0, out.stdout
    assert "ValueError: grade id 'spy' is declared twice (again in grader.lessons." \
           "l3_copycat.spy_again)" in out.stderr


# ---- the judge's kit-only copy ---------------------------------------------------------------------

def test_in_a_kit_only_tree_checks_are_stubs(tmp_path):
    root = kit_tree.build(str(tmp_path))
    out = run_python(root, textwrap.dedent("""
        import importlib.util, sys
        # As in the sandbox, which mounts over the course's editable install: only the copy imports.
        sys.meta_path[:] = [f for f in sys.meta_path
                            if not getattr(f, "__module__", "").startswith("__editable__")]
        from grader.feedback import show
        from grader.lessons import l1_rule_per_primitive as L1, l2_where_the_axis_goes as L2
        for res in (L1.check_spy(None), L1.selfcheck_route("rule"), L2.check_widened(None,
                    hidden=True)):
            assert not res.graded and res.cases == 0 and "not run while grading" in res.note, res
            show(res)                                  # a stub never raises
        assert L1.check_spy.__name__ == "check_spy"
        for name in ("mv_table", "cases", "SPY"):
            try:
                getattr(L2 if name == "mv_table" else L1, name)
            except AttributeError as err:
                assert "not available while grading" in str(err)
            else:
                raise AssertionError(name)
        assert L1.make_primitives().moments_p.name == "moments"    # the kit itself is there
        assert importlib.util.find_spec("grader.exercise") is None  # the answer key is not
        assert importlib.util.find_spec("grader.lessons.l1_rule_per_primitive.spy") is None
        print("stubs ok")
        """))
    assert out.returncode == 0, out.stderr
    assert "stubs ok" in out.stdout
