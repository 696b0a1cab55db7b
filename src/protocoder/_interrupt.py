"""Ctrl-C in the command line: one line, exit status 130, never a traceback.

While the process starts (imports take most of a short command's time), an interrupt ends
it at once: nothing has been written yet. Once a command runs, an interrupt unwinds it as an
:class:`Interrupted` exception, so that temporary files are removed and locks released on
the way out; the command line's group catches it (click would otherwise turn a
KeyboardInterrupt into "Aborted!" and exit status 1).

Only the command line installs these handlers (``protocoder/__init__.py``, first thing): importing
protocoder as a library leaves a notebook's Ctrl-C alone.
"""

from __future__ import annotations

import signal
from typing import Any

MESSAGE = "protocoder: interrupted"
EXIT_STATUS = 130  # 128 + SIGINT, as shells report a process ended by Ctrl-C


class Interrupted(BaseException):
    """Ctrl-C while a command runs (a BaseException, like KeyboardInterrupt: ``except Exception``
    blocks do not swallow it)."""


def _unwind(signum: int, frame: Any) -> None:
    raise Interrupted


def unwind_on_interrupt() -> bool:
    """When start-up installed protocoder's handler, make Ctrl-C raise :class:`Interrupted`
    instead (a command is about to run); True if it did."""
    from . import interrupted_while_starting

    try:
        if signal.getsignal(signal.SIGINT) is interrupted_while_starting:
            signal.signal(signal.SIGINT, _unwind)
            return True
    except (ValueError, OSError):
        pass
    return False
