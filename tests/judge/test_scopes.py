"""Whose a name is, read from the syntax tree the way Python's scoping rules decide it."""
import ast

import pytest

from grader.judge import scopes


def _first(source: str, kind):
    return next(n for n in ast.walk(ast.parse(source)) if isinstance(n, kind))


def test_a_cell_owns_what_it_binds_but_not_what_it_imports_or_aliases():
    tree = ast.parse("import jax\nfrom jax import lax as L\n"
                     "def f(x, *rest, k=1):\n    y = x\n    return y\n"
                     "class C: pass\n"
                     "mine = [1]\nalias = mine\n"
                     "observe = L1.kit.observe\nagain = observe\n"
                     "try:\n    pass\nexcept ValueError as err:\n    pass\n")
    owned = scopes.owned_names(tree)
    assert {"f", "x", "rest", "k", "y", "C", "mine", "alias", "err"} <= owned
    # imported names are someone else's, and so is a name bound to someone else's object, even
    # through a second alias
    assert not {"jax", "L", "observe", "again"} & owned


def test_a_functions_locals_are_its_arguments_and_bindings_less_global_ones():
    fn = _first("def f(a, /, b, *c, d, **e):\n"
                "    global g\n    g = 1\n    h = 2\n    for i in a:\n        pass\n"
                "    def inner():\n        j = 3\n"
                "    try:\n        pass\n    except Exception as k:\n        pass\n", ast.FunctionDef)
    # a nested def's own bindings stay its own; the def's name is not plain data
    assert scopes.local_names(fn) == {"a", "b", "c", "d", "e", "h", "i", "k"}


def test_a_comprehensions_locals_are_its_targets():
    comp = _first("[y for x in xs for y in x if (z := y)]", ast.ListComp)
    assert scopes.local_names(comp) == {"x", "y"}


def test_what_python_evaluates_outside_a_scope_is_split_from_its_body():
    fn = _first("@deco\ndef f(a: Ann = default) -> Ret:\n    body_name\n", ast.FunctionDef)
    outside, inside = scopes.split(fn)
    assert {ast.unparse(n) for n in outside} == {"deco", "Ann", "default", "Ret"}
    assert [ast.unparse(n) for n in inside] == ["body_name"]
    comp = _first("[e for x in first for y in second if cond]", ast.ListComp)
    outside, inside = scopes.split(comp)
    assert [ast.unparse(n) for n in outside] == ["first"]      # evaluated where it is written
    inside_names = {n.id for node in inside for n in ast.walk(node) if isinstance(n, ast.Name)}
    assert inside_names == {"x", "y", "second", "cond", "e"}   # run in the comprehension's scope


@pytest.mark.parametrize("expr, root", [
    ("a.b[c].d", "a"),
    ('getattr(mod, "name").attr', "mod"),
    ("f().attr", None),
    ('"text".upper', None),
])
def test_an_attribute_chain_starts_from_its_first_name(expr, root):
    assert scopes.root(ast.parse(expr, mode="eval").body) == root


@pytest.mark.parametrize("call, name", [
    ('getattr(x, "batching")', "batching"),
    ('getattr(x, "batching", None)', "batching"),
    ("getattr(x, name)", None),
    ('getattr(x, *("batching",))', None),
    ('getattr(x, "batching", default=None)', None),
])
def test_getattr_reads_a_literal_name_only_when_written_out(call, name):
    node = ast.parse(call, mode="eval").body
    assert scopes.is_getattr(node)
    assert scopes.literal_name(node) == name
