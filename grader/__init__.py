"""Inside vmap: the checks behind the course's exercises.

`grader.core` is the only part that looks inside JAX's private modules; the lesson packages
(`grader.lessons.l1_rule_per_primitive`, `grader.lessons.l2_where_the_axis_goes`,
`grader.lessons.l3_batching_whole_programs`, `grader.lessons.l4_vmap_meets_autodiff`) ask it, never
JAX's internals. grader/README.md draws the layout and the three paths through it. This module
imports nothing: the judge's child, which holds only the lessons' kits, imports it too.
"""
