"""Inside vmap: the checks behind the course's exercises.

`grader.core` is the only part that looks inside JAX's private modules; the lesson packages
(`grader.lessons.l<N>_<name>`, one per lesson, found by `grader.lessons.packages()`) ask it, never
JAX's internals. grader/README.md draws the layout and the three paths through it. This module
imports nothing: the judge's child, which holds only the lessons' kits, imports it too.
"""
