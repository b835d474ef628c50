"""Tests of grader/lessons/, one folder per lesson package and one file per module.

A package (not bare folders) because the two lessons have modules of the same name
(selfchecks, figures, kit), and pytest imports test files by their package path.
"""
