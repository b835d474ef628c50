"""The instructor's side of the course, on top of nbgrader's own commands.

* `autograde`: ``python -m grader.instructor autograde`` (``make autograde``) grades every collected
  submission one student at a time with nbgrader's ``Autograde`` converter, so one bad submission
  never stops the batch, and records each outcome in the gradebook's grading status
  (`grader.nbgrader_plugins.GradingStatus`).
* `failed_feedback`: ``python -m grader.instructor failed-feedback`` (``make feedback``, after nbgrader's
  ``generate_feedback``) writes a calm page for every failed submission, released with the others.
* the simulated class that ``make demo`` and the end-to-end tests run through a whole term is
  development tooling outside the package: ``tools/classroom/`` (and ``tools/bench/``).

Every process of these tools (the commands, ``bin/nbgrader``, autograde's spawned workers) starts
without ``rfc3987_syntax``: jsonschema imports it, when installed, for its optional ``iri`` format
check, and its import builds 39 Lark grammars, 1 to 4 s of every nbgrader start-up here (half of
``bin/nbgrader db student list``; docs/performance.md). Nothing nbgrader runs checks that format
(nbformat validates without a format checker), and jsonschema does without it.
"""
import sys

sys.modules.setdefault("rfc3987_syntax", None)   # import -> ImportError, which jsonschema skips
