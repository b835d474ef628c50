"""``python -m grader.instructor COMMAND ...``, run from the course folder (the Makefile's targets):

  autograde [ASSIGNMENT ...] [--force] [--jobs N] [nbgrader options]   make autograde
  failed-feedback [ASSIGNMENT ...]                                     make feedback (with nbgrader's)
  roster FILE [--id-column=COLUMN]                                     make roster FILE=...
  term                                                                 make term
  nbgrader ARGS...                                                     bin/nbgrader ARGS...

The simulated class (make demo, class-roster, class-submit, try-submit) and the bench are
development tooling outside the package: tools/classroom/ and tools/bench/."""
import sys


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    command = argv.pop(0) if argv else "help"
    if command == "autograde":
        from .autograde import AutogradeEach
        AutogradeEach.launch_instance(argv)
        return 0
    if command == "failed-feedback":
        from .failed_feedback import FailedFeedback
        FailedFeedback.launch_instance(argv)
        return 0
    if command == "roster":
        from ..nbgrader_plugins.roster import RosterImport
        RosterImport.launch_instance(argv)
        return 0
    if command == "term":
        from .term import TermApp
        TermApp.launch_instance(argv)
        return 0
    if command == "nbgrader":                   # bin/nbgrader: nbgrader's own CLI, started lighter
        from nbgrader.apps.nbgraderapp import main as nbgrader_main
        sys.argv = ["nbgrader", *argv]
        nbgrader_main()
        return 0
    print(__doc__.strip())
    return 0 if command in ("help", "-h", "--help") else 2


if __name__ == "__main__":
    sys.exit(main())
