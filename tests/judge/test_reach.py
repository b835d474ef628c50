"""What one answer cell's statements bind, read and change, and what an exercise reaches of the
other answer cells (grader/judge/reach.py)."""
import pytest

from grader.judge import reach


def facts(source: str) -> list[reach.Facts]:
    found = reach.statements(source)
    assert found is not None
    return found


@pytest.mark.parametrize("source, names", [
    ("a = 1", {"a"}),
    ("a, (b, *c) = 1, (2, 3)", {"a", "b", "c"}),
    ("[a, b] = 1, 2", {"a", "b"}),
    ("a += 1", {"a"}),
    ("a: int = 1", {"a"}),
    ("for i, j in []:\n    k = 1", {"i", "j", "k"}),
    ("with open('f') as (k, l):\n    pass", {"k", "l"}),
    ("if (w := 3):\n    pass", {"w"}),
    ("[(w := t) for t in range(3)]", {"w"}),
    ("import os.path as op, sys", {"op", "sys"}),
    ("import os.path", {"os"}),
    ("from m import n as nn", {"nn"}),
    ("from m import *", {reach.ANY}),
    ("try:\n    pass\nexcept E as err:\n    pass", {"err"}),
    ("match v:\n    case [p, *rest]:\n        pass\n    case {'k': q, **others}:\n        pass\n"
     "    case P(x=z) as whole:\n        pass", {"p", "rest", "q", "others", "z", "whole"}),
    ("def f(d=(dd := 1)):\n    global G\n    G = 1\n    local = 2", {"f", "dd", "G"}),
    ("@(deco := lambda f: f)\nclass C:\n    inside = 1", {"C", "deco"}),
    ("del zz", {"zz"}),
])
def test_every_form_of_binding_is_read_and_nothing_local_leaks(source, names):
    assert set().union(*(f.bound for f in facts(source))) == names


def test_a_function_s_parameters_and_locals_are_not_module_names():
    (f,) = facts("def rule(prim, vals, dims):\n    x = vals[0]\n    return helper(x), table\n")
    assert f.used == {"helper", "table"}
    assert f.changed == set()


def test_what_a_statement_may_change():
    (f,) = facts("def g():\n    h['k'] = 1\n    box.items.append(2)\n    fill(t)\n    n.x += 1\n")
    assert f.changed >= {"h", "box", "t", "n"}


def test_a_cell_too_deep_to_read_gives_no_facts():
    assert reach.statements("x = " + "+".join(["1"] * 1000)) is None
    assert reach.statements("def broken(:\n") is None


def test_an_exercise_reaches_what_its_code_uses_and_what_changes_it_transitively():
    own = [facts("def moments_rule(prim, vals, dims):\n    return H['vb'](prim)\n")]
    others = {"spy": facts("H = {}\ndef _fill(d):\n    d['vb'] = VB\n_fill(H)\nunrelated = 1\n"),
              "tables": facts("VB = object()\nother = 2\n")}
    assert reach.reach(own, others, ["moments_rule"]) == {"spy": [0, 1, 2], "tables": [0]}


def test_the_set_up_s_and_imported_names_carry_nothing_between_cells():
    own = [facts("def moments_rule(prim, vals, dims):\n    return jnp.abs(vals[0])\n")]
    others = {"spy": facts("import numpy as jnp2\njnp.moveaxis(x, 0, 1)\nnp.sum(1)\n")}
    assert reach.reach(own, others, ["moments_rule"]) == {}


def test_a_star_import_is_reached_by_everyone():
    own = [facts("def f():\n    return 1\n")]
    assert reach.reach(own, {"x": facts("from m import *\n")}, ["f"]) == {"x": [0]}
