"""A name an answer could not find, defined in a cell the judge does not run.

The judge's child runs the set-up cells and the answer cells, nothing else: a helper the student
defined in a cell of their own (``_fold`` beside ``moments_rule``) ran in their notebook, but is
not defined when their answer is observed. Its ``NameError`` then read like a bug to find by
running the example again; `explain` says the real cause instead, naming the cell to move the
definition out of, wherever the notebook shows that cell defining the name.
"""
from __future__ import annotations

import dataclasses
import re

from ..feedback import Result
from . import cellmeta

UNDEFINED = re.compile(r"NameError: name '([A-Za-z_][A-Za-z_0-9]*)' is not defined")
HINT = ("`{name}` is defined in a cell of your own ({where}), which grading does not run: the "
        "judge re-runs only the answer cells, in a fresh process. Move the definition of "
        "`{name}` into the answer cell that uses it (the cell marked `# YOUR CODE HERE`).")


def elsewhere(nb, run: set[str], defines) -> dict[str, str]:
    """``{name: where}`` for the top-level names that code cells not in ``run`` (grade ids of
    the cells the child runs) define; ``defines(source)`` reads one cell (the plan's reader)."""
    found: dict[str, str] = {}
    for number, cell in enumerate(nb["cells"], start=1):
        gid = cellmeta.grade_id(cell)
        if cell.get("cell_type") != "code" or (gid is not None and gid in run):
            continue
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else str(source)
        first = next((line.strip() for line in source.splitlines() if line.strip()), "")
        for name in defines(source):
            found.setdefault(name, f"cell {number}: {first[:60]}")
    return found


def explain(verdicts: dict[str, Result], nb, run: set[str], defines) -> dict[str, Result]:
    """``verdicts`` with the hint of every "name ... is not defined" finding replaced, where the
    name is one a cell the judge does not run defines."""
    names = None
    out = {}
    for gid, res in verdicts.items():
        findings = []
        for f in res.findings:
            hit = UNDEFINED.search(f.got or "")
            if hit:
                names = elsewhere(nb, run, defines) if names is None else names
                if hit.group(1) in names:
                    f = dataclasses.replace(f, hint=HINT.format(name=hit.group(1),
                                                                where=names[hit.group(1)]))
            findings.append(f)
        out[gid] = dataclasses.replace(res, findings=tuple(findings))
    return out
