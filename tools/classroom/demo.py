"""``make demo`` (``python -m tools.classroom.demo``): the simulated class of `tools.classroom`
through a whole term in a throw-away course, ending with the grade table and whether every row
is what the scenario expects."""
from __future__ import annotations

import shutil
import tempfile
import time

from . import CLASS, Expected, build_course, expected, run_term


def table(rows: list[dict]) -> str:
    head = ("student", "assignment", "score", "status", "reason")
    body = [(r["student_id"], r["assignment"],
             f"{r['score'] or '-'}/{r['max_score']}", r["status"], r["reason"]) for r in rows]
    widths = [max(len(str(x[i])) for x in [head] + body) for i in range(len(head))]
    line = lambda cells: "  ".join(str(c).ljust(w) for c, w in zip(cells, widths)).rstrip()
    return "\n".join([line(head), line(["-" * w for w in widths])] + [line(b) for b in body])


def demo_main(argv: list[str]) -> int:
    import argparse
    parser = argparse.ArgumentParser(prog="python -m tools.classroom.demo",
                                     description="Run a simulated class through the whole term "
                                                 "in a throw-away copy of the course.")
    parser.add_argument("--keep", metavar="DIR", help="build the course in DIR and keep it")
    parser.add_argument("--timeout", type=int, default=10,
                        help="Execute.timeout, seconds per cell (default 10; the course's own is 60)")
    args = parser.parse_args(argv)
    start = time.monotonic()
    work = args.keep or tempfile.mkdtemp(prefix="inside-vmap-demo-")
    try:
        paths = build_course(work)
        print(f"inside-vmap demo: a simulated class of {len(CLASS)} in {work}")
        for st in CLASS:
            print(f"  {st.id:<5} {st.kind}")
        rows = run_term(paths, CLASS, args.timeout, echo=print)
        print("\n== the grade table (course/grades.csv)\n")
        print(table(rows))
        want = expected(paths)
        wrong = [r for r in rows if _differs(r, want.get((r["assignment"], r["student_id"])))]
        print(f"\ninside-vmap demo: {len(rows)} rows, {len(wrong)} differ from what the "
              f"scenario expects; {time.monotonic() - start:.0f} s in all")
        if args.keep:
            print(f"inside-vmap demo: the course is kept in {work}")
        return 1 if wrong else 0
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


def _differs(row: dict, want: Expected | None) -> bool:
    if want is None:
        return True
    score = None if row["score"] == "" else float(row["score"])
    return (score, float(row["max_score"]), row["status"], row["reason"]) != \
        (want.score, want.max_score, want.status, want.reason)


if __name__ == "__main__":
    import sys
    sys.exit(demo_main(sys.argv[1:]))
