"""Tests of lesson 1's package, grader/lessons/l1_rule_per_primitive/."""
