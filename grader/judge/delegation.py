"""Read an exercise's answer cells before anything runs, for answers that hand the work on.

An answer that calls JAX's own implementation of what the exercise asks, or the course's helpers
that compute it, has not solved the exercise; one that hides what it calls cannot be read. Both go
to an instructor (needs manual grading, with the reason), never to full marks or a silent zero.
This reads the code as text (Python's ``ast``) in the trusted process; the judge's child adds
what it sees happen (`grader.judge.child`). Comments, docstrings and messages that only mention a
name are prose, not code, and never count.
"""
from __future__ import annotations

import ast
import re

from ..exercise import Delegation

# Calls and attributes that reach objects by computed names or behind the code's back.
HIDING_CALLS = frozenset({"exec", "eval", "compile", "__import__", "globals", "locals", "vars",
                          "breakpoint"})
DYNAMIC_ATTRS = frozenset({"getattr", "setattr", "delattr"})
HIDING_ATTRS = frozenset({
    "__dict__", "__globals__", "__code__", "__closure__", "__builtins__", "__subclasses__",
    "__mro__", "__bases__", "__getattribute__", "__wrapped__", "__loader__", "__spec__",
    "f_globals", "f_locals", "f_back", "gi_frame", "_getframe", "modules", "meta_path"})
HIDING_MODULES = frozenset({"importlib", "ctypes", "gc", "inspect", "marshal", "pickle",
                            "builtins", "runpy", "code", "codeop", "dill", "cloudpickle"})
COURSE_PACKAGE = "grader"


def reasons(sources: list[str], rules: Delegation) -> list[str]:
    """Why these answer cells need a human grader; empty when they read as honest code."""
    found: list[str] = []
    for source in sources:
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue                      # it cannot run either; the judge reports that
        for reason in _Reader(rules).read(tree):
            if reason not in found:
                found.append(reason)
    return found


class _Reader(ast.NodeVisitor):
    def __init__(self, rules: Delegation):
        self.rules, self.found = rules, []
        # A string that *is* the name (or a dotted path ending in it) reaches the object, as in
        # getattr(module, "name"); a sentence that mentions it does not.
        self.words = [re.compile(rf"^\s*(?:[\w.]+\.)?{re.escape(n)}\s*$") for n in rules.names]

    def read(self, tree) -> list[str]:
        self._docstrings = {id(n.body[0].value) for n in ast.walk(tree) if _is_docstring_owner(n)}
        self.visit(tree)
        return self.found

    def _say(self, reason: str) -> None:
        if reason not in self.found:
            self.found.append(reason)

    def _check_name(self, name: str, how: str) -> None:
        if name in self.rules.names:
            self._say(f"it {how} `{name}`, the implementation this exercise asks you to write")

    def _check_module(self, module: str) -> None:
        top = module.split(".")[0]
        if top == COURSE_PACKAGE:
            self._say(f"it imports the course's own package (`{module}`): answers use only what "
                      f"the exercise's set-up cell provides")
        elif top in HIDING_MODULES:
            self._say(f"it imports `{module}`, which can call code without naming it")

    def visit_Import(self, node):
        for alias in node.names:
            self._check_module(alias.name)
            for part in alias.name.split("."):
                self._check_name(part, "imports")
        self.generic_visit(node)

    def visit_ImportFrom(self, node):
        self._check_module(node.module or "")
        for alias in node.names:
            self._check_name(alias.name, "imports")
        self.generic_visit(node)

    def visit_Name(self, node):
        self._check_name(node.id, "uses")
        if node.id in HIDING_CALLS or node.id == "__builtins__":
            self._say(f"it uses `{node.id}`, which runs or reaches code by a computed name")
        self.generic_visit(node)

    def visit_Attribute(self, node):
        self._check_name(node.attr, "uses")
        if node.attr in HIDING_ATTRS:
            self._say(f"it reads `.{node.attr}`, which reaches objects behind the code's back")
        self.generic_visit(node)

    def visit_Call(self, node):
        func = node.func
        if isinstance(func, ast.Name) and func.id in DYNAMIC_ATTRS and not self.rules.dynamic:
            name = node.args[1] if len(node.args) > 1 else None
            if not (isinstance(name, ast.Constant) and isinstance(name.value, str)):
                self._say(f"it calls `{func.id}` with a computed attribute name")
        self.generic_visit(node)

    def visit_Constant(self, node):
        if isinstance(node.value, str) and id(node) not in self._docstrings:
            for word, name in zip(self.words, self.rules.names):
                if word.match(node.value):
                    self._say(f"it names `{name}` in a string, the implementation this exercise "
                              f"asks you to write")
        self.generic_visit(node)


def _is_docstring_owner(node) -> bool:
    body = getattr(node, "body", None)
    return (isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            and bool(body) and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str))
