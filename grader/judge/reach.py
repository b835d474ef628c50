"""Which answer code an exercise can reach, read before anything runs.

Every answer cell of a notebook runs in one namespace in the judge's child, so an exercise's
answer can use whatever another answer cell binds: a helper, an alias of JAX's rule maker, a
table filled elsewhere. Each exercise is therefore read (`grader.judge.delegation`) against its
own cells and against every top-level statement of the other answer cells that its code can
reach: a statement that binds a name the exercise's code uses, or changes the object behind such
a name (a store into it, a method called on it, the name passed to a call), and, from there, what
that statement uses in turn. Names are read in every form Python binds them: assignment and its
tuple, list and starred targets, augmented and annotated assignment, ``for``, ``with ... as``,
walrus, ``import ... as``, ``except ... as``, ``match`` captures, ``def``/``class``, ``del``, and
``global`` declared inside a function.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass

ANY = "*"              # what ``from m import *`` binds: any name at all
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


@dataclass(frozen=True)
class Facts:
    """What one top-level statement binds, reads and may change (module-level names)."""
    bound: frozenset
    used: frozenset
    changed: frozenset
    imports: bool = False      # an import: what it binds is someone else's module or object


def statements(source: str) -> list[Facts] | None:
    """The facts of each of the cell's top-level statements; None when it does not parse, or is
    too deep to read (the reading sends the exercises owning it to a human)."""
    try:
        return [Facts(frozenset(bound(s)), frozenset(used(s)), frozenset(changed(s)),
                      isinstance(s, (ast.Import, ast.ImportFrom)))
                for s in ast.parse(source).body]
    except (SyntaxError, ValueError, RecursionError, MemoryError):   # ValueError: a null byte
        return None


def size(sources, most: int) -> int:
    """Syntax-tree nodes of ``sources`` together, counted no further than ``most + 1`` (a
    source that does not parse counts nothing: nothing reads it either)."""
    count = 0
    for source in sources:
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        for _ in ast.walk(tree):
            count += 1
            if count > most:
                return count
    return count


def bound(stmt: ast.stmt) -> set[str]:
    """Module-level names ``stmt`` binds (or unbinds), in every form; ``ANY`` for a star import."""
    names: set[str] = set()
    _bind(stmt, names)
    # ``global x`` in a function (however nested) makes its stores of x module-level.
    names |= {n for node in ast.walk(stmt) if isinstance(node, ast.Global) for n in node.names}
    return names


def _bind(node, names: set[str]) -> None:
    """The bindings ``node`` makes in the scope it runs in (not inside nested scopes)."""
    if isinstance(node, _SCOPES):
        if not isinstance(node, ast.Lambda):
            names.add(node.name)
        # Decorators, defaults, annotations and bases run here (a walrus there binds here);
        # the body is a scope of its own.
        for field, value in ast.iter_fields(node):
            if field != "body":
                for part in value if isinstance(value, list) else [value]:
                    if isinstance(part, ast.AST):
                        _bind(part, names)
        return
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        for alias in node.names:
            names.add(ANY if alias.name == "*" else (alias.asname or alias.name).split(".")[0])
        return
    if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
        names.add(node.id)
    elif isinstance(node, ast.ExceptHandler) and node.name:
        names.add(node.name)
    elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
        names.add(node.name)
    elif isinstance(node, ast.MatchMapping) and node.rest:
        names.add(node.rest)
    elif isinstance(node, _COMPREHENSIONS):
        for walrus in ast.walk(node):       # only a walrus leaves a comprehension's scope
            if isinstance(walrus, ast.NamedExpr):
                _bind(walrus.target, names)
        return
    for child in ast.iter_child_nodes(node):
        _bind(child, names)


def used(stmt: ast.stmt) -> set[str]:
    """The module-level names ``stmt`` reads, in nested functions' bodies too (they run later);
    a function's own parameters and locals are not module-level names."""
    return _scan(stmt)[0]


def changed(stmt: ast.stmt) -> set[str]:
    """Module-level names whose object ``stmt`` may change without rebinding them: the root of
    a store or ``del`` target (``h[k] = ...``, ``h.x += 1``), the object a method is called on
    (``h.append(...)``: any method may change it), and every name passed to a call."""
    return _scan(stmt)[1]


def _scan(stmt) -> tuple[set[str], set[str]]:
    reads, changes = set(), set()
    _visit(stmt, frozenset(), reads, changes)
    return reads, changes


def _visit(node, local: frozenset, reads: set, changes: set) -> None:
    """Walk ``node`` with ``local`` the names that are a function's own where it stands."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        for field, value in ast.iter_fields(node):      # decorators, defaults: out here
            if field != "body":
                for part in value if isinstance(value, list) else [value]:
                    if isinstance(part, ast.AST) and not isinstance(part, ast.arguments):
                        _visit(part, local, reads, changes)
        args = node.args
        for default in args.defaults + [d for d in args.kw_defaults if d is not None]:
            _visit(default, local, reads, changes)
        inner = local | _locals(node)
        for part in node.body if isinstance(node.body, list) else [node.body]:
            _visit(part, inner, reads, changes)
        return
    if isinstance(node, _COMPREHENSIONS):
        inner = local | {n.id for g in node.generators for n in ast.walk(g.target)
                         if isinstance(n, ast.Name)}
        for child in ast.iter_child_nodes(node):
            _visit(child, inner, reads, changes)
        return
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in local:
        reads.add(node.id)
    elif isinstance(node, (ast.Attribute, ast.Subscript)) and \
            isinstance(node.ctx, (ast.Store, ast.Del)):
        changes.update(_roots(node) - local)
    elif isinstance(node, ast.Call):
        if isinstance(node.func, ast.Attribute):
            changes.update(_roots(node.func.value) - local)
        for arg in list(node.args) + [k.value for k in node.keywords]:
            changes.update(_roots(arg) - local)
    for child in ast.iter_child_nodes(node):
        _visit(child, local, reads, changes)


def _locals(fn) -> set[str]:
    """A function's own names: its parameters and what its body binds, less ``global`` ones."""
    args = fn.args
    params = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]
    params += [a.arg for a in (args.vararg, args.kwarg) if a is not None]
    body = fn.body if isinstance(fn.body, list) else [fn.body]
    names: set[str] = set(params)
    for stmt in body:
        _bind(stmt, names)
    declared = {n for stmt in body for node in ast.walk(stmt) if isinstance(node, ast.Global)
                for n in node.names}
    return names - declared


def _roots(expr) -> set[str]:
    """The name an attribute or subscript chain starts from (``a`` of ``a.b[c].d``)."""
    while isinstance(expr, (ast.Attribute, ast.Subscript, ast.Starred)):
        expr = expr.value
    return {expr.id} if isinstance(expr, ast.Name) else set()


def reach(own: list[list[Facts]], others: dict[str, list[Facts]],
          needs) -> dict[str, list[int]]:
    """For one exercise, ``{cell name: [indices of its statements]}`` of the other answer cells
    whose statements its code can reach. ``own``: the statements of the exercise's own cells;
    ``others``: the other answer cells' statements (unparseable cells left out); ``needs``: the
    names the exercise's answer must define."""
    every = [s for stmts in own for s in stmts] + [s for st in others.values() for s in st]
    # What the answers made themselves: only those objects can carry something from one answer
    # cell to another by being changed (the set-up's and imported ones are someone else's).
    made = {n for s in every if not s.imports for n in s.bound} - {ANY}
    names = set(needs)
    for stmt in (s for stmts in own for s in stmts):
        names |= stmt.used | stmt.bound
    # One worklist pass: each statement is indexed under the names that would reach it (what it
    # binds; what it changes of the answers' own objects), and each name, once known, reaches
    # the statements indexed under it: work in the size of the facts, not passes over them.
    waiting: dict[str, list[tuple[str, int]]] = {}
    found: dict[str, set[int]] = {cell: set() for cell in others}
    todo: list[tuple[str, int]] = []
    for cell, stmts in others.items():
        for i, stmt in enumerate(stmts):
            if ANY in stmt.bound:
                todo.append((cell, i))
            for name in stmt.bound | (stmt.changed & made):
                waiting.setdefault(name, []).append((cell, i))
    todo += [at for name in names for at in waiting.pop(name, ())]
    while todo:
        cell, i = todo.pop()
        if i in found[cell]:
            continue
        found[cell].add(i)
        stmt = others[cell][i]
        for name in stmt.used | (stmt.bound - {ANY}):
            if name not in names:
                names.add(name)
                todo += waiting.pop(name, ())
    return {cell: sorted(idx) for cell, idx in found.items() if idx}
