"""The instructor's side of the course, on top of nbgrader's own commands.

* `autograde`: ``python -m grader.instructor autograde`` (``make autograde``) grades every collected
  submission one student at a time with nbgrader's ``Autograde`` converter, so one bad submission
  never stops the batch, and records each outcome in the course's status file
  (`grader.nbgrader_plugins.GradingStatus`).
* `classroom`: a simulated class built from the real assignments, run through release, submit,
  collect, autograde, feedback and export in a throw-away copy of the course
  (``python -m grader.instructor demo``, ``make demo``; also the end-to-end test).
"""
