"""protocoder: documentation reviews of agent-evaluation benchmarks.

The core library (everything outside ``protocoder.tui`` and ``protocoder.cli``) never
imports Textual or click, so notebooks and scripts can use it without a terminal UI.
"""

import _signal  # the C module: `signal` imports enum, which takes long enough to be interrupted
import os as _os
import sys as _sys


def interrupted_while_starting(signum: int, frame: object) -> None:
    """Ctrl-C before the command's own handler is in place: one line, exit 130 (no traceback)."""
    _os.write(2, b"protocoder: interrupted\n")
    _os._exit(130)


# Run as the `protocoder` command (or `python -m protocoder`): Ctrl-C during start-up ends
# with one line and status 130 instead of a traceback from whichever import it hit. First
# thing, and with no import of its own, to leave the smallest window (see _interrupt.py).
if _sys.argv and (_sys.argv[0] == "-m" or _sys.argv[0].replace("\\", "/").rsplit("/", 1)[-1]
                  in ("protocoder", "protocoder.exe", "protocoder-script.py")):
    try:  # noqa: SIM105 - contextlib is one import more
        _signal.signal(_signal.SIGINT, interrupted_while_starting)
    except (ValueError, OSError):  # not the main thread
        pass

__version__ = "0.1.0"
