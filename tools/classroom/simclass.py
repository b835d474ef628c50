"""A simulated class for trying a whole term from docs/instructors.md's commands (``make class-roster``,
``make class-submit``, ``make try-submit``: ``python -m tools.classroom.simclass``), with the
real exercises, the course's config and nbgrader's exchange.

* `write_roster`: ``N`` students as a Canvas gradebook export lists them (``Student, ID, SIS
  User ID, SIS Login ID, Section``), for ``make roster FILE=...``.
* `submit_class`: every student on that roster fetches each released assignment through the
  exchange (``nbgrader fetch_assignment``), answers it as their kind of student does
  (`tools.classroom.answer`: the solutions, a part of them, nothing, broken JSON)
  and submits it (``nbgrader submit``), each from a home folder of their own whose
  nbgrader_config.py names the course's exchange, as a student's server would.

The kinds repeat in `PATTERN`, so any N gets the same mix; the first few cover every kind.
"""
from __future__ import annotations

import argparse
import csv
import os
import shutil
import sys
import time

import nbformat
from traitlets.config.loader import PyFileConfigLoader

from grader.nbgrader_plugins.roster import convert
from tools import classroom as C

# One period of the class: 20 students, 13 full, 4 partial, 1 blank, 1 corrupt, 1 never submits.
PATTERN = (C.FULL, C.PARTIAL, C.BLANK, C.NEVER, C.FULL, C.FULL, C.PARTIAL, C.FULL, C.FULL,
           C.CORRUPT, C.FULL, C.PARTIAL, C.FULL, C.FULL, C.FULL, C.FULL, C.PARTIAL, C.FULL,
           C.FULL, C.FULL)
FIRST = ("Ada", "Ben", "Cleo", "Dev", "Eve", "Finn", "Gus", "Hana", "Ivo", "Jun", "Kai", "Lea")
LAST = ("Lovelace", "Noether", "Turing", "Hopper", "Gauss", "Euler", "Curie", "Meitner")
EXCHANGE_DEFAULT = "/usr/local/share/nbgrader/exchange"     # nbgrader 0.9.6's Exchange.root


def kind_of(index: int) -> str:
    return PATTERN[index % len(PATTERN)]


def write_roster(n: int, path: str) -> None:
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as fh:
        out = csv.writer(fh)
        out.writerow(["Student", "ID", "SIS User ID", "SIS Login ID", "Section"])
        for i in range(n):
            out.writerow([f"{LAST[i % len(LAST)]}, {FIRST[i % len(FIRST)]}", 100001 + i,
                          f"U{i + 1:05d}", f"s{i + 1:03d}", f"Section {1 + i % 2}"])


def course_settings(course: str) -> dict:
    """The course id, exchange, source folder and gradebook that nbgrader reads from
    ``COURSE/nbgrader_config.py`` (the one place the term's settings live)."""
    cfg = PyFileConfigLoader("nbgrader_config.py", path=course).load_config()
    root = cfg.CourseDirectory.get("root", course)
    return {"course_id": cfg.CourseDirectory.course_id,
            "exchange": cfg.Exchange.get("root", EXCHANGE_DEFAULT),
            "source": os.path.join(root, cfg.CourseDirectory.get("source_directory", "source"))}


def student_home(homes: str, student: str, settings: dict) -> str:
    return C.write_student_home(os.path.join(homes, student), settings["course_id"],
                                settings["exchange"])


def released(settings: dict) -> list[str]:
    outbound = os.path.join(settings["exchange"], settings["course_id"], "outbound")
    return sorted(os.listdir(outbound)) if os.path.isdir(outbound) else []


def hand_in(kind: str, path: str, source_path: str) -> None:
    """The fetched notebook at ``path``, answered as a student of this kind would."""
    if kind == C.NO_NB:
        os.remove(path)
        return
    nb = C.answer(kind, nbformat.read(path, as_version=4),
                  nbformat.read(source_path, as_version=4))
    nbformat.write(nb, path)
    if kind == C.CORRUPT:
        with open(path, "rb") as fh:
            data = fh.read()
        with open(path, "wb") as fh:
            fh.write(data[: len(data) // 2])


def submit_class(course: str, sim: str, say=print) -> dict[str, int]:
    settings = course_settings(course)
    _, students, _ = convert(os.path.join(sim, "roster.csv"))
    assignments = released(settings)
    if not assignments:
        raise SystemExit(f"inside-vmap: nothing released in {settings['exchange']} for course "
                         f"{settings['course_id']!r}: run `make assign` first")
    counts: dict[str, int] = {}
    start = time.monotonic()
    for i, st in enumerate(students):
        kind = kind_of(i)
        counts[kind] = counts.get(kind, 0) + 1
        if kind == C.NEVER:
            continue
        home = student_home(os.path.join(sim, "homes"), st["id"], settings)
        for a in assignments:
            C.nbgrader(["fetch_assignment", a, f"--student={st['id']}"], home)
            for name in C.source_notebooks(settings["source"], a):
                hand_in(kind, os.path.join(home, a, name),
                        os.path.join(settings["source"], a, name))
            C.nbgrader(["submit", a, f"--student={st['id']}"], home)
    mix = ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
    say(f"inside-vmap: {len(students)} simulated students ({mix}) handed in "
        f"{', '.join(assignments)} through {settings['exchange']} in "
        f"{time.monotonic() - start:.0f} s; their folders: {os.path.join(sim, 'homes')}")
    return counts


def try_submit(course: str, sim: str, student: str, assignment: str, kind: str = C.FULL,
               notebook: str = "", say=print) -> str:
    """One test submission by hand: ``student`` fetches ``assignment`` into SIM/homes/STUDENT,
    answers it as a ``kind`` of student does (or takes ``notebook`` as it is) and submits it,
    through the course's exchange, as a student's server would. Returns the student's folder."""
    settings = course_settings(course)
    if assignment not in released(settings):
        raise SystemExit(f"inside-vmap: {assignment!r} is not released in {settings['exchange']} "
                         f"for course {settings['course_id']!r}: run `make assign` first")
    home = student_home(os.path.join(sim, "homes"), student, settings)
    if os.path.isdir(os.path.join(home, assignment)):    # fetch never overwrites: start afresh
        shutil.rmtree(os.path.join(home, assignment))
    C.nbgrader(["fetch_assignment", assignment, f"--student={student}"], home)
    names = C.source_notebooks(settings["source"], assignment)
    for name in names:
        path = os.path.join(home, assignment, name)
        if notebook:
            shutil.copyfile(notebook, path)
        else:
            hand_in(kind, path, os.path.join(settings["source"], assignment, name))
    C.nbgrader(["submit", assignment, f"--student={student}"], home)
    say(f"inside-vmap: {student} handed in {assignment} ("
        + (f"{notebook} as {', '.join(names)}" if notebook else f"answered as a {kind} student")
        + f") through {settings['exchange']}; their folder: {home}. Next: make collect autograde")
    return home


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.classroom.simclass",
                                     description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="step", required=True)
    r = sub.add_parser("roster", help="write SIM/roster.csv, a Canvas-style roster of N students")
    r.add_argument("--students", type=int, default=200)
    r.add_argument("--sim", required=True, help="the simulation's folder")
    s = sub.add_parser("submit", help="every student of SIM/roster.csv hands in every release")
    s.add_argument("--sim", required=True)
    s.add_argument("--course", default=".", help="the course folder (its nbgrader_config.py)")
    t = sub.add_parser("try", help="one test submission by hand, through the exchange")
    t.add_argument("--sim", required=True)
    t.add_argument("--course", default=".", help="the course folder (its nbgrader_config.py)")
    t.add_argument("--student", default="tryout")
    t.add_argument("--assignment", required=True)
    t.add_argument("--kind", default=C.FULL, choices=(C.FULL, C.PARTIAL, C.BLANK))
    t.add_argument("--notebook", default="", help="hand in this notebook instead")
    args = parser.parse_args(argv)
    if args.step == "try":
        try_submit(os.path.abspath(args.course), os.path.abspath(args.sim), args.student,
                   args.assignment, args.kind, args.notebook)
        return 0
    if args.step == "roster":
        path = os.path.join(args.sim, "roster.csv")
        write_roster(args.students, path)
        print(f"inside-vmap: wrote {path}: {args.students} simulated students, as a Canvas "
              "gradebook export lists them")
        return 0
    submit_class(os.path.abspath(args.course), os.path.abspath(args.sim))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
