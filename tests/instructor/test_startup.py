"""nbgrader's start-up in the course's tools: bin/nbgrader and every process of grader.instructor
skip rfc3987_syntax (jsonschema's optional "iri" check, 39 Lark grammars built on import: half of
a `bin/nbgrader db student list`), and nbgrader works as before without it."""
import os
import subprocess
import sys

from tools import classroom as C

ENV = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}


def imported(stderr: str) -> set[str]:
    return {line.rpartition("|")[2].strip() for line in stderr.splitlines()
            if line.startswith("import time:")}


def test_bin_nbgrader_starts_without_rfc3987_syntax(tmp_path):
    course = C.build_course(str(tmp_path))
    nbgrader = os.path.join(C.ROOT, "bin", "nbgrader")
    # the first command makes the gradebook, through nbgrader's alembic: a process of its own
    subprocess.run([nbgrader, "db", "student", "add", "ada", "--last-name=Lovelace"],
                   cwd=course.course, check=True, capture_output=True, env=ENV, timeout=120)
    listed = subprocess.run([nbgrader, "db", "student", "list"], cwd=course.course,
                            capture_output=True, text=True,
                            env=dict(ENV, PYTHONPROFILEIMPORTTIME="1"), timeout=120)
    assert listed.returncode == 0, listed.stderr[-2000:]
    assert "ada (Lovelace, None) -- None, None" in listed.stdout + listed.stderr
    names = imported(listed.stderr)
    assert "nbgrader.apps" in names and "jsonschema" in names
    # (a refused import is listed too, as "rfc3987_syntax"; its grammars are not built)
    assert "rfc3987_syntax.syntax_helpers" not in names and "lark" not in names


def test_every_instructor_process_skips_it():
    code = ("import grader.instructor, jsonschema, nbformat, sys\n"
            "nb = nbformat.v4.new_notebook()\n"
            "nbformat.validate(nb)\n"
            "print(sys.modules.get('rfc3987_syntax', 'absent'))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=ENV,
                         timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "None", out.stderr[-2000:]
