"""A Jupyter kernel in the judge's sandbox, for executing submissions during autograde.

Installed as the kernelspec ``inside-vmap-sandboxed`` (``python -m grader.judge.kernel --install``)
and chosen by ``c.BoundedExecute.kernel_name`` in course/nbgrader_config.py (autograde only). The kernel sees the
interpreter, the ``grader`` package and the submission's own folder; not the course source, other
submissions or the gradebook. With ZeroMQ over unix sockets (``KernelManager.transport='ipc'``)
it also runs without a network; over TCP it must keep the network to reach nbgrader, and says so.

It starts with an allow-listed environment (``ENV_KEEP``, plus a fixed HOME and PYTHONPATH), not
the instructor's, and under the limits ``execute.BoundedExecute`` passes it as
``--inside-vmap-limits=JSON``: a cgroup to join and rlimits (``confine.py``), and the size of
its tmpfs. Started without that option (plain ``Execute``), it is boxed but not limited.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

from . import sandbox
from .box import confine, seccomp

NAME = "inside-vmap-sandboxed"
LIMITS_ARG = "--inside-vmap-limits"
# What the kernel keeps of the environment it is started with: what ipykernel, JAX and
# matplotlib read. Anything else (the instructor's tokens, paths, database URLs) stays out.
ENV_KEEP = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "JAX_PLATFORMS", "JAX_ENABLE_X64",
            "XLA_FLAGS", "MPLBACKEND", "PYTHONHASHSEED")


def environment(source: dict, keep=ENV_KEEP) -> dict:
    """The kernel's whole environment: ``keep``'s names from ``source``, and fixed values.
    (JPY_PARENT_PID is never kept: inside a new pid namespace that pid means nothing.)"""
    env = {k: source[k] for k in keep if k in source and k != "JPY_PARENT_PID"}
    return dict(env, HOME="/tmp", PYTHONPATH=sandbox.kits(), PYTHONDONTWRITEBYTECODE="1",
                PYDEVD_DISABLE_FILE_VALIDATION="1")


def command(connection_file: str, cwd: str, extra: list[str] = (), env: dict | None = None,
            tmpfs_mb: int = sandbox.Limits.tmpfs_mb, seccomp_fd: int | None = None) -> list[str]:
    with open(connection_file) as fh:
        info = json.load(fh)
    # The submission's folder is read-only to the kernel: what it wrote there (a link to the
    # gradebook, say) nbgrader would later write through, or copy into the student's feedback.
    box = sandbox.bwrap_prefix(share_net=info.get("transport") != "ipc", cwd=cwd,
                               tmpfs_mb=tmpfs_mb, writable_cwd=False, seccomp_fd=seccomp_fd)
    box += ["--clearenv"]
    for name, value in (environment(os.environ) if env is None else env).items():
        box += ["--setenv", name, value]
    conn = os.path.abspath(connection_file)
    box += ["--ro-bind", conn, conn]
    if info.get("transport") == "ipc":
        ipc_dir = os.path.dirname(os.path.abspath(info["ip"]))
        box += ["--bind", ipc_dir, ipc_dir]
    else:
        print("inside-vmap: kernel sandbox keeps the network (ZeroMQ over TCP); set "
              "KernelManager.transport='ipc' to remove it", file=sys.stderr)
    return sandbox.sealed(box) + [sys.executable, "-m", "ipykernel_launcher", "-f",
                                  connection_file, *extra]


def forked(kernel_cmd: list[str], cwd: str | None, source_env: dict, connection: dict):
    """The kernel ``kernel_cmd`` would start, forked from a zygote that has imported JAX and
    ipykernel (``forked.kernel``) in the same box, limits and environment; ``None`` where that
    does not apply (not this kernelspec, no limits, no box) or no zygote starts, and the
    kernel is then launched as usual."""
    try:
        at = kernel_cmd.index(__name__)
    except ValueError:
        return None
    rest = kernel_cmd[at + 2:]                     # after the connection file
    limits = [a for a in rest if a.startswith(LIMITS_ARG + "=")]
    if kernel_cmd[at - 1:at] != ["-m"] or len(limits) != 1:
        return None
    spec = json.loads(limits[0].partition("=")[2])
    if spec.get("kits") and spec["kits"] != sandbox.kits():
        return None
    if spec.get("sandbox", "auto") == "none" or not sandbox.available():
        return None
    from . import forked as zygotes
    env = environment(source_env, spec.get("env", ENV_KEEP))
    return zygotes.kernel(connection, cwd or os.getcwd(), [a for a in rest if a not in limits],
                          env, spec.get("tmpfs_mb", sandbox.Limits.tmpfs_mb),
                          spec.get("confine", {}))


def install(prefix: str = sys.prefix) -> str:
    import tempfile

    from jupyter_client.kernelspec import KernelSpecManager
    spec = {"argv": [sys.executable, "-m", "grader.judge.kernel", "{connection_file}"],
            "display_name": "Python (inside-vmap, sandboxed for grading)", "language": "python",
            "env": {"JAX_PLATFORMS": "cpu"}}
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "kernel.json"), "w") as fh:
            json.dump(spec, fh, indent=1)
        return KernelSpecManager().install_kernel_spec(tmp, NAME, prefix=prefix)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], allow_abbrev=False)
    parser.add_argument("connection_file", nargs="?")
    parser.add_argument("--install", action="store_true", help="install the kernelspec into sys.prefix")
    parser.add_argument(LIMITS_ARG, default="{}", help="limits, as JSON (execute.BoundedExecute)")
    args, extra = parser.parse_known_args(argv)   # the rest is for ipykernel
    if args.install:
        print("installed", install())
        return
    limits = json.loads(args.inside_vmap_limits)
    if limits.get("kits"):                       # the grading process's kit tree, not a new one
        os.environ[sandbox.KITS_ENV] = limits["kits"]
    env = environment(os.environ, limits.get("env", ENV_KEEP))
    confine.apply(limits.get("confine", {}))      # everything started from here on is limited
    wanted = limits.get("sandbox", "auto")
    boxed = wanted != "none" and sandbox.available()
    if wanted == "bwrap" and not boxed:
        sys.exit("inside-vmap: sandbox='bwrap' but bubblewrap does not work here")
    if not boxed:
        if wanted != "none":
            print("inside-vmap: bubblewrap unavailable; the grading kernel runs WITHOUT a "
                  "sandbox", file=sys.stderr)
        _detach_output()
        os.execve(sys.executable, [sys.executable, "-m", "ipykernel_launcher", "-f",
                                   args.connection_file, *extra], env)
    cmd = command(args.connection_file, os.getcwd(), extra, env,
                  limits.get("tmpfs_mb", sandbox.Limits.tmpfs_mb), seccomp.memfd())
    _detach_output()
    # bubblewrap itself gets the kernel's environment, not the grading process's: its pid 1 in
    # the box is readable there (/proc/1/environ; the fifth red-team round's second look).
    os.execvpe(cmd[0], cmd, env)                  # the filter's fd is inherited: bwrap reads it


def _detach_output() -> None:
    """The kernel writes its own stdout and stderr (outside the notebook's messages) nowhere:
    they are the grading process's, its log among them, whose flags and size a kernel holding
    them could change (the fifth red-team round truncated autograde.log so)."""
    sys.stdout.flush()
    sys.stderr.flush()
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    os.close(null)


if __name__ == "__main__":
    main()
