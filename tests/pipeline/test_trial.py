"""A trial term on a shared machine: its own exchange one setting away (EXCHANGE=DIR, read by
course/nbgrader_config.py as INSIDE_VMAP_EXCHANGE), a test submission by hand (make try-submit),
and what nbgrader does with a grade cell the student deleted (put back, graded like any other)."""
import os
import shutil
import subprocess
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook
from traitlets.config.loader import PyFileConfigLoader

from tools import classroom as C

pytestmark = pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")
DEFAULT = "/usr/local/share/nbgrader/exchange"
FIRST = "01-the-rule-per-primitive"


COURSE = os.path.join(C.ROOT, "course")


def exchange_root(monkeypatch, value, lab=None, course=COURSE):
    """The Exchange.root the course's config gives with INSIDE_VMAP_EXCHANGE=value and, when lab is
    given, INSIDE_VMAP_LAB_EXCHANGE=lab (as `make lab` sets it)."""
    for name, setting in (("INSIDE_VMAP_EXCHANGE", value), ("INSIDE_VMAP_LAB_EXCHANGE", lab)):
        if setting is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, setting)
    cfg = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
    return cfg.Exchange.root


def test_the_exchange_is_one_setting_away(monkeypatch, tmp_path):
    assert exchange_root(monkeypatch, None) == DEFAULT
    assert exchange_root(monkeypatch, "") == DEFAULT
    assert exchange_root(monkeypatch, str(tmp_path)) == str(tmp_path)


def test_make_lab_falls_back_to_its_own_exchange_only_where_the_course_s_is_missing(monkeypatch, tmp_path):
    """Issue 28: a student alone has no class exchange, and the Assignments tab said so as an error.
    `make lab`'s folder (INSIDE_VMAP_LAB_EXCHANGE) stands in for a missing one, created; an exchange
    that exists, or EXCHANGE=DIR, wins."""
    course, machine, lab = tmp_path / "course", tmp_path / "machine-wide", tmp_path / "build" / "exchange"
    course.mkdir()
    text = (Path(C.ROOT) / "course" / "nbgrader_config.py").read_text()
    assert text.count(f'"{DEFAULT}"') == 1                 # the one place the default is written
    (course / "nbgrader_config.py").write_text(text.replace(DEFAULT, str(machine)))
    assert exchange_root(monkeypatch, None, course=course) == str(machine)      # not `make lab`
    assert not lab.exists()
    assert exchange_root(monkeypatch, None, str(lab), course) == str(lab)       # missing: make lab's own
    assert lab.is_dir()
    machine.mkdir()
    assert exchange_root(monkeypatch, None, str(lab), course) == str(machine)   # there: the class's
    trial = str(tmp_path / "trial")
    assert exchange_root(monkeypatch, trial, str(lab), course) == trial          # named: always


def make(course, sim, exchange, *args):
    cmd = ["make", "--no-print-directory", "-C", C.ROOT, "-o", ".venv/.installed", "-o",
           ".venv/.installed-all", *args, f"COURSE={course}", f"SIM={sim}",
           f"EXCHANGE={exchange}", f"ASSIGNMENT={FIRST}",
           "NBGRADER_ARGS=--ExchangeCollect.check_owner=False"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("MAKE")
           and k != "INSIDE_VMAP_EXCHANGE"}
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc.stdout + proc.stderr


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("make") is None, reason="no make")
def test_a_trial_term_by_hand_on_its_own_exchange(tmp_path):
    work = tmp_path / "trial"
    course, sim, exchange = work / "course", work / "sim", work / "exchange"
    course.mkdir(parents=True)
    shutil.copy(os.path.join(C.ROOT, "course", "nbgrader_config.py"), course)   # as tracked
    shutil.copytree(os.path.join(C.ROOT, "exercises"), work / "exercises")
    out = make(course, sim, exchange, "assign")
    assert f"exchange {exchange}" in out and DEFAULT not in out
    assert os.listdir(exchange / C.COURSE_ID / "outbound") == [FIRST]
    out = make(course, sim, exchange, "try-submit", "STUDENT=zoe")
    assert f"zoe handed in {FIRST}" in out and str(exchange) in out
    # an honest student who deleted the first grade cell, handed in by hand (NOTEBOOK=...)
    solved = nbformat.read(sim / "homes" / "zoe" / FIRST / f"{FIRST}.ipynb", as_version=4)
    gid = next(c.metadata.nbgrader["grade_id"] for c in solved.cells
               if c.metadata.get("nbgrader", {}).get("grade"))
    solved.cells = [c for c in solved.cells if c.metadata.get("nbgrader", {}).get("grade_id")
                    != gid]
    nbformat.write(solved, tmp_path / "no-grade-cell.ipynb")
    make(course, sim, exchange, "try-submit", "STUDENT=yan",
         f"NOTEBOOK={tmp_path / 'no-grade-cell.ipynb'}")
    # and one who rewrote a locked grade cell: nbgrader's warning stays for that
    edited = nbformat.read(sim / "homes" / "zoe" / FIRST / f"{FIRST}.ipynb", as_version=4)
    cell = next(c for c in edited.cells if c.metadata.get("nbgrader", {}).get("grade_id") == gid)
    cell.source = "print('all good')"
    nbformat.write(edited, tmp_path / "edited-grade-cell.ipynb")
    make(course, sim, exchange, "try-submit", "STUDENT=xia",
         f"NOTEBOOK={tmp_path / 'edited-grade-cell.ipynb'}")
    out = make(course, sim, exchange, "collect", "autograde")
    # what the sandbox is made of is the log's, not the terminal's
    assert not any(w in out for w in ("zygote", "cgroup", "namespaces")), out
    log = (course / "autograde.log").read_text()
    assert "kernels and judge children limited by" in log
    # the hidden tests nbgrader puts back into honest copies of grade cells warn no more
    changed = [line for line in log.splitlines() if "Attribute 'checksum'" in line]
    assert len(changed) == 1 and f"for cell {gid} has changed" in changed[0], changed
    with Gradebook("sqlite:///" + str(course / "gradebook.db"), C.COURSE_ID) as gb:
        top = gb.find_assignment(FIRST).max_score
        zoe = gb.find_submission(FIRST, "zoe")
        yan = gb.find_submission(FIRST, "yan")
        assert zoe.score == top > 0
        # course/nbgrader_config.py: put back (OverwriteCells.add_missing_cells), judged from
        # the answer cells: the deleted check keeps its points
        grade = {g.name: g for g in yan.notebooks[0].grades}[gid]
        assert (grade.auto_score, grade.needs_manual_grade) == (grade.max_score, False)
        assert yan.score == top
        assert gb.find_submission(FIRST, "xia").score == top   # the grade cell as released
