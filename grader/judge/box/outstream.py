"""The grading kernel's stdout and stderr: ipykernel's ``OutStream``, holding and sending at most
``PIECE_CHARS`` characters between two flushes.

ipykernel sends all a stream holds at each flush as one message, so a loop printing faster than
its I/O thread flushes (or one large print) makes one message of any size, held in the kernel's
memory until then; the trusted process refuses a message over ``BoundedExecute.output_hard_mb``
unread, and must then stop the kernel (that channel hears nothing more). Cut here, in the
kernel, an honest flood never gets there: the head of what each flush would send is kept, with
a note, the rest is dropped as it is written, and the kernel runs on. ``BoundedExecute``
chooses this class (``--IPKernelApp.outstream_class``); it runs in the kernel.
"""
from __future__ import annotations

from ipykernel.iostream import OutStream

# Characters kept of one flush. A character takes at most 6 bytes in the message's JSON (an
# escaped control character), so a piece stays under 2 MiB, the smallest output_hard_mb allowed.
PIECE_CHARS = 256 * 1024
NOTE = f"\n[output cut: more than {PIECE_CHARS // 1024} KiB printed at once]\n"


def cut(data: str) -> str:
    """One flush's text, its note added when it was cut (it holds ``PIECE_CHARS``)."""
    return data if len(data) < PIECE_CHARS else data[:PIECE_CHARS] + NOTE


class CutOutStream(OutStream):
    def write(self, string: str) -> int | None:
        if isinstance(string, str):
            with self._buffer_lock:
                held = self._buffers[frozenset(self.parent_header.items())].tell()
            if held >= PIECE_CHARS:      # full until the next flush: dropped, never held
                return len(string)
            if len(string) > PIECE_CHARS - held:
                super().write(string[:PIECE_CHARS - held])
                return len(string)
        return super().write(string)

    def _flush_buffers(self):
        for parent, data in super()._flush_buffers():
            yield parent, cut(data)
