"""What every write to a workspace shares: the workspace lock, multi-file changes, the
checks that keep a write inside the workspace, and compare-and-swap against the file on disk.

:class:`Writer` is the base of :class:`~protocoder.storage.store.Store`, whose writes are
grouped by what they write (:mod:`.sheet_writes`, :mod:`.protocol_writes`, :mod:`.record_writes`).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..errors import ConflictError, Rejected
from ..model import Sheet
from .commit import WRITE_LOCK, Transaction, finish_interrupted, pending
from .files import exclusive_lock, fingerprint, remove_state_debris, shared_lock, state_debris
from .paths import Paths


class _Anything:
    """Marker: write whatever is on disk now (no compare-and-swap)."""

    def __repr__(self) -> str:
        return "ANY"


ANY: Any = _Anything()
"""Pass as ``expected`` to skip the unchanged-on-disk check."""

# Workspace locks this thread holds (flock is per open file: taking it twice would wait on itself).
_HELD = threading.local()


class SheetConflict(ConflictError):
    """The reviewer's file changed on disk since it was read; carries what is there now."""

    def __init__(self, path: Path, theirs: Sheet | None, current: str | None) -> None:
        super().__init__(path, f"{path} changed on disk since it was read")
        self.theirs = theirs
        self.fingerprint = current


def now_iso() -> str:
    """The current UTC time as ISO 8601 with seconds, the format of ``coded_at``."""
    return datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


class Writer:
    """What every write to one workspace shares: its paths, its lock, and the checks that keep
    writes inside it. The writes themselves are in :class:`~.store.Store`'s parts."""

    def __init__(self, paths: Paths, *, lock_timeout: float = 10.0) -> None:
        self.paths = paths
        self.lock_timeout = lock_timeout

    # ------------------------------------------------------------------ locking

    @contextlib.contextmanager
    def locked(self, *, only: Path | None = None) -> Iterator[None]:
        """Hold the workspace write lock (raises LockedError after ``lock_timeout`` s).

        A change that a killed process had committed but not finished is completed first
        (see :mod:`protocoder.storage.commit`), so every writer starts from a whole state.

        ``only``: the one file the change writes, replaced whole by an atomic write (a reviewer's
        own codes file). The workspace lock is then held shared, and that file's own lock
        exclusively: twenty reviewers saving into their own files at once do not queue behind each
        other (issue 32), while any other change, which holds the workspace lock exclusively,
        still waits for them and they for it. When an interrupted change or a killed writer's
        temporaries wait to be cleared, the lock is taken exclusively, as without ``only``.

        Re-entrant within a thread: an operation that reads what it decides under the lock
        (correct, adjudicate, freeze) calls the store's writers, which take it again.
        """
        key = str(self.paths.state_dir.absolute())
        held = _HELD.__dict__.setdefault("locks", {})
        depth, outer = held.get(key, (0, None))
        if depth:
            if outer is not None and only != outer:  # a one-file hold covers nothing else
                raise RuntimeError(f"a write of {only or 'the workspace'} inside the one-file write of {outer}")
            held[key] = (depth + 1, outer)
            try:
                yield
            finally:
                held[key] = (depth, outer)
            return
        state_dir = self.paths.check_state_folder()  # a link there, even inside the workspace, is refused
        if self.paths.leaves_workspace(state_dir):
            raise Rejected(f"{self.paths.show(state_dir)} is a symbolic link that leads outside the workspace; "
                           "protocoder keeps its locks only inside it (remove the link)")
        what = f"workspace {self.paths.root}"
        if only is not None and not pending(state_dir) and not state_debris(state_dir):
            with shared_lock(state_dir / WRITE_LOCK, timeout=self.lock_timeout, what=what):
                shared = not pending(state_dir)  # again under the lock: a change may have been killed since
                if shared:
                    relative = only.absolute().relative_to(self.paths.root.absolute()).as_posix()
                    with exclusive_lock(state_dir / "locks" / (relative.replace("/", "+") + ".lock"),
                                        timeout=self.lock_timeout, what=self.paths.show(only)):
                        held[key] = (1, only)
                        try:
                            yield
                        finally:
                            held[key] = (0, None)
            if shared:
                return
        with exclusive_lock(state_dir / WRITE_LOCK, timeout=self.lock_timeout, what=what):
            finish_interrupted(self.paths.root, state_dir)
            remove_state_debris(state_dir)  # what a killed writer left (we hold the lock: no writer runs)
            held[key] = (1, None)
            try:
                yield
            finally:
                held[key] = (0, None)

    def transaction(self) -> Transaction:
        """A new multi-file change (all or none) for this workspace; use under :meth:`locked`."""
        return Transaction(self.paths.root, self.paths.state_dir, self.paths.show)

    def _inside(self, path: Path) -> Path:
        """``path``, once sure that writing it stays inside the workspace.

        An atomic write makes its temporary file in the target's folder, so a folder that is
        a link to elsewhere would make a save write there. A file that is such a link is
        replaced by the save (see :meth:`_linked_out`), never written through.
        """
        if self.paths.leaves_workspace(path.parent):
            raise Rejected(f"{self.paths.show(path)} would be written through a symbolic link that leads "
                           "outside the workspace; protocoder writes only inside it")
        return path

    def _linked_out(self, path: Path) -> bool:
        """Whether ``path`` is a link leading outside the workspace: it is then treated as
        absent (never read, so nothing outside is copied in) and a save replaces the link."""
        return path.is_symlink() and self.paths.leaves_workspace(path)

    def _check_expected(self, path: Path, expected: Any, read: Any) -> None:
        if expected is ANY:
            return
        current = None if self._linked_out(path) else fingerprint(path)
        if current != expected:
            raise SheetConflict(path, read() if current is not None else None, current)
