"""Only grader/core/_jax/ may import JAX's private modules."""
import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]


def private_imports(path):
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("jax._src"):
            yield node.module
        elif isinstance(node, ast.Import):
            yield from (a.name for a in node.names if a.name.startswith("jax._src"))


def test_only_the_core_imports_jax_private_modules():
    offenders = [p.relative_to(ROOT).as_posix() for p in (ROOT / "grader").rglob("*.py")
                 if any(private_imports(p)) and "_jax" not in p.relative_to(ROOT).parts]
    assert offenders == []


def test_the_core_really_does_import_them():
    assert any(private_imports(ROOT / "grader" / "core" / "_jax" / "__init__.py"))


def reaches_through(path):
    """``_jax.batching.X`` / ``_jax.B.X``: JAX's internals used past the core's adapters."""
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute) \
                and node.value.attr in ("batching", "B") \
                and isinstance(node.value.value, ast.Name) and node.value.value.id == "_jax":
            yield f"_jax.{node.value.attr}.{node.attr}"


def test_nothing_outside_the_core_reaches_through_the_adapters():
    offenders = {p.relative_to(ROOT).as_posix(): list(reaches_through(p))
                 for p in (ROOT / "grader").rglob("*.py") if "core" not in p.relative_to(ROOT).parts}
    assert {p: r for p, r in offenders.items() if r} == {}


def test_the_reach_through_detector_sees_one():
    import tempfile
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as fh:
        fh.write("from grader.core import _jax\nx = _jax.batching.matchaxis\n")
    assert list(reaches_through(pathlib.Path(fh.name))) == ["_jax.batching.matchaxis"]
