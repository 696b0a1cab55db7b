"""Where a served session's key spends its time: timestamps from inside the app process, for
``benchmarks/bench_serve.py --trace``.

Off unless ``$PROTOCODER_SERVE_TRACE`` names a file: then each session's app process appends
one line per event to it (``monotonic-seconds session event detail``; one ``write`` per line
on a file opened for appending, so the lines of twenty processes do not mix). Linux's
monotonic clock is the same in every process, so the benchmark's own times (the key sent,
the code seen on disk) line up with these. Events:

* ``key-in``: the key reached the app process (its input thread parsed it);
* ``key-app``: the app's event loop began handling it (the wait between is the loop busy);
* ``write-start`` / ``write-end``: the save of one edit, in the saving thread;
* ``lock-wait`` / ``lock-got`` / ``lock-free``: the workspace write lock, within the save;
* ``frame``: screen output written to the server (detail: bytes);
* ``gc``: a collection by Python's garbage collector that took over a millisecond (detail: its
  generation and milliseconds).

Nothing here runs, nor is imported, when the variable is not set.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from typing import Any

TRACE_ENV = "PROTOCODER_SERVE_TRACE"
"""The environment variable naming the trace file."""


class Tracer:
    """Appends timestamped events of one session to the trace file."""

    def __init__(self, path: str, session: str) -> None:
        self.fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        self.session = session

    def event(self, name: str, detail: object = "") -> None:
        """Record ``name`` now (one ``write`` call: lines of concurrent processes stay whole)."""
        os.write(self.fd, f"{time.monotonic():.6f} {self.session} {name} {detail}\n".encode())


def install(session: str) -> Tracer | None:
    """Trace this app process as ``session`` when :data:`TRACE_ENV` is set; None otherwise."""
    path = os.environ.get(TRACE_ENV)
    if not path:
        return None
    tracer = Tracer(path, session)
    _hook_keys(tracer)
    _hook_saves(tracer)
    _hook_gc(tracer)
    return tracer


def _hook_gc(tracer: Tracer) -> None:
    import gc

    started = [0.0]

    def collected(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started[0] = time.monotonic()
        elif (took := time.monotonic() - started[0]) > 0.001:
            tracer.event("gc", f"{info.get('generation')}/{1000 * took:.1f}")

    gc.callbacks.append(collected)


def _hook_keys(tracer: Tracer) -> None:
    from textual import events
    from textual.app import App
    from textual.drivers.web_driver import WebDriver

    process_message, on_event, write = WebDriver.process_message, App.on_event, WebDriver.write

    def traced_process_message(self: WebDriver, message: Any) -> None:
        if isinstance(message, events.Key):
            tracer.event("key-in", message.key)
        process_message(self, message)

    async def traced_on_event(self: App[Any], event: events.Event) -> None:
        if isinstance(event, events.Key) and not event.is_forwarded:
            tracer.event("key-app", event.key)
        await on_event(self, event)

    def traced_write(self: WebDriver, data: str) -> None:
        write(self, data)
        if len(data) > 64:  # frames, not the mode switches of start-up
            tracer.event("frame", len(data.encode("utf-8")))

    WebDriver.process_message = traced_process_message  # type: ignore[method-assign]
    App.on_event = traced_on_event  # type: ignore[method-assign]
    WebDriver.write = traced_write  # type: ignore[method-assign]


def _hook_saves(tracer: Tracer) -> None:
    from ...storage import writer
    from ..session import Session

    write, locked = Session.write, writer.Writer.locked

    def traced_write(self: Session, edit: Any) -> str:
        tracer.event("write-start")
        try:
            return write(self, edit)
        finally:
            tracer.event("write-end")

    @contextlib.contextmanager
    def traced_locked(self: writer.Writer, **kwargs: Any) -> Iterator[None]:
        tracer.event("lock-wait")
        with locked(self, **kwargs):
            tracer.event("lock-got")
            try:
                yield
            finally:
                tracer.event("lock-free")

    from ..app import CoderApp
    from ..saving import Saver

    queue_edit, saver_write = CoderApp.queue_edit, Saver._write

    def traced_queue_edit(self: CoderApp, edit: Any) -> None:
        tracer.event("queued")
        queue_edit(self, edit)

    async def traced_saver_write(self: Saver, key: Any, edit: Any) -> bool:
        tracer.event("saver")
        return await saver_write(self, key, edit)

    CoderApp.queue_edit = traced_queue_edit  # type: ignore[method-assign]
    Saver._write = traced_saver_write  # type: ignore[method-assign]
    Session.write = traced_write  # type: ignore[method-assign]
    writer.Writer.locked = traced_locked  # type: ignore[method-assign]
