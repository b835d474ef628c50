"""Whose a name in an answer cell is, as Python's scoping rules decide it (read from the syntax tree).

The delegation reading (`grader.judge.delegation`) asks the same few questions of every cell: which
names the cell binds itself (``owned_names``: those are the student's, names it imports or finds
in the set-up are not), which names Python makes local to a function or comprehension
(``local_names``: inside it, such a name is never JAX's or the course's object), which parts of a
scope Python evaluates where the scope is written rather than inside it (``split``), and where an
attribute chain starts (``root``, through ``getattr`` with a written-out name: ``literal_name``).
They hold no rule of what an answer may use; those are the reading's.
"""
from __future__ import annotations

import ast

from .vocabulary import DYNAMIC_ATTRS


def owned_names(tree) -> set[str]:
    """Names the cell binds itself (defs, classes, assignments, loop and function arguments),
    as opposed to names it imports or finds in the set-up: those belong to someone else."""
    owned = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            owned.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            owned.add(node.id)
        elif isinstance(node, ast.arg):
            owned.add(node.arg)
        elif isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and node.name:
            owned.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            owned.add(node.rest)
    imported = {(a.asname or a.name).split(".")[0] for n in ast.walk(tree)
                if isinstance(n, (ast.Import, ast.ImportFrom)) for a in n.names}
    owned -= imported
    # A name bound to someone else's object (``m = L1.kit.observe``) is an alias, not owned; so
    # is one unpacked from it (``a, b = L1, 2``) or looping over it (``for m in (L1,)``; red
    # team, round 13: both patched a module the reading took for the cell's own).
    aliases = [pair for n in ast.walk(tree) for pair in _bindings(n)]
    # An alias of an alias is one too: a worklist from each name found not owned (not passes
    # over the list, which a chain written in reverse makes quadratic).
    aliased: dict[str, list[str]] = {}
    for name, origin in aliases:
        aliased.setdefault(origin, []).append(name)
    todo = [origin for origin in aliased if origin not in owned]
    while todo:
        for name in aliased.pop(todo.pop(), ()):
            if name in owned:
                owned.discard(name)
                todo.append(name)
    return owned


COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, *COMPREHENSIONS)


def local_names(scope) -> set[str]:
    """The names Python makes local to a function (or comprehension) ``scope``: its arguments
    and what its own body binds, less what it declares ``global``/``nonlocal``. Inside it such a
    name can only be that local (or an UnboundLocalError), never a module's or JAX's object: a
    local ``jacobian = ...`` is the student's own. Names of ``def``/``class`` statements are not
    plain data and stay read (``def _std_basis(...)``, a transcribed JAX helper)."""
    found, declared = set(), set()
    args = getattr(scope, "args", None)
    if args is not None:
        found |= {a.arg for a in ast.walk(args) if isinstance(a, ast.arg)}
    # (a copy: the walk below pops from it, and the body is the tree's own list)
    todo = [g.target for g in scope.generators] if isinstance(scope, COMPREHENSIONS) else \
        list(body(scope))
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            declared |= set(node.names)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            found.add(node.id)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            found.add(node.name)
        if isinstance(node, SCOPES + (ast.ClassDef,)):
            continue                  # a nested scope binds for itself
        todo.extend(ast.iter_child_nodes(node))
    return found - declared


def split(scope) -> tuple[list, list]:
    """A scope's nodes Python evaluates outside it (decorators, defaults, annotations, a
    comprehension's first iterable) and those it runs inside it."""
    if isinstance(scope, COMPREHENSIONS):
        first, *rest = scope.generators
        elts = [scope.key, scope.value] if isinstance(scope, ast.DictComp) else [scope.elt]
        return [first.iter], [first.target, *first.ifs, *rest, *elts]
    args = scope.args
    outside = [*args.defaults, *(d for d in args.kw_defaults if d is not None)]
    if not isinstance(scope, ast.Lambda):
        outside += [*scope.decorator_list, *(a.annotation for a in ast.walk(args)
                                             if isinstance(a, ast.arg) and a.annotation)]
        outside += [scope.returns] if scope.returns else []
    return outside, body(scope)


def body(scope) -> list:
    """A function's statements, or a lambda's one expression."""
    return scope.body if isinstance(scope.body, list) else [scope.body]


def _bindings(node):
    """``(name, origin)`` for each name an assignment or a for loop binds from a named object."""
    if isinstance(node, ast.Assign):
        pairs = [p for target in node.targets for p in _unpack(target, node.value)]
    elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension, ast.NamedExpr)):
        value = node.value if isinstance(node, ast.NamedExpr) else node.iter
        # a loop's name takes each item: from a written-out tuple or list, each one's origin;
        # from anything else, what it is drawn from (``for m in vars(L1).values()``: L1's)
        items = value.elts if isinstance(value, (ast.Tuple, ast.List, ast.Set)) else [value]
        if isinstance(node, ast.NamedExpr):
            items = [value]
        pairs = [p for item in items for p in _unpack(node.target, item, loose=True)]
    else:
        return []
    return [(name, origin) for name, origin in pairs if origin]


def _unpack(target, value, loose=False):
    """Pair the names of ``target`` with the origins of ``value``'s parts, element by element
    where both are written-out tuples of one length; otherwise every name with the whole value's
    origin when ``loose`` (a loop, a starred or uneven unpacking: any name may take any part)."""
    if isinstance(target, ast.Name):
        return [(target.id, _origin(value))]
    if isinstance(target, ast.Starred):
        return _unpack(target.value, value, loose=True)
    if isinstance(target, (ast.Tuple, ast.List)):
        if (isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts)
                and not any(isinstance(e, ast.Starred) for e in (*value.elts, *target.elts))):
            return [p for t, v in zip(target.elts, value.elts) for p in _unpack(t, v, loose)]
        parts = value.elts if isinstance(value, (ast.Tuple, ast.List)) else [value]
        return [(n.id, _origin(v)) for t in target.elts for n in ast.walk(t)
                if isinstance(n, ast.Name) for v in parts]
    return []


def _origin(expr) -> str | None:
    """The name a value is drawn from: its root, or for a call the root of the object it is
    called on or its first argument (``vars(L1).values()``, ``iter(L1.tables)``)."""
    found = root(expr)
    while found is None and isinstance(expr, ast.Call):
        expr = expr.func.value if isinstance(expr.func, ast.Attribute) else \
            (expr.args[0] if expr.args else None)
        found = root(expr) if expr is not None else None
    if found is None and isinstance(expr, (ast.Tuple, ast.List, ast.Set)):
        return next((o for o in map(_origin, expr.elts) if o), None)
    return found


def root(expr) -> str | None:
    """The name an attribute chain (``a.b[c].d``, ``getattr(a, "b")``) starts from, or None for
    anything else (a call's result, a literal)."""
    while True:
        if isinstance(expr, (ast.Attribute, ast.Subscript)):
            expr = expr.value
        elif is_getattr(expr) and expr.args:
            expr = expr.args[0]               # what getattr reads is its object's
        else:
            return expr.id if isinstance(expr, ast.Name) else None


def is_getattr(expr) -> bool:
    return (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name)
            and expr.func.id in DYNAMIC_ATTRS)


def literal_name(call) -> str | None:
    """The attribute a ``getattr(x, "name"[, default])`` call reads, or None when computed."""
    name = call.args[1] if len(call.args) > 1 else None
    if (isinstance(name, ast.Constant) and isinstance(name.value, str)
            and not any(isinstance(a, ast.Starred) for a in call.args) and not call.keywords):
        return name.value
    return None
