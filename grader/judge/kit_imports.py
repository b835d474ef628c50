"""What the box's code imports of the ``grader`` package, read from the files (`ast`), never run.

The kit tree (`kit_tree`) is the closure of its roots (the lessons' faces and kits, the box's own
code) under these imports, so a kit that starts importing another core module takes that module
into the box with it, and one that imports the answer key stops the tree from being built,
naming both files, instead of failing in the box for every student.

Read as imports: ``import grader.x``, ``from grader.x import y`` and their relative forms, at
module level or inside a function (it runs in the box when called), and, for a package that
loads its names lazily (``grader.core``: a ``_NAMES`` table of name -> module), the names taken
from it, as ``from ..core import summarize`` or ``core.summarize``. An import whose line says
``# trusted side only`` is not followed: it runs only where the whole course is installed.
"""
from __future__ import annotations

import ast
import os

TRUSTED_ONLY = "# trusted side only"


class KitImportError(Exception):
    """A file on the box's side imports a module that is not (or that does not exist)."""


def module_file(package_dir: str, dotted: str) -> str | None:
    """The file of ``dotted`` (relative to the grader package, "" for itself), or None."""
    base = os.path.join(package_dir, *dotted.split(".")) if dotted else package_dir
    for candidate in (os.path.join(base, "__init__.py"), base + ".py"):
        if os.path.isfile(candidate):
            return os.path.relpath(candidate, package_dir).replace(os.sep, "/")
    return None


def imported(package_dir: str, rel: str) -> set[str]:
    """The grader modules (dotted, relative to the package) that the file ``rel`` imports."""
    path = os.path.join(package_dir, rel)
    with open(path, encoding="utf-8") as fh:
        source = fh.read()
    tree, lines = ast.parse(source, filename=path), source.splitlines()
    here = _package_of(rel)
    found, packages = set(), {}
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Import, ast.ImportFrom)) or \
                TRUSTED_ONLY in lines[node.lineno - 1]:
            continue
        for dotted, bound in _targets(node, here):
            found |= _with_parents(dotted)
            for alias, name in bound:
                sub = _join(dotted, name)
                if module_file(package_dir, sub) is not None:
                    found |= _with_parents(sub)
                    packages[alias] = sub
                else:
                    found |= _lazy(package_dir, dotted, name)
    for node in ast.walk(tree):       # ``core.summarize`` after ``from .. import core``
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and \
                node.value.id in packages:
            found |= _lazy(package_dir, packages[node.value.id], node.attr)
    return found


def _targets(node, here: list[str]):
    """``(module, [(bound name, imported name), ...])`` of one import inside the grader package."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            parts = alias.name.split(".")
            if parts[0] == "grader":
                yield ".".join(parts[1:]), []
        return
    if node.level:
        if node.level - 1 > len(here):
            return
        base = here[:len(here) - (node.level - 1)]
        parts = base + (node.module.split(".") if node.module else [])
    elif node.module and node.module.split(".")[0] == "grader":
        parts = node.module.split(".")[1:]
    else:
        return
    yield ".".join(parts), [(a.asname or a.name, a.name) for a in node.names if a.name != "*"]


def _lazy(package_dir: str, dotted: str, name: str) -> set[str]:
    """The module a lazily loading package takes ``name`` from (none when it is not lazy)."""
    table = _lazy_names(package_dir, dotted)
    return _with_parents(_join(dotted, table[name])) if name in table else set()


def _lazy_names(package_dir: str, dotted: str) -> dict:
    rel = module_file(package_dir, dotted)
    if rel is None or not rel.endswith("__init__.py"):
        return {}
    with open(os.path.join(package_dir, rel), encoding="utf-8") as fh:
        tree = ast.parse(fh.read())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "_NAMES"
                                                for t in node.targets):
            return ast.literal_eval(node.value)
    return {}


def _package_of(rel: str) -> list[str]:
    """The package a file belongs to, as parts below grader (``lessons/l1/kit/x.py`` -> 3)."""
    return rel.split("/")[:-1]


def _join(dotted: str, name: str) -> str:
    return f"{dotted}.{name}" if dotted else name


def _with_parents(dotted: str) -> set[str]:
    """A module and every package above it: importing it runs their ``__init__`` too."""
    parts = dotted.split(".") if dotted else []
    return {".".join(parts[:i]) for i in range(len(parts) + 1)}
