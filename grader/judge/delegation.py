"""Read an exercise's answer cells before anything runs, for answers that hand the work on.

An answer that calls JAX's own implementation of what the exercise asks, or the course's helpers
that compute it, has not solved the exercise; one that hides what it calls, or changes code it
does not own (the checks' observers, JAX), cannot be read. All go to an instructor (needs manual
grading, with the reason), never to full marks or a silent zero. This reads the code as text
(Python's ``ast``; whose each name is, by Python's scoping rules: `grader.judge.scopes`) in the
trusted process; the judge's child adds what it sees happen (`grader.judge.box.child`).
Comments, docstrings and messages that only mention a name are prose, not code, and never count.
"""
from __future__ import annotations

import ast
import re

from ..exercise import Delegation
from . import scopes
from .vocabulary import (
    COURSE_PACKAGE,
    DYNAMIC_ATTRS,
    HIDING_ATTRS,
    HIDING_CALLS,
    HIDING_MODULES,
    MUTATORS,
    PARTIAL_ATTRS,
    READING_MODULES,
    TOO_DEEP,
    TRACING_ATTRS,
)


def reasons(sources: list[str], rules: Delegation, reached=(), answers=()) -> list[str]:
    """Why these answer cells need a human grader; empty when they read as honest code.
    ``reached``: ``(cell name, source, statement indices)`` of other answer cells whose
    statements this exercise's code can reach (`grader.judge.reach`): those statements are read
    against this exercise's rules too, and a reason found there names the cell. ``answers``: the
    names the notebook's exercises ask the student to define (their ``needs``): calling one's own
    answer (``print(cond_plan(case))``) is a self-test, not a delegation, even where a rule
    forbids the course's helper of that name."""
    found: dict[str, None] = {}        # in the order found, each once (a dict: not a list's scan)
    for source in sources:
        found.update(dict.fromkeys(_read(source, rules, answers=answers)))
    for cell, source, indices in reached:
        found.update(dict.fromkeys(f"{reason} (in {cell}, whose code this answer uses)"
                                   for reason in _read(source, rules, indices, answers)))
    return list(found)


def _read(source: str, rules: Delegation, indices=None, answers=()) -> list[str]:
    """One cell read (only its top-level statements ``indices``, when given)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):   # ValueError: a null byte, on Python 3.11
        return []                       # it cannot run either; the judge reports that
    except (RecursionError, MemoryError):   # the parser's own stack: too deep to parse
        return [TOO_DEEP]
    try:
        owned = scopes.owned_names(tree)    # what the cell owns, from the whole cell
        if indices is not None:
            tree = ast.Module(body=[tree.body[i] for i in indices], type_ignores=[])
        return _Reader(rules, owned, set(answers)).read(tree)
    except (RecursionError, MemoryError):   # an AST deeper than Python's recursion limit
        return [TOO_DEEP]


class _Reader(ast.NodeVisitor):
    def __init__(self, rules: Delegation, owned: set[str], mine: set[str] = frozenset()):
        # ``mine``: the exercises' answer names, the student's own wherever used; a function's
        # locals (`scopes.local_names`) are the student's inside that function. Using one is not
        # using JAX's or the course's object.
        self.rules, self.owned, self.mine, self.found = rules, owned, mine, {}
        # A string that *is* the name (or a dotted path ending in it) reaches the object, as in
        # getattr(module, "name"); a sentence that mentions it does not.
        self.words = [re.compile(rf"^\s*(?:[\w.:]+[.:])?{re.escape(n)}\s*$")
                      for n in rules.names]
        self.allowed = READING_MODULES if rules.dynamic else frozenset()

    def read(self, tree) -> list[str]:
        self._plain = set()          # getattr nodes that are plain calls with a literal name
        self._scopes = []            # the locals of each function being read, innermost last
        self._settings = _jax_config_names(tree)
        self._docstrings = {id(n.body[0].value) for n in ast.walk(tree) if _is_docstring_owner(n)}
        self.visit(tree)
        return list(self.found)

    def _say(self, reason: str) -> None:
        self.found.setdefault(reason)          # once each, in order (a dict: no list scan)

    def generic_visit(self, node):
        if not isinstance(node, scopes.SCOPES):
            return super().generic_visit(node)
        outside, inside = scopes.split(node)
        for child in outside:          # evaluated where the scope is written, not in it
            self.visit(child)
        self._scopes.append(scopes.local_names(node))
        try:
            for child in inside:
                self.visit(child)
        finally:
            self._scopes.pop()

    def _is_mine(self, name: str) -> bool:
        return name in self.mine or any(name in scope for scope in self._scopes)

    def _check_name(self, name: str, how: str) -> None:
        if name in self.rules.names:
            self._say(f"it {how} `{name}`, the implementation this exercise asks you to write")

    def _check_module(self, module: str) -> None:
        top = module.split(".")[0]
        if top == COURSE_PACKAGE:
            self._say(f"it imports the course's own package (`{module}`): answers use only what "
                      f"the exercise's set-up cell provides")
        elif set(module.split(".")) & HIDING_MODULES:
            self._say(f"it imports `{module}`, which can call code without naming it, or "
                      f"change code it does not own")

    def _not_owned(self, expr) -> bool:
        """Someone else's object: rooted in an imported or set-up name, or a call's result."""
        root = scopes.root(expr)
        return root is None or root not in self.owned

    def _check_target(self, target) -> None:
        """``x.attr = ...`` or ``x[key] = ...`` (or del, or +=) on an object the cell does not
        own (the set-up's modules, an import, whatever a call returned): a patch. The cell's
        own dicts and lists are its to fill."""
        if isinstance(target, (ast.Attribute, ast.Subscript)) and self._not_owned(target):
            self._say(f"it changes `{_short(target)}`, code it does not own (the checks, the "
                      f"course or JAX)")
        elif isinstance(target, (ast.Tuple, ast.List)):
            for item in target.elts:
                self._check_target(item)
        elif isinstance(target, ast.Starred):
            self._check_target(target.value)

    def visit_Assign(self, node):
        for target in node.targets:
            self._check_target(target)
        self.generic_visit(node)

    def visit_AugAssign(self, node):
        self._check_target(node.target)
        self.generic_visit(node)

    visit_AnnAssign = visit_AugAssign

    def visit_Delete(self, node):
        for target in node.targets:
            self._check_target(target)
        self.generic_visit(node)

    def _check_path(self, module: str, how: str) -> None:
        """A dotted module path names each of its parts (``jax._src.interpreters.batching``)."""
        for part in module.split("."):
            self._check_name(part, how)

    def visit_Import(self, node):
        for alias in node.names:
            self._check_module(alias.name)
            self._check_path(alias.name, "imports")
        self.generic_visit(node)

    def visit_ImportFrom(self, node):
        self._check_module(node.module or "")
        self._check_path(node.module or "", "imports from")
        for alias in node.names:
            self._check_name(alias.name, "imports")
            if alias.name == "*":
                # Every public name of the module, none written (red team, round 13: `from sys
                # import *`, then `modules[...]` and `monitoring` as bare names): unreadable.
                self._say(f"it imports every name of `{node.module or '.'}` (`import *`), "
                          f"names the reading cannot see")
            elif alias.name in HIDING_CALLS:
                self._say(f"it imports `{alias.name}`, which reaches code by a computed name")
            elif alias.name in HIDING_MODULES:    # from unittest import mock
                self._check_module(f"{node.module or ''}.{alias.name}")
            elif alias.name in HIDING_ATTRS | TRACING_ATTRS:
                self._say(f"it imports `{alias.name}`, which reaches objects behind the code's "
                          f"back")
        self.generic_visit(node)

    def visit_Name(self, node):
        if not self._is_mine(node.id):
            self._check_name(node.id, "uses")
        if (node.id in HIDING_CALLS or node.id == "__builtins__") and node.id not in self.allowed:
            self._say(f"it uses `{node.id}`, which runs or reaches code by a computed name")
        elif (node.id in DYNAMIC_ATTRS and isinstance(node.ctx, ast.Load)
              and id(node) not in self._plain and not self.rules.dynamic):
            # Aliased, passed on or a default: whoever calls it may pass any name.
            self._say(f"it uses `{node.id}` other than as a call with a written-out name, "
                      f"which reaches attributes by computed names")
        self.generic_visit(node)

    def visit_Attribute(self, node):
        self._check_attr(node.attr, node.value)
        self.generic_visit(node)

    def visit_MatchClass(self, node):
        # ``case object(batching=b)`` reads ``subject.batching`` into ``b``: a keyword pattern is
        # an attribute read written as a bare string (``kwd_attrs``), so it is read as one.
        for attr in node.kwd_attrs:
            self._check_attr(attr, None)
        self.generic_visit(node)

    def _check_attr(self, attr: str, value) -> None:
        """Reading attribute ``attr`` of ``value`` (None: of a match statement's subject)."""
        self._check_name(attr, "uses")
        if attr in HIDING_ATTRS and attr not in self.allowed:
            self._say(f"it reads `.{attr}`, which reaches objects behind the code's back")
        elif attr in HIDING_CALLS or attr in DYNAMIC_ATTRS:
            self._say(f"it uses `.{attr}`, which reaches code by a computed name")
        elif attr in HIDING_MODULES:
            self._say(f"it reaches `{attr}` through another module (`.{attr}`), which "
                      f"can call code without naming it")
        elif attr in TRACING_ATTRS:
            self._say(f"it uses `.{attr}`, which watches or changes how code is called "
                      f"(the judge's own watching)")
        elif attr in PARTIAL_ATTRS and isinstance(value, (ast.Subscript, ast.Call)):
            self._say(f"it reads `.{attr}` of something it looked up, which reaches the "
                      f"function behind a partial (as JAX's rule tables hold them)")

    def visit_Call(self, node):
        func = node.func
        if scopes.is_getattr(node):
            name = scopes.literal_name(node)
            if name is not None:
                self._plain.add(id(func))
                if name in HIDING_MODULES | TRACING_ATTRS:
                    self._say(f"it reads `{name}` with `{func.id}`, which reaches objects "
                              f"behind the code's back")
            elif not self.rules.dynamic:
                self._say(f"it calls `{func.id}` with a computed attribute name")
        elif (isinstance(func, ast.Attribute) and func.attr in MUTATORS
              and self._not_owned(func.value) and not _is_settings(func.value, self._settings)):
            self._say(f"it changes `{_short(func.value)}` with `.{func.attr}()`, code it does "
                      f"not own (the checks, the course or JAX)")
        self.generic_visit(node)

    def visit_Constant(self, node):
        if isinstance(node.value, str) and id(node) not in self._docstrings:
            for word, name in zip(self.words, self.rules.names):
                if word.match(node.value):
                    self._say(f"it names `{name}` in a string, the implementation this exercise "
                              f"asks you to write")
            if _COURSE_PATH.match(node.value):     # sys.modules["grader.judge.box.tripwires"]
                self._say(f"it names the course's own package in a string "
                          f"(`{_short(node)}`): answers use only what the set-up cell provides")
            if node.value.strip() in HIDING_ATTRS and node.value.strip() not in self.allowed:
                self._say(f"it names `{node.value.strip()}` in a string, which reaches objects "
                          f"behind the code's back")
        self.generic_visit(node)


# A string that is a dotted path into the course's package: what a lookup by name would reach.
_COURSE_PATH = re.compile(rf"^\s*{COURSE_PACKAGE}(\.[\w.]*)?\s*$")


def _short(expr, most: int = 80) -> str:
    text = ast.unparse(expr)
    return text if len(text) <= most else text[:most - 3] + "..."


def _is_settings(expr, imported=frozenset()) -> bool:
    """``jax.config`` and the like: an answer may choose its own settings
    (``jax.config.update("jax_enable_x64", True)``, or ``config.update`` after ``from jax import
    config``, as JAX's docs long wrote it); that changes no code."""
    return ((isinstance(expr, ast.Attribute) and expr.attr == "config") or
            (isinstance(expr, ast.Name) and expr.id in imported))


def _jax_config_names(tree) -> set[str]:
    """Names ``from jax import config [as name]`` binds in the cell."""
    return {a.asname or a.name for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.module == "jax" and not node.level
            for a in node.names if a.name == "config"}


def _is_docstring_owner(node) -> bool:
    body = getattr(node, "body", None)
    return (isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            and bool(body) and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str))
