"""Warm a grading run's compilation cache by judging the instructor's solutions first.

A judge child spends most of its time compiling: every hidden case runs JAX on new shapes, and
XLA compiles each program in ~15 ms. When every child of a run draws the same hidden cases (one
seed per run), a correct answer compiles mostly the same programs for every student, so a
trusted child judges the instructor's source notebooks on those cases with the cache writable,
and the students' children then read it (never write it; see ``sandbox.CompileCache``).

It also checks the course: a solution that fails its own hidden cases is a bug in a lesson
module, reported here before any student is graded on it.
"""
from __future__ import annotations

import concurrent.futures as cf
from dataclasses import dataclass

import nbformat

from . import runner, sandbox


@dataclass(frozen=True)
class Warmed:
    """What the warm-up found for one source notebook."""
    key: str
    failed: tuple[str, ...]          # grade ids the instructor's solution did not pass
    error: str = ""                  # why the notebook could not be judged at all


def warm_one(key: str, path: str, seed: int, cache: sandbox.CompileCache,
             limits: sandbox.Limits, use_bwrap: bool) -> Warmed:
    try:
        nb = nbformat.read(path, as_version=4)
    except Exception as err:  # an unreadable source is reported, grading goes on uncached
        return Warmed(key, (), f"{type(err).__name__}: {err}"[:200])
    verdicts = runner.judge(nb, limits, use_bwrap, runner.cases_rng(seed, key), cache)
    return Warmed(key, tuple(g for g, r in verdicts.items() if not r.passed))


def warm(notebooks: dict[str, str], seed: int, cache_dir: str, limits: sandbox.Limits,
         use_bwrap: bool, jobs: int = 1) -> list[Warmed]:
    """Judge every ``{case key: source notebook path}`` on the cases ``seed`` gives, ``jobs`` at
    once, writing what they compile into ``cache_dir``."""
    writer = sandbox.CompileCache(cache_dir, writable=True)
    with cf.ThreadPoolExecutor(max(1, jobs)) as pool:   # each judge is a subprocess
        futures = [pool.submit(warm_one, k, p, seed, writer, limits, use_bwrap)
                   for k, p in notebooks.items()]
        return [f.result() for f in futures]
