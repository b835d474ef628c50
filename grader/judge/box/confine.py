"""The first thing every box runs: join its cgroup, set its rlimits, then exec the box itself.

The judge's child starts as ``python -I -S .../confine.py SPEC CMD...``; the grading
kernel's launcher (``kernel.py``) calls `apply` before it execs bubblewrap, and a child forked
from the zygote (``zygote.py``) calls it for its rlimits (the trusted side moved it into its
group). Doing it here rather than in ``preexec_fn`` matters: the grading process runs JAX's
threads, and forking a threaded process to run Python code can deadlock. Everything the box
starts inherits both the group and the rlimits, and nothing in the box can leave the group (no
/sys in the box, and a new cgroup namespace).
"""
from __future__ import annotations

import json
import os
import resource
import sys

RLIMITS = {"cpu": resource.RLIMIT_CPU, "as": resource.RLIMIT_AS,
           "fsize": resource.RLIMIT_FSIZE, "nproc": resource.RLIMIT_NPROC}


def apply(spec: dict) -> None:
    """Join every ``spec["cgroup"]`` file's group, then lower every ``spec["rlimits"]``."""
    for procs in spec.get("cgroup", ()):
        with open(procs, "w") as fh:
            fh.write(str(os.getpid()))
    for name, value in spec.get("rlimits", {}).items():
        _, hard = resource.getrlimit(RLIMITS[name])
        # CPU: SIGXCPU at the limit (a reason the parent can name), SIGKILL 2 s later if ignored.
        wanted = (value, value + 2) if name == "cpu" else (value, value)
        if hard != resource.RLIM_INFINITY:
            wanted = (min(wanted[0], hard), min(wanted[1], hard))
        resource.setrlimit(RLIMITS[name], wanted)


def main(argv: list[str]) -> None:
    apply(json.loads(argv[1]))
    os.execvp(argv[2], argv[2:])


if __name__ == "__main__":
    main(sys.argv)
