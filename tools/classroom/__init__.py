"""A simulated class, run through nbgrader from release to export in a throw-away course.

Every submission is built from the real release (``nbgrader generate_assignment``) of the real
exercises: answer cells filled from the source's solution cells (``full``), left as released
(``blank``), filled for the first exercises only (``partial``), or broken in the ways real
submissions break: a kernel that dies (``os._exit(1)``), a loop that ignores SIGINT, notebook JSON
cut in half, a submission without its notebook, a student who never submits. Each step is the
nbgrader command an instructor or student would type, run in-process with the course's
configuration, so the demo and the end-to-end test exercise exactly what a term uses.

Development tooling (``make demo``, the simulated term of ``make class-roster``, ``class-submit``
and ``try-submit``, ``make bench``, the pipeline tests), not part of the installed ``grader``
package: it runs from a checkout and uses grader through its public modules.

The pieces: `course` (the throw-away course's folders, its copy of the exercises, the students'
homes), `students` (the kinds of student, the class, what each hands in and what the export must
say), `term` (each nbgrader step of the term, and ``run_term``), `inprocess` (nbgrader's commands
run in this process). Everything is re-exported here: callers write ``from tools import classroom
as C`` and ``C.build_course(...)``.
"""
from __future__ import annotations

import grader.instructor  # noqa: F401  # isort: skip  (first: it takes jsonschema's IRI grammar out)

from .course import (  # noqa: F401  (re-exported)
    COURSE_ID,
    ROOT,  # also C.ROOT to the bench and the tests
    Paths,
    assignments,
    build_course,
    set_term,
    some_exercises,
    source_notebooks,
    student_home,
    write_student_home,
)
from .inprocess import CommandFailed, Tee, nbgrader  # noqa: F401  (re-exported)
from .students import (  # noqa: F401  (re-exported)
    BLANK,
    CLASS,
    CORRUPT,
    DIES,
    FULL,
    KILL,
    LOOP,
    LOOPS,
    NEVER,
    NO_NB,
    PARTIAL,
    PARTIAL_EXERCISES,
    Expected,
    Student,
    answer,
    exercises_in,
    expected,
    max_score,
    partial_score,
    solutions,
)
from .term import (  # noqa: F401  (re-exported)
    assign,
    autograde,
    collect,
    enrol,
    export,
    feedback,
    grading_status,
    run_term,
    student_args,
    submit_all,
)
