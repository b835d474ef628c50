"""What a box-side file imports of grader/, read from its text (grader/judge/kit_imports.py): every
spelling of an import, the names a lazily loading package hands out, and the marker that keeps an
import that runs only on the trusted side out of the box."""
import textwrap

import pytest

from grader.judge import kit_imports


@pytest.fixture
def package(tmp_path):
    """A throw-away grader/: a lazy core, a wire module, a feedback module and one kit file."""
    files = {
        "__init__.py": "", "wire.py": "", "feedback.py": "", "exercise.py": "",
        "core/__init__.py": '_NAMES = {"summarize": "jaxprs", "view": "tracers"}\n',
        "core/jaxprs.py": "", "core/tracers.py": "", "core/tables.py": "",
        "lessons/__init__.py": "", "lessons/l9_toy/__init__.py": "",
        "lessons/l9_toy/kit/__init__.py": "",
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)

    def with_kit(source: str) -> set:
        (tmp_path / "lessons/l9_toy/kit/observe.py").write_text(textwrap.dedent(source))
        return kit_imports.imported(str(tmp_path), "lessons/l9_toy/kit/observe.py")
    return with_kit


def test_relative_absolute_and_function_level_imports_are_read(package):
    assert package("""
        import numpy
        from ....wire import pack
        import grader.core.tables
        def later():
            from .... import feedback
        """) == {"", "wire", "core", "core.tables", "feedback"}


def test_a_lazy_package_s_names_bring_their_modules(package):
    assert package("from ....core import summarize\n") == {"", "core", "core.jaxprs"}
    assert package("from .... import core\ndef f(x):\n    return core.view(x)\n") == \
        {"", "core", "core.tracers"}


def test_an_import_marked_trusted_side_only_is_not_followed(package):
    assert package("def key():\n    from ....exercise import Exercise  # trusted side only\n") \
        == set()
    assert package("def key():\n    from ....exercise import Exercise\n") == {"", "exercise"}


def test_module_file_finds_modules_and_packages(tmp_path, package):
    package("")
    assert kit_imports.module_file(str(tmp_path), "core") == "core/__init__.py"
    assert kit_imports.module_file(str(tmp_path), "core.jaxprs") == "core/jaxprs.py"
    assert kit_imports.module_file(str(tmp_path), "core.nothing") is None
