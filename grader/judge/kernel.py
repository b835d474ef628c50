"""A Jupyter kernel in the judge's sandbox, for executing submissions during autograde.

Installed as the kernelspec ``inside-vmap-sandboxed`` (``python -m grader.judge.kernel --install``)
and chosen by ``c.Execute.kernel_name`` in course/nbgrader_config.py. The kernel sees the
interpreter, the ``grader`` package and the submission's own folder; not the course source, other
submissions or the gradebook. With ZeroMQ over unix sockets (``KernelManager.transport='ipc'``)
it also runs without a network; over TCP it must keep the network to reach nbgrader, and says so.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

from . import sandbox

NAME = "inside-vmap-sandboxed"


def command(connection_file: str, cwd: str, extra: list[str] = ()) -> list[str]:
    with open(connection_file) as fh:
        info = json.load(fh)
    box = sandbox.bwrap_prefix(share_net=info.get("transport") != "ipc", cwd=cwd)
    # ipykernel polls its parent's pid; inside a new pid namespace that pid means nothing.
    box += ["--unsetenv", "JPY_PARENT_PID"]
    conn = os.path.abspath(connection_file)
    box += ["--ro-bind", conn, conn]
    if info.get("transport") == "ipc":
        ipc_dir = os.path.dirname(os.path.abspath(info["ip"]))
        box += ["--bind", ipc_dir, ipc_dir]
    else:
        print("inside-vmap: kernel sandbox keeps the network (ZeroMQ over TCP); set "
              "KernelManager.transport='ipc' to remove it", file=sys.stderr)
    return box + [sys.executable, "-m", "ipykernel_launcher", "-f", connection_file, *extra]


def install(prefix: str = sys.prefix) -> str:
    from jupyter_client.kernelspec import KernelSpecManager
    import tempfile
    spec = {"argv": [sys.executable, "-m", "grader.judge.kernel", "{connection_file}"],
            "display_name": "Python (inside-vmap, sandboxed for grading)", "language": "python",
            "env": {"JAX_PLATFORMS": "cpu"}}
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "kernel.json"), "w") as fh:
            json.dump(spec, fh, indent=1)
        return KernelSpecManager().install_kernel_spec(tmp, NAME, prefix=prefix)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("connection_file", nargs="?")
    parser.add_argument("--install", action="store_true", help="install the kernelspec into sys.prefix")
    args, extra = parser.parse_known_args(argv)   # the rest is for ipykernel
    if args.install:
        print("installed", install())
        return
    if not sandbox.available():
        print("inside-vmap: bubblewrap unavailable; the grading kernel runs WITHOUT a sandbox",
              file=sys.stderr)
        os.execv(sys.executable, [sys.executable, "-m", "ipykernel_launcher", "-f",
                                  args.connection_file, *extra])
    cmd = command(args.connection_file, os.getcwd(), extra)
    os.execvp(cmd[0], cmd)


if __name__ == "__main__":
    main()
