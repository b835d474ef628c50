"""``python -m grader.instructor COMMAND ...``, run from the course folder (the Makefile's targets):

  autograde [ASSIGNMENT ...] [--force] [--jobs N] [nbgrader options]   make autograde
  failed-feedback [ASSIGNMENT ...]                                     make feedback (with nbgrader's)
  roster FILE [--id-column=COLUMN]                                     make roster FILE=...
  term                                                                 make term
  class roster --students N --sim DIR | class submit --sim DIR         make class-roster / class-submit
  class try --sim DIR --assignment A [--student ID] [--kind K | --notebook FILE]   make try-submit
  demo [--keep DIR] [--timeout SECONDS]                                make demo
  nbgrader ARGS...                                                     bin/nbgrader ARGS..."""
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
    if command == "class":
        from .simclass import main as class_main
        return class_main(argv)
    if command == "demo":
        from .demo import demo_main
        return demo_main(argv)
    print(__doc__.strip())
    return 0 if command in ("help", "-h", "--help") else 2


if __name__ == "__main__":
    sys.exit(main())
