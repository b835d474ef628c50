"""Inside vmap: the checks behind the course's exercises.

`grader.core` is the only part that looks inside JAX's private modules; the lesson modules
(`grader.rule_per_primitive`, `grader.where_the_axis_goes`) ask it, never JAX's internals.
"""
