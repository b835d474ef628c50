"""``python -m tools.bench``: `make bench` (see this package's docstring)."""
import sys

from . import main

sys.exit(main())
