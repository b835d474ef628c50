"""``make term``: the term's settings as nbgrader reads them from ``course/nbgrader_config.py``,
and the configured due dates written into the gradebook (``make assign`` runs it too).

One place for the settings means one place to read them back: the course id, the gradebook, the
exchange (and whether students can write to it), the due dates and the late policy.
"""
from __future__ import annotations

import os
import stat

from nbgrader.api import Gradebook
from nbgrader.apps.baseapp import NbGrader, nbgrader_aliases, nbgrader_flags
from nbgrader.exchange.default.exchange import Exchange
from nbgrader.preprocessors import AssignLatePenalties
from traitlets import default

from ..nbgrader_plugins import DueDates, PercentPerDay, record_due_dates


class TermApp(NbGrader):
    name = "inside-vmap-term"
    description = "Show the term's settings and write the configured due dates into the gradebook."
    aliases = nbgrader_aliases
    flags = nbgrader_flags

    @default("classes")
    def _classes_default(self):
        return super()._classes_default() + [DueDates, PercentPerDay, TermApp]

    def start(self) -> None:
        super().start()
        cd = self.coursedir
        say = lambda text: print(f"term: {text}", flush=True)   # noqa: E731
        say(f"course id {cd.course_id!r}; course folder {cd.root}")
        say(f"gradebook {cd.db_url}")
        root = Exchange(coursedir=cd, authenticator=None, parent=self).root
        say(f"exchange {root} ({exchange_state(root)})")
        dates = DueDates(parent=self).dates
        with Gradebook(cd.db_url, cd.course_id) as gb:
            for line in record_due_dates(gb, dates):
                say(f"due date recorded in the gradebook: {line}")
            known = {a.name: a.duedate for a in gb.assignments}
        for name in sorted(set(known) | set(dates)):
            if name in known:
                say(f"due {name}: {known[name] or 'none'}" + (" UTC" if known[name] else ""))
            else:
                say(f"due {name}: {dates[name]} (not in the gradebook yet: `make assign`)")
        late = AssignLatePenalties(parent=self).plugin_class(parent=self)
        say("late policy: " + (late.describe() if hasattr(late, "describe") else
                               f"{type(late).__name__} (penalty_method "
                               f"{getattr(late, 'penalty_method', '?')})"))


def exchange_state(root: str) -> str:
    """Whether students can use the exchange: nbgrader wants it to exist and be writable by all."""
    if not os.path.isdir(root):
        return ("missing: `make assign` creates it where it may; on a shared machine, as root: "
                f"mkdir -p {root} && chmod ugo+rw {root}")
    mode = os.stat(root).st_mode
    if (mode & 0o777) & stat.S_IWOTH and (mode & 0o777) & stat.S_IXOTH:
        return "exists, writable by every user"
    return (f"exists, mode {oct(mode & 0o777)}: students cannot write to it; as its owner: "
            f"chmod ugo+rw {root}")
