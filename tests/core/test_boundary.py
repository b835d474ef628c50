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
