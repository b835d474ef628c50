"""nbgrader configuration for the Inside vmap course.

Run nbgrader from this folder (`cd course && nbgrader ...`) or through the Makefile targets.
The source assignments live in ../exercises so the repository's top level stays recognisable.
"""
import os

c = get_config()  # noqa: F821  (provided by nbgrader)

HERE = os.path.dirname(os.path.abspath(__file__))

c.CourseDirectory.course_id = "inside-vmap"
c.CourseDirectory.root = HERE
c.CourseDirectory.source_directory = os.path.join("..", "exercises")
c.CourseDirectory.db_url = "sqlite:///" + os.path.join(HERE, "gradebook.db")

# A kernel of this course's own name, installed into the venv by `make setup`, so no user-level
# kernelspec can change the interpreter that grades.
c.ExecutePreprocessor.kernel_name = "inside-vmap"
c.Execute.timeout = 60
c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}
