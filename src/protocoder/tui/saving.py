"""The write queue: every edit reaches disk, in order, and nothing is overwritten unseen.

Edits are queued by the screens and written one at a time in a thread (a save takes a
workspace lock and an fsync). A newer edit of the same cell replaces a queued one. When
the file changed on disk since the session read it, the queue stops and asks (through
``resolve``) whether to keep the reviewer's version or take the one on disk; a failed
write stays queued, so nothing typed is dropped.

This module imports no Textual; the app supplies the callbacks that show screens.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from contextlib import suppress
from dataclasses import replace
from datetime import datetime
from enum import Enum

from ..errors import ProtocoderError
from ..model import Cell
from ..storage.store import SheetConflict
from .session import Edit, Session

KEEP_MINE = "mine"
TAKE_THEIRS = "theirs"


class SaveState(Enum):
    """What the saved indicator shows."""

    IDLE = "idle"
    SAVING = "saving"
    SAVED = "saved"
    CONFLICT = "conflict"
    FAILED = "failed"
    READ_ONLY = "read-only"


Resolver = Callable[[Edit, "Cell | str | None"], Awaitable[str]]
"""``resolve(edit, theirs)`` → :data:`KEEP_MINE` or :data:`TAKE_THEIRS`; ``theirs`` is the
cell (None when absent) or note text on disk."""


class Saver:
    """Writes queued edits through the session, one at a time."""

    def __init__(self, session: Session, *, resolve: Resolver,
                 failed: Callable[[Edit, Exception], Awaitable[None]],
                 changed: Callable[[Edit | None], None], reloaded: Callable[[str], None]) -> None:
        self.session = session
        self._resolve = resolve
        self._failed = failed
        self._changed = changed
        self._reloaded = reloaded
        self.pending: dict[tuple[str, str, str], Edit] = {}
        """Edits not yet written, oldest first; one per cell or note."""
        self.running = False
        """True while :meth:`run` is writing (the app starts it in a worker)."""
        self.state = SaveState.READ_ONLY if session.read_only else SaveState.IDLE
        self.saved_at: datetime | None = None
        self.error: str = ""
        self._idle = asyncio.Event()
        self._idle.set()

    def put(self, edit: Edit) -> None:
        """Queue an edit (replacing a queued edit of the same cell or note)."""
        if self.session.read_only:
            return
        self.pending.pop(edit.key, None)
        self.pending[edit.key] = edit
        self._idle.clear()

    def claim(self) -> bool:
        """Reserve the right to :meth:`run`; False when a run is under way or nothing is queued.

        Claiming is synchronous, so two callers can never start two runs.
        """
        if self.running or not self.pending:
            return False
        self.running = True
        self._idle.clear()
        return True

    def pending_for(self, protocol_id: str) -> bool:
        """True when an edit of this protocol's sheet is queued or being written."""
        return any(edit.protocol == protocol_id for edit in self.pending.values())

    async def wait_idle(self) -> None:
        """Wait until the queue is empty or stopped on a failure."""
        await self._idle.wait()

    async def run(self) -> None:
        """Write queued edits until none is left or one fails (it then stays queued).

        Call :meth:`claim` first.
        """
        try:
            while self.pending:
                key, edit = next(iter(self.pending.items()))
                if not await self._write(key, edit):
                    return
        finally:
            self.running = False
            self._idle.set()
            self._changed(None)

    async def _write(self, key: tuple[str, str, str], edit: Edit) -> bool:
        session = self.session
        if session.disk_value(edit) != edit.base:
            # The disk view changed under this edit (the reviewer took the version on
            # disk for this sheet): the same question as a conflict, before writing.
            self.state = SaveState.CONFLICT
            self._changed(edit)
            choice = await self._resolve(edit, session.other_version(edit, session.sheet(edit.protocol)))
            if choice == TAKE_THEIRS:
                self._drop(key, edit)
                self.state = SaveState.IDLE
                self._reloaded(edit.protocol)
                return True
        self.state = SaveState.SAVING
        self._changed(edit)
        stamped = session.stamp(edit)
        write = asyncio.ensure_future(asyncio.to_thread(session.write, stamped))
        try:
            fingerprint = await asyncio.shield(write)
        except asyncio.CancelledError:
            # The app is ending and cancels its workers: the write goes on in its thread,
            # so wait for it and record it, and the last writes (write_now) start from the
            # file as it is then rather than meet their own write as a conflict.
            with suppress(ProtocoderError, OSError):
                session.written(stamped, await write)
                self._drop(key, edit)
            raise
        except SheetConflict as conflict:
            theirs = conflict.theirs
            self.state = SaveState.CONFLICT
            self._changed(edit)
            choice = await self._resolve(edit, session.other_version(edit, theirs))
            session.take_theirs(edit.protocol, theirs, conflict.fingerprint)
            if choice == KEEP_MINE:
                # Written on the next turn, against the file as it is now: the store
                # replaces this one cell (or note) and leaves the rest of their file alone.
                newest = self.pending.get(key)
                if newest is not None:
                    self.pending[key] = replace(newest, base=session.disk_value(newest))
                self._reloaded(edit.protocol)
                return True
            self._drop(key, edit)
            self.state = SaveState.IDLE
            self._reloaded(edit.protocol)
            return True
        except (ProtocoderError, OSError) as exc:
            self.state = SaveState.FAILED
            self.error = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            self._changed(edit)
            await self._failed(edit, exc)
            return False
        session.written(stamped, fingerprint)
        self._drop(key, edit)
        self.state = SaveState.SAVED
        self.error = ""
        self.saved_at = session.clock()
        self._changed(edit)
        return True

    def write_now(self) -> list[Edit]:
        """Write every queued edit here and now, asking nobody; return the edits left unwritten.

        For the app's last moments (a browser tab that closes, a server that stops), when a
        worker may not run again. Nobody is left to answer a conflict, so an edit whose file
        changed under it, or that fails, stays unwritten rather than overwrite unseen.
        """
        session = self.session
        left: list[Edit] = []
        for key, edit in list(self.pending.items()):
            if session.disk_value(edit) != edit.base:
                left.append(edit)
                continue
            stamped = session.stamp(edit)
            try:
                fingerprint = session.write(stamped)
            except (ProtocoderError, OSError):
                left.append(edit)
                continue
            session.written(stamped, fingerprint)
            self._drop(key, edit)
        return left

    def _drop(self, key: tuple[str, str, str], edit: Edit) -> None:
        # A newer edit of the same cell may have been queued while this one was written.
        if self.pending.get(key) is edit:
            del self.pending[key]
