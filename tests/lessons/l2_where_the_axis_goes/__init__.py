"""Tests of lesson 2's package, grader/lessons/l2_where_the_axis_goes/."""
