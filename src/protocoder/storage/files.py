"""Bytes on disk: the one place protocoder reads, writes and locks workspace files.

* Reads are capped: only regular files, never more than a limit, so that a link to
  ``/dev/zero``, a pipe or a huge file cannot stall a command. Text is UTF-8 (a BOM and
  CRLF line ends are accepted), and a bad byte is reported at its line.
* Every write is atomic: a temporary file in the same folder, flushed and fsynced,
  then renamed over the target, then the folder is fsynced. A process killed at any
  moment leaves the old file or the new one, never a torn one.
* Writers of a workspace are serialised by an advisory lock that dies with its process.

YAML is :mod:`protocoder.storage.yamlio`'s business; this module only moves bytes.
"""

from __future__ import annotations

import contextlib
import glob
import hashlib
import os
import re
import stat
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..errors import InvalidInput, LockedError, Problem, Rejected

MAX_FILE_BYTES = 2 * 1024 * 1024
"""Files larger than this are refused: no review file comes near it, and a huge file is
almost always a mistake (or an attack) that would otherwise stall every command."""

_UMASK = os.umask(0)
os.umask(_UMASK)


# --------------------------------------------------------------------------- reading


def read_text(path: Path, display: str) -> str:
    """Read a UTF-8 text file, refusing oversized files and bad bytes with a located problem.

    A UTF-8 byte-order mark is dropped and CRLF line ends are accepted, because editors on
    Windows write both and neither changes what the file says.
    """
    return decode_utf8(read_capped(path, display, MAX_FILE_BYTES), display)


def read_capped(path: Path, display: str, limit: int) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes, or :class:`InvalidInput`.

    Only regular files are read, and never more than ``limit + 1`` bytes: a file that is
    a link to ``/dev/zero``, a pipe or a device would otherwise stall the command forever.
    """
    try:
        # Non-blocking, so that opening a named pipe does not wait for a writer. Plain file
        # descriptor reads: a buffered file object costs more than reading a review file.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise InvalidInput([Problem(display, 0, 0, "not a regular file")])
            if info.st_size > limit:
                raise InvalidInput([Problem(display, 0, 0, f"file is {info.st_size:,} bytes; the limit is {limit:,}")])
            raw = _read_up_to(fd, info.st_size + 1)  # a size-sized buffer: the limit may be megabytes
            if len(raw) > info.st_size:  # it grew while we read
                raw += _read_up_to(fd, limit + 1 - len(raw))
        finally:
            os.close(fd)
    except OSError as exc:
        raise InvalidInput([Problem(display, 0, 0, f"cannot read file: {exc.strerror or exc}")]) from None
    if len(raw) > limit:  # it grew while we looked
        raise InvalidInput([Problem(display, 0, 0, f"file is over {limit:,} bytes; the limit is {limit:,}")])
    return raw


def _read_up_to(fd: int, size: int) -> bytes:
    """``size`` bytes from ``fd``, or fewer at the end of the file."""
    chunks = []
    while size > 0:
        chunk = os.read(fd, size)
        if not chunk:
            break
        chunks.append(chunk)
        size -= len(chunk)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def decode_utf8(raw: bytes, display: str) -> str:
    """Decode bytes as UTF-8 (dropping a BOM), naming the line of the first bad byte."""
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise InvalidInput(
            [Problem(display, line, column, f"not valid UTF-8 (byte 0x{raw[exc.start]:02x})")]
        ) from None
    return text.replace("\r\n", "\n")


# --------------------------------------------------------------------------- protocoder's own folders

STATE_FOLDER = ".protocoder"
"""The workspace's state folder (locks, records, caches): protocoder sweeps and replaces files in
it as its own, so no part of it may be a symbolic link, not even one that stays inside."""


def state_link_in(path: Path) -> Path | None:
    """The ``.protocoder`` folder, or a folder below it, on the way to ``path`` that is a symbolic
    link (None when there is none, or ``path`` is not in a state folder). One ``lstat`` per part."""
    parts = path.parts
    if STATE_FOLDER not in parts:
        return None
    start = parts.index(STATE_FOLDER)
    for end in range(start + 1, len(parts)):
        folder = Path(*parts[:end])
        if folder.is_symlink():
            return folder
    return None


def link_refusal(link: Path, shown: str, what: str = "its locks, records and caches") -> str:
    """The one line that refuses a link where protocoder keeps a folder of its own: what it is,
    where it leads, why, and the command that gets out."""
    try:
        target = os.readlink(link)
    except OSError:
        target = "?"
    return (f"{shown} is a symbolic link (to {target}); protocoder keeps {what} only in a folder of its own "
            f"there, and would write or delete files through the link: remove the link (rm {shown}) and run the "
            "command again")


def refuse_state_link(path: Path) -> None:
    """Raise :class:`Rejected` when writing ``path`` would go through a link in a state folder."""
    if (link := state_link_in(path)) is not None:
        raise Rejected(link_refusal(link, str(link)))


# --------------------------------------------------------------------------- writing


def atomic_write_bytes(path: Path, payload: bytes, *, sweep: bool = False) -> None:
    """Replace ``path`` with ``payload`` so that readers see the old or the new file only.

    A writer killed at the wrong moment leaves its temporary file (``.NAME.*.tmp``)
    behind; it never replaces the target, and loaders skip dot files. With ``sweep``
    (for callers that hold the workspace lock, so that no other writer of ``path`` can be
    running) such leftovers of the same target are removed first, so they cannot pile up.
    """
    try:
        kind = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        pass
    else:
        if not stat.S_ISREG(kind):
            # Renaming over a device or a pipe would replace it (as root: /dev/null itself).
            raise InvalidInput([Problem(str(path), 0, 0, "not a regular file; protocoder only writes regular files")])
    refuse_state_link(path)  # before anything is created
    path.parent.mkdir(parents=True, exist_ok=True)
    if sweep:
        remove_stale_temporaries(path)
    fd, tmp = new_temporary(path)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        try:
            mode = path.stat().st_mode & 0o777
        except FileNotFoundError:
            mode = 0o666 & ~_UMASK
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)


_TEMPORARY_LETTERS = "abcdefghijklmnopqrstuvwxyz0123456789_"
_NEW_FILE = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0) \
    | getattr(os, "O_BINARY", 0)


def new_temporary(path: Path) -> tuple[int, Path]:
    """A new empty file beside ``path`` for an atomic write, open for writing (file descriptor, and its
    absolute path ``.NAME.xxxxxxxx.tmp``), made as ``tempfile.mkstemp(prefix=".NAME.", suffix=".tmp")``
    makes it: eight random letters, created exclusively, never through a link, mode 0600. Here
    because importing tempfile (with shutil and random) was about 4 ms of a one-shot command."""
    folder = os.path.abspath(path.parent)
    for _ in range(1000):
        letters = "".join(_TEMPORARY_LETTERS[byte % len(_TEMPORARY_LETTERS)] for byte in os.urandom(8))
        name = os.path.join(folder, f".{path.name}.{letters}.tmp")
        try:
            return os.open(name, _NEW_FILE, 0o600), Path(name)
        except FileExistsError:
            continue
    raise FileExistsError(f"no free name for a temporary file of {path}")


def atomic_write_text(path: Path, text: str, *, sweep: bool = False) -> None:
    """UTF-8 variant of :func:`atomic_write_bytes`."""
    atomic_write_bytes(path, text.encode("utf-8"), sweep=sweep)


def remove_stale_temporaries(path: Path) -> None:
    """Delete temporary files that killed writers of ``path`` left (call under the lock)."""
    for leftover in path.parent.glob(f".{glob.escape(path.name)}.*.tmp"):
        with contextlib.suppress(OSError):
            leftover.unlink()


_TEMPORARY = re.compile(r"\.(.+)\.[a-z0-9_]{8}\.tmp")
"""The name of an atomic write's temporary (:func:`new_temporary`)."""


def temporary_target(name: str) -> str | None:
    """The file a temporary named ``name`` was to replace (``.consensus.yaml.k3j_x9a2.tmp`` →
    ``consensus.yaml``), or None when ``name`` is not protocoder's temporary naming."""
    found = _TEMPORARY.fullmatch(name)
    return found.group(1) if found else None


def remove_debris(lock_path: Path | None, found: list[Path]) -> None:
    """Delete temporaries killed writers left (``found``, by :func:`temporary_target`), under the
    workspace lock: ``lock_path`` is taken without waiting (while a writer holds it, its temporaries
    may be live, and the next command removes them); None when the caller holds it already.
    Nothing is done through a link at ``.protocoder``."""
    if not found:
        return
    handle = None
    if lock_path is not None:
        if state_link_in(lock_path) is not None or lock_path.parent.is_symlink():
            return
        try:
            handle = try_hold_lock(lock_path)
        except OSError:  # a read-only workspace: nothing can be removed, and nothing is running
            return
        if handle is None:
            return
    try:
        for leftover in found:
            with contextlib.suppress(OSError):
                leftover.unlink()
    finally:
        if handle is not None:
            handle.close()


LOCKED_STATE_FILES = ("pending.json", "commit.json", "ledger-head.json")
"""The files of ``.protocoder/`` written only under the workspace lock (the two journals, the
ledger's record): a temporary of one found by whoever holds the lock was left by a killed writer."""


def state_debris(state_dir: Path) -> list[Path]:
    """Temporaries of :data:`LOCKED_STATE_FILES` in ``state_dir`` (one listing of the folder);
    none through a link (the folder is then not protocoder's, and its files are not either)."""
    if state_dir.is_symlink():
        return []
    try:
        names = os.listdir(state_dir)
    except OSError:
        return []
    prefixes = tuple(f".{name}." for name in LOCKED_STATE_FILES)
    return [state_dir / name for name in names if name.startswith(prefixes) and name.endswith(".tmp")]


def remove_state_debris(state_dir: Path) -> None:
    """Delete what killed writers left in ``state_dir`` (call under the workspace lock)."""
    for leftover in state_debris(state_dir):
        with contextlib.suppress(OSError):
            leftover.unlink()


def fsync_dir(folder: Path) -> None:
    """Flush a folder's entries to disk, so that a rename into it survives a crash.

    Not possible (nor needed) on every platform; where it is not, nothing happens.
    """
    with contextlib.suppress(OSError, AttributeError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def fingerprint(path: Path) -> str | None:
    """SHA-256 of a file's bytes, or None when it does not exist."""
    if not os.path.lexists(path):
        return None
    try:
        return hashlib.sha256(read_capped(path, str(path), 2 * MAX_FILE_BYTES)).hexdigest()
    except InvalidInput:
        return "unreadable"  # never anyone's expected fingerprint: a save reports a conflict


# --------------------------------------------------------------------------- locking


@contextlib.contextmanager
def exclusive_lock(lock_path: Path, *, timeout: float = 10.0, what: str = "the workspace") -> Iterator[None]:
    """Hold an advisory exclusive lock on ``lock_path`` for the duration of the block.

    Waits up to ``timeout`` seconds, then raises :class:`LockedError`. The lock dies with
    its process, so a killed writer never leaves a stale lock behind.
    """
    with _held_lock(lock_path, shared=False, timeout=timeout, what=what):
        yield


@contextlib.contextmanager
def shared_lock(lock_path: Path, *, timeout: float = 10.0, what: str = "the workspace") -> Iterator[None]:
    """Hold ``lock_path`` shared: any number of holders at once, none while someone holds it
    exclusively (:func:`exclusive_lock`). Where the platform has no shared locks, it is exclusive."""
    with _held_lock(lock_path, shared=True, timeout=timeout, what=what):
        yield


@contextlib.contextmanager
def _held_lock(lock_path: Path, *, shared: bool, timeout: float, what: str) -> Iterator[None]:
    handle = _open_lock(lock_path)
    try:
        deadline = time.monotonic() + timeout
        while not _try_lock(handle, shared=shared):
            if time.monotonic() >= deadline:
                raise LockedError(
                    f"another protocoder process is writing to {what} "
                    f"(waited {timeout:g} s for {lock_path}); try again when it has finished"
                )
            time.sleep(0.05)
        yield
    finally:
        handle.close()


def try_hold_lock(lock_path: Path) -> Any | None:
    """Take a lock without waiting; return a handle to keep it, or None if it is held (or
    cannot be taken inside the workspace: the caller then works read-only)."""
    if _lock_folder_leaves(lock_path):
        return None
    handle = _open_lock(lock_path)
    if _try_lock(handle):
        return handle
    handle.close()
    return None


def _lock_folder_leaves(lock_path: Path) -> bool:
    # Locks live in the workspace's .protocoder/; one that is a link (out of the workspace, or
    # into protocols/) must not make protocoder create files there.
    folder = lock_path.parent
    try:
        return folder.is_symlink() or state_link_in(lock_path) is not None
    except (OSError, RuntimeError):
        return True


def _open_lock(lock_path: Path) -> Any:
    if _lock_folder_leaves(lock_path):
        raise LockedError(link_refusal(state_link_in(lock_path) or lock_path.parent, str(lock_path.parent)))
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    return open(lock_path, "a+b")  # noqa: SIM115 - the caller owns the handle


def _try_lock(handle: Any, *, shared: bool = False) -> bool:
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        import msvcrt

        try:
            msvcrt.locking(handle.fileno(), msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
    try:
        fcntl.flock(handle.fileno(), (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
    except OSError:
        return False
    return True
