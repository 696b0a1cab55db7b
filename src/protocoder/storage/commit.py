"""Several files changed as one: after a failure or a kill, all of them or none.

A :class:`Transaction` (used under the workspace lock by import, ``protocol add`` and
``protocol remove``) works in three steps, the way a database's write-ahead journal does:

1. **Stage.** Every new content is written to a temporary file next to its target
   (``.NAME.*.tmp``, as an atomic write makes), and the disk is flushed. Nothing a reader
   sees has changed. If anything fails here (a full disk, a permission), the temporaries
   and any folder made for them are removed, and the error says that nothing was changed.
2. **Decide.** The list of renames is written, atomically, to the journal
   ``.protocoder/commit.json``. From this moment the change is committed.
3. **Apply.** Each temporary is renamed over its target (and a removed folder is renamed
   to a hidden name, then deleted); the journal is deleted last.

A process killed during step 3 leaves the journal behind. Whoever takes the workspace lock
next, and every command that reads the workspace (:func:`finish_interrupted`), completes the
renames first: the change is then whole, exactly as if the process had not been killed.
A kill before step 2 leaves only temporaries, which loaders skip and the next writer of the
same file removes.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InvalidInput, Problem, ProtocoderError, Rejected
from .files import (
    LOCKED_STATE_FILES,
    atomic_write_bytes,
    fsync_dir,
    new_temporary,
    read_capped,
    refuse_state_link,
    temporary_target,
)

JOURNAL = "commit.json"
WRITE_LOCK = "write.lock"


class CommitFailed(ProtocoderError):
    """A multi-file change failed; the message says which file, and that nothing changed."""


@dataclass
class Transaction:
    """Files to replace and folders to remove, applied together by :meth:`commit`.

    ``root`` is the workspace folder; ``state_dir`` holds the journal. Call under the
    workspace lock. ``show`` turns a path into the name messages use.
    """

    root: Path
    state_dir: Path
    show: Any = str
    _staged: list[tuple[Path, Path]] = field(default_factory=list)
    _removals: list[Path] = field(default_factory=list)
    _made_dirs: list[Path] = field(default_factory=list)
    _swept: set[Path] = field(default_factory=set)

    def __post_init__(self) -> None:
        # Temporary files come back absolute (new_temporary); the journal names paths relative to the root.
        self.root = Path(os.path.abspath(self.root))
        self.state_dir = Path(os.path.abspath(self.state_dir))

    def write(self, path: Path, payload: bytes) -> None:
        """Stage ``payload`` as the new content of ``path`` (nothing visible changes yet)."""
        try:
            refuse_state_link(path)  # a link at .protocoder: refused before anything is created
        except Rejected:
            self.abort()
            raise
        if os.path.lexists(path) and not path.is_file():
            self.abort()
            raise InvalidInput([Problem(self.show(path), 0, 0, "not a regular file; protocoder only writes "
                                        "regular files")])
        try:
            self._make_parents(path.parent)
            # Under the lock, after finish_interrupted: temporaries of protocoder's naming are a killed
            # writer's. Each folder is listed once per change (before anything is staged in it): a
            # listing per file made an import of 5,000 reviewers' files into one folder quadratic.
            self._sweep(path.parent)
            fd, tmp = new_temporary(path)
        except OSError as exc:
            self._fail(path, exc)
        self._staged.append((tmp, path))
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(payload)
            try:
                mode = path.stat().st_mode & 0o777
            except FileNotFoundError:
                mode = 0o666 & ~_umask()
            os.chmod(tmp, mode)
        except OSError as exc:
            self._fail(path, exc)
        except BaseException:
            self.abort()
            raise

    def _sweep(self, folder: Path) -> None:
        if folder in self._swept:
            return
        self._swept.add(folder)
        try:
            names = os.listdir(folder)
        except OSError:
            return
        for name in names:
            # Only files written under the workspace lock: review files and the locked state files
            # (not, say, the team's secrets, written under the team's own lock).
            if name.endswith(".tmp") and (target := temporary_target(name)) is not None and (
                    target.endswith((".yaml", ".bib")) or target in LOCKED_STATE_FILES):
                with contextlib.suppress(OSError):
                    os.unlink(folder / name)

    def remove_tree(self, folder: Path) -> None:
        """Stage the removal of a folder and everything in it."""
        self._removals.append(folder)

    def __len__(self) -> int:
        return len(self._staged) + len(self._removals)

    def commit(self) -> None:
        """Make every staged change visible: all of them, or (raising) none of them."""
        if not self._staged and not self._removals:
            return
        journal = self.state_dir / JOURNAL
        try:
            _flush([tmp for tmp, _ in self._staged])
            record = {"replace": [[_rel(tmp, self.root), _rel(target, self.root)] for tmp, target in self._staged],
                      "remove": [[_rel(folder, self.root), _rel(_trash_name(folder), self.root)]
                                 for folder in self._removals]}
            atomic_write_bytes(journal, json.dumps(record, indent=1).encode())
        except OSError as exc:
            self._fail(journal, exc)
        except BaseException:
            self.abort()
            raise
        # Committed: from here on a failure is finished by the next command, never undone.
        try:
            _apply(self.root, record)
            _flush_dirs({target.parent for _, target in self._staged} | {f.parent for f in self._removals})
            journal.unlink()
            fsync_dir(journal.parent)
        except OSError as exc:
            where = f"{self.show(Path(exc.filename))}: " if exc.filename else ""
            raise CommitFailed(f"{where}{exc.strerror or exc}; the change was committed but not all of it is in "
                               f"place yet: the next protocoder command completes it "
                               f"({self.show(journal)})") from None
        _empty_trash(self.root, record)

    def abort(self) -> None:
        """Remove what was staged (temporaries, and folders made for them)."""
        for tmp, _ in self._staged:
            with contextlib.suppress(OSError):
                tmp.unlink()
        for folder in reversed(self._made_dirs):
            with contextlib.suppress(OSError):
                folder.rmdir()  # only if still empty
        self._staged.clear()
        self._made_dirs.clear()

    def _make_parents(self, folder: Path) -> None:
        missing = []
        while not folder.exists():
            missing.append(folder)
            folder = folder.parent
        for made in reversed(missing):
            made.mkdir()
            self._made_dirs.append(made)

    def _fail(self, path: Path, exc: OSError) -> None:
        self.abort()
        raise CommitFailed(f"{self.show(path)}: {exc.strerror or exc}; nothing was changed") from None


def finish_interrupted(root: Path, state_dir: Path) -> bool:
    """Complete a change whose process was killed after it committed; True if there was one.

    Call under the workspace lock. Raises :class:`InvalidInput` when the journal cannot be
    read (it was edited by hand).
    """
    root, state_dir = Path(os.path.abspath(root)), Path(os.path.abspath(state_dir))
    journal = state_dir / JOURNAL
    if not journal.is_file() or journal.is_symlink():
        return False
    display = str(journal.relative_to(root)) if journal.is_relative_to(root) else str(journal)
    try:
        record = json.loads(read_capped(journal, display, 64 << 20))
        _check_record(record)
    except (ValueError, TypeError) as exc:
        raise InvalidInput([Problem(display, 0, 0, f"the journal of an interrupted change is unreadable ({exc}); "
                                    "delete it to give up that change")]) from None
    _apply(root, record)
    _flush_dirs({(root / target).parent for _, target in record["replace"]}
                | {(root / folder).parent for folder, _ in record["remove"]})
    journal.unlink()
    fsync_dir(journal.parent)
    _empty_trash(root, record)
    return True


def pending(state_dir: Path) -> bool:
    """Whether an interrupted change waits to be completed (one stat)."""
    return os.path.lexists(state_dir / JOURNAL)


def _check_record(record: Any) -> None:
    if not isinstance(record, dict) or set(record) != {"replace", "remove"}:
        raise ValueError("expected 'replace' and 'remove'")
    for pairs in record.values():
        if not isinstance(pairs, list) or not all(
                isinstance(p, list) and len(p) == 2 and all(isinstance(s, str) and _safe_relative(s) for s in p)
                for p in pairs):
            raise ValueError("expected pairs of paths inside the workspace")


def _safe_relative(text: str) -> bool:
    path = Path(text)
    return bool(text) and not path.is_absolute() and ".." not in path.parts


def _apply(root: Path, record: dict[str, list[list[str]]]) -> None:
    for tmp, target in record["replace"]:
        if os.path.lexists(root / tmp):
            os.replace(root / tmp, root / target)
    for folder, trash in record["remove"]:
        if os.path.lexists(root / folder) and not os.path.lexists(root / trash):
            os.rename(root / folder, root / trash)


def _empty_trash(root: Path, record: dict[str, list[list[str]]]) -> None:
    import shutil  # only for a change that removes folders (protocol remove)

    for _, trash in record["remove"]:
        shutil.rmtree(root / trash, ignore_errors=True)


def _trash_name(folder: Path) -> Path:
    # A dot name: loaders skip it, so a folder being deleted is already gone for readers.
    return folder.with_name(f".{folder.name}.removed")


def _rel(path: Path, root: Path) -> str:
    return os.path.relpath(os.path.abspath(path), root)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _flush(files: list[Path]) -> None:
    """Make the staged files durable before the journal names them.

    One ``syncfs`` of the workspace's file system instead of an ``fsync`` per file: an
    import of 10,000 files spent 4 s in fsyncs alone.
    """
    if not files:
        return
    if _syncfs(files[0].parent):
        return
    for path in files:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _flush_dirs(folders: set[Path]) -> None:
    existing = [folder for folder in folders if folder.is_dir()]
    if existing and _syncfs(existing[0]):
        return
    for folder in existing:
        fsync_dir(folder)


def _syncfs(folder: Path) -> bool:
    """``syncfs(2)`` on the file system holding ``folder`` (Linux); False where unavailable."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        fd = os.open(folder, os.O_RDONLY)
    except (OSError, AttributeError):
        return False
    try:
        return libc.syncfs(fd) == 0
    except AttributeError:
        return False
    finally:
        os.close(fd)
