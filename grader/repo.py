"""Where the course's checkout lies, computed here once for every module that reads its files.

``PACKAGE`` is the ``grader`` package's folder; ``ROOT`` the repository root above it (course/,
exercises/, lessons/). Only the trusted side imports this: the judge's child, which holds just the
kit tree's copy of the package (grader.judge.kit_tree), never reads the checkout.
"""
import os

PACKAGE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(PACKAGE)
