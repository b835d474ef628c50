"""Tests of lesson 4's package, grader/lessons/l4_vmap_meets_autodiff/."""
