"""The trusted side of a grading kernel's ZeroMQ channels, bounded.

libzmq checks a message's size before it reads it: with ``ZMQ_MAXMSGSIZE`` on every socket, a
kernel sending one larger message is cut off instead of being read into nbgrader's memory. The
cut is silent (that channel then hears nothing more), so the client watches its sockets for it.
"""
from __future__ import annotations

import json
import os

import zmq
import zmq.asyncio
from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_client.manager import AsyncKernelManager
from traitlets import Bool, DottedObjectName, Int, Type, default


class BoundedKernelClient(AsyncKernelClient):
    """A client whose sockets cut off a kernel sending any message over ``max_message_bytes``
    (libzmq checks the size before it reads the message), and that notices when one did."""
    max_message_bytes = Int(-1, help="Largest message accepted, in bytes (-1: any).")

    @default("context")
    def _context_default(self):
        self._created_context = True
        context = zmq.asyncio.Context()
        context.setsockopt(zmq.MAXMSGSIZE, self.max_message_bytes)
        return context

    def start_channels(self, *args, **kwargs) -> None:
        super().start_channels(*args, **kwargs)
        self._monitors = []
        for channel in (self.iopub_channel, self.shell_channel):
            mon = channel.socket.get_monitor_socket(zmq.EVENT_DISCONNECTED)
            self._monitors.append((mon, zmq.Socket.shadow(mon.underlying)))
        self._cut = False

    def cut_off(self) -> bool:
        """Whether a channel dropped the kernel since the channels started (only one thread,
        the watchdog's, ever calls this)."""
        for _, mon in getattr(self, "_monitors", ()):
            while not self._cut and mon.poll(0):
                mon.recv_multipart()
                self._cut = True
        return getattr(self, "_cut", False)


class BoundedKernelManager(AsyncKernelManager):
    client_class = DottedObjectName("grader.judge.channels.BoundedKernelClient")
    client_factory = Type(klass=BoundedKernelClient)
    max_message_bytes = Int(-1, help="Passed to every client it makes.")
    fork_kernel = Bool(False, help="Fork the sandboxed grading kernel from a zygote that has "
                                   "imported JAX and ipykernel (grader.judge.kernel.forked), "
                                   "in the same box and limits; where none starts, launch it "
                                   "as usual.").tag(config=True)

    def client(self, **kwargs):
        kwargs.setdefault("max_message_bytes", self.max_message_bytes)
        return super().client(**kwargs)

    async def _async_launch_kernel(self, kernel_cmd, **kw):
        # jupyter_client's documented place to launch a kernel differently.
        process = None
        if self.fork_kernel:
            from . import kernel
            with open(self.connection_file) as fh:
                connection = json.load(fh)
            process = kernel.forked(kernel_cmd, kw.get("cwd"), kw.get("env") or os.environ,
                                    connection)
        if process is None:
            return await super()._async_launch_kernel(kernel_cmd, **kw)
        p = self.provisioner
        p.process, p.pid, p.pgid, p.cwd = process, process.pid, None, kw.get("cwd")
        self._reconcile_connection_info(p.connection_info)

    async def _async_cleanup_resources(self, restart: bool = False) -> None:
        # A kernel found dead is never waited for (nbclient goes straight here): a forked one
        # is reaped now, so its zygote serves the next.
        from . import forked, pool
        process = getattr(self.provisioner, "process", None)
        if isinstance(process, forked.Kernel):
            if process.poll() is None:
                process.kill()
            process.wait(pool.REPLY_S)
        await super()._async_cleanup_resources(restart=restart)

    cleanup_resources = _async_cleanup_resources     # AsyncKernelManager's public name for it


def size(content) -> int:
    """Characters of every string in a message's content (plus 8 per other value)."""
    total, todo = 0, [content]
    while todo:
        item = todo.pop()
        if isinstance(item, (str, bytes)):
            total += len(item)
        elif isinstance(item, dict):
            todo.extend(item.keys())
            todo.extend(item.values())
        elif isinstance(item, (list, tuple)):
            todo.extend(item)
        else:
            total += 8
    return total
