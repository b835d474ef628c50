"""``python -m grader.instructor autograde [ASSIGNMENT ...] [--force] [nbgrader options]``
``python -m grader.instructor demo [--keep DIR] [--timeout SECONDS]``"""
import sys


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    command = argv.pop(0) if argv else "help"
    if command == "autograde":
        from .autograde import AutogradeEach
        AutogradeEach.launch_instance(argv)
        return 0
    if command == "demo":
        from .classroom import demo_main
        return demo_main(argv)
    print(__doc__.strip())
    return 0 if command in ("help", "-h", "--help") else 2


if __name__ == "__main__":
    sys.exit(main())
