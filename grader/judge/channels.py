"""The trusted side of a grading kernel's ZeroMQ channels, bounded.

libzmq checks a message's size before it reads it: with ``ZMQ_MAXMSGSIZE`` on every socket, a
kernel sending one larger message is cut off instead of being read into nbgrader's memory. The
cut is silent (that channel then hears nothing more), so the client watches its sockets for it.
"""
from __future__ import annotations

import zmq
import zmq.asyncio
from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_client.manager import AsyncKernelManager
from traitlets import DottedObjectName, Int, Type, default


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

    def client(self, **kwargs):
        kwargs.setdefault("max_message_bytes", self.max_message_bytes)
        return super().client(**kwargs)


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
