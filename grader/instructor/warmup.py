"""One secret seed per autograde run, and a compilation cache warmed on it where that pays:
before the first student the instructor's solutions are judged on the run's hidden cases, and the
cache they fill is mounted read-only into every student's judge child (`grader.judge.warm`)."""
from __future__ import annotations

import collections
import glob
import os
import secrets
import tempfile
import time

from traitlets.config import Config

from ..judge import runner, warm
from ..judge.preprocessor import JudgeExercises
from . import grading


def run_settings(app, todo, jobs) -> grading.RunSettings:
    """One secret seed for this run's hidden cases, and a cache warmed on it where that
    pays; this process is configured with them, and the workers get them."""
    judge = JudgeExercises(parent=app)
    seed = judge.seed if judge.seed >= 0 else secrets.randbelow(2 ** 63)
    per_assignment = collections.Counter(a for a, _, _ in todo)
    skip = no_warm_up(judge.enabled, app.warm_judge, per_assignment, app.warm_min)
    if skip:
        app.say(f"autograde: no warm-up: {skip}")
    cache = "" if skip else warm_cache(app, judge, sorted(per_assignment), seed, jobs) or ""
    settings = grading.RunSettings(grading.RunSettings.command_line(app), seed, cache,
                                   os.path.join(app.coursedir.root, app.log_name))
    app.update_config(Config(settings.overrides()))
    return settings

def warm_cache(app, judge, assignments, seed, jobs) -> str | None:
    """Judge the instructor's solutions on the run's cases, filling a fresh cache."""
    sources = source_notebooks(app.coursedir, assignments)
    use_bwrap = judge.use_bwrap()
    if not (sources and use_bwrap):   # unboxed children could overwrite a shared cache
        app.say("autograde: no shared compilation cache (" + (
            "no source notebooks" if not sources else "no sandbox to keep it read-only")
            + ")")
        return None
    cache = app.scratch.enter_context(tempfile.TemporaryDirectory(
        prefix="inside-vmap-judge-cache-", ignore_cleanup_errors=True))
    start = time.monotonic()
    found = warm.warm(sources, seed, cache, judge.limits(), use_bwrap, jobs)
    app.say(f"autograde: judged the instructor's solutions on this run's hidden cases "
              f"({time.monotonic() - start:.1f} s)")
    for w in found:
        if w.error or w.failed:
            app.log.error("warm-up: %s: %s", w.key, w.error or f"fails {w.failed}")
            app.say(f"  WARNING {w.key}: " + (
                f"could not be judged: {w.error}" if w.error else
                f"the instructor's solution fails its hidden cases in {', '.join(w.failed)}"
                "; grades of these exercises may be wrong"))
    return cache

def source_notebooks(coursedir, assignments) -> dict[str, str]:
    """``{case key: path}`` of every source notebook of ``assignments``."""
    found = {}
    for a in assignments:
        folder = coursedir.format_path(coursedir.source_directory, ".", a)
        for path in sorted(glob.glob(os.path.join(folder, "*.ipynb"))):
            found[runner.case_key(a, os.path.splitext(os.path.basename(path))[0])] = path
    return found


def no_warm_up(judging: bool, wanted: bool, per_assignment: dict, least: int) -> str | None:
    """Why this run has no warm-up, or None when it has one: it cannot pay unless some
    assignment has ``least`` submissions to grade (its children then share the cache)."""
    if not judging:
        return "the judge is off"
    if not wanted:
        return "--no-warm"
    if max(per_assignment.values(), default=0) < least:
        return (f"no assignment has {least} submissions to grade (AutogradeEach.warm_min), "
                "too few for it to pay")
    return None
