"""nbgrader started from the repository's top level uses the course in course/.

Jupyter's nbgrader extensions read nbgrader_config.py from the folder the server starts in, so this
is what makes `make lab`'s formgrader (Nbgrader > Formgrader) open on this course; `nbgrader ...`
typed here works too. The configuration itself is course/nbgrader_config.py.
"""
c = get_config()  # noqa: F821  (provided by nbgrader)
load_subconfig("course/nbgrader_config.py")  # noqa: F821  (relative to this file's folder)
