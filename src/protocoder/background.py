"""Work on a second core: a forked child computes a value and hands it back pickled.

Loading a large review is pure-Python parsing, so threads would not run it in parallel.
A forked child shares the parent's memory at the moment of the fork (nothing to send it)
and only its result crosses a pipe. Forking is used only where it is safe and pays: on
Linux, with two or more usable cores of which one is idle at the moment, and while the
process runs no other thread (a fork copies just the calling thread, so a lock another
thread held would stay locked forever in the child; the coding app runs workers, and
always takes the serial path).

Whatever goes wrong in the child (an exception, a kill, a result that does not pickle)
the parent computes the value itself: the outcome never depends on whether a fork was
used, only the time does. The functions run in a child must only read.
"""

from __future__ import annotations

import os
import pickle
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from typing import Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")

SERIAL_ENV = "PROTOCODER_SERIAL"
"""Set (to anything) to never fork: for debugging, profiling and measuring the difference."""


def fork_is_useful() -> bool:
    """Whether a forked child could run beside this process, safely, on a core of its own."""
    if not sys.platform.startswith("linux") or os.environ.get(SERIAL_ENV):
        return False
    if threading.active_count() != 1:
        return False
    try:
        return len(os.sched_getaffinity(0)) >= 2
    except OSError:  # pragma: no cover - affinity is always readable on Linux
        return False


LOADAVG = "/proc/loadavg"
"""Its fourth field is ``R/T``: R scheduling entities ready to run on the machine now (this one among them)."""


def core_free() -> bool:
    """Whether a core is idle at this moment: fewer tasks ready to run than this process may use.

    A child forked onto a core that other processes keep busy takes turns with them: the work
    takes as long as on one core, and the fork, the copied pages and the pickled result cost
    CPU time on top (at 1,000 protocols, ``validate`` forking on a machine with both cores
    busy took 5% longer than serially, in wall time and in CPU time). So a fork waits for an
    idle core; where the count cannot be read, one is assumed.
    """
    try:
        with open(LOADAVG, "rb") as handle:
            ready = int(handle.read().split()[3].split(b"/")[0])
        return ready < len(os.sched_getaffinity(0))
    except (OSError, ValueError, IndexError):
        return True


class Pending(Generic[T]):
    """A value being computed in a forked child (or, without one, computed on request)."""

    def __init__(self, compute: Callable[[], T], *, fork: bool = True) -> None:
        self._compute = compute
        self._pid = 0
        self._read_fd = -1
        if fork and fork_is_useful() and core_free():
            self._start()

    def _start(self) -> None:
        read_fd, write_fd = os.pipe()
        try:
            pid = os.fork()
        except OSError:
            os.close(read_fd)
            os.close(write_fd)
            return
        if pid == 0:  # the child: compute, send, and leave without running the parent's exit code
            status = 1
            try:
                os.close(read_fd)
                payload = pickle.dumps(self._compute(), protocol=pickle.HIGHEST_PROTOCOL)
                with open(write_fd, "wb") as pipe:
                    pipe.write(payload)
                status = 0
            finally:
                os._exit(status)
        os.close(write_fd)
        self._pid, self._read_fd = pid, read_fd

    def result(self) -> T:
        """The value: the child's if it delivered one, else computed here and now."""
        if self._pid:
            # The file object owns the descriptor from here on: if Ctrl-C interrupts the read,
            # it closes it, and cancel() must not close that number a second time.
            read_fd, self._read_fd = self._read_fd, -1
            with open(read_fd, "rb") as pipe:
                payload = pipe.read()
            _, status = os.waitpid(self._pid, 0)
            self._pid = 0
            if status == 0:
                try:
                    return pickle.loads(payload)  # noqa: S301 - our own child wrote it a moment ago
                except Exception:  # noqa: BLE001 - fall back to computing it here
                    pass
        return self._compute()

    def cancel(self) -> None:
        """Stop the child, if it is still running, and release its pipe."""
        if self._read_fd >= 0:
            os.close(self._read_fd)
            self._read_fd = -1
        if self._pid:
            with suppress(ProcessLookupError):  # it may have finished already
                os.kill(self._pid, signal.SIGKILL)
            os.waitpid(self._pid, 0)
            self._pid = 0


@contextmanager
def in_background(compute: Callable[[], T], *, fork: bool = True) -> Iterator[Pending[T]]:
    """Start ``compute`` in a child; inside the block, ``.result()`` waits for its value.

    With ``fork=False`` (not worth a process) the value is computed when asked for.
    Leaving the block without asking for the result (an error on the way) stops the child.
    """
    pending = Pending(compute, fork=fork)
    try:
        yield pending
    finally:
        pending.cancel()


def map_in_halves(function: Callable[[T], R], items: Sequence[T], *, min_items: int = 256) -> list[R]:
    """``[function(item) for item in items]``, the second half computed in a forked child.

    Falls back to the plain loop for fewer than ``min_items`` items (a fork costs a few
    milliseconds), wherever :func:`fork_is_useful` says no and while no core is idle
    (:func:`core_free`).
    """
    if len(items) < min_items or not fork_is_useful() or not core_free():
        return [function(item) for item in items]
    middle = len(items) // 2
    second = items[middle:]
    with in_background(lambda: [function(item) for item in second]) as pending:
        first = [function(item) for item in items[:middle]]
        return first + pending.result()
