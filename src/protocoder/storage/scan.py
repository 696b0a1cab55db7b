"""Scanning a workspace: its folders listed once, and the files a load will read.

The second of :func:`~.workspace.load_review`'s three steps (open, scan, parse). Nothing
here reads a file's content: a :class:`Scan` remembers what each folder holds, so that
the parse step's questions about an entry (a link? a folder? a file?) cost no system call,
and :func:`scan_workspace` lists the protocol, reviewer and consensus files, which the
parse step reads (the bulk of them on a second core) before it walks the folders.
"""

from __future__ import annotations

import os
from pathlib import Path

from .files import temporary_target
from .paths import CODES_DIR, CONSENSUS_FILE, PROTOCOL_FILE, Paths


class Scan:
    """The folders :func:`~.workspace.load_review` walks, each listed once with the type of every entry.

    Its questions about those entries (a link? a folder? a file? there at all?) then cost no
    system call: at 1,000 protocols they were 20,000 stat calls through pathlib. A name
    missing from a folder that was listed is not there; whatever was not listed, and
    whatever a link leads to, is asked of the file system as before.
    """

    def __init__(self) -> None:
        self._kinds: dict[str, str] = {}
        self._listings: dict[str, list[str]] = {}
        self._joined: dict[str, dict[str, Path]] = {}
        self.files: list[Path] = []
        """The files a load will probably read (:func:`scan_workspace` fills it in)."""
        self.debris: list[Path] = []
        """Temporaries of protocoder's own writes found in the listed folders (a killed writer's,
        or a running one's: removed only under the lock, see :func:`~.files.remove_debris`)."""

    def scan(self, folder: Path) -> list[os.DirEntry[str]]:
        """The entries of ``folder`` (OSError when it cannot be listed), their types remembered."""
        with os.scandir(folder) as listing:
            entries = list(listing)
        for entry in entries:
            try:
                self._kinds[entry.path] = ("link" if entry.is_symlink()
                                           else "dir" if entry.is_dir(follow_symlinks=False)
                                           else "file" if entry.is_file(follow_symlinks=False) else "other")
            except OSError:
                continue  # asked of the file system when it comes up
        self._listings[str(folder)] = [entry.name for entry in entries]
        return entries

    def join(self, folder: Path, name: str) -> Path:
        """``folder / name``, the same object each time it is asked for.

        A pathlib join parses the parts again (14,000 joins at 1,000 protocols, a few
        microseconds each), and a path's text and hash, once computed, are kept on its object:
        the scan and the parse step ask about the same few thousand paths.
        """
        children = self._joined.get(str(folder))
        if children is None:
            children = self._joined[str(folder)] = {}
        path = children.get(name)
        if path is None:
            path = children[name] = folder / name
        return path

    def listing(self, folder: Path) -> list[Path]:
        """``sorted(folder.iterdir())``."""
        names = self._listings.get(str(folder))
        return sorted(self.join(folder, name) for name in names) if names is not None else sorted(folder.iterdir())

    def is_symlink(self, path: Path) -> bool:
        kind = self._kinds.get(str(path))
        if kind is None:
            return False if str(path.parent) in self._listings else path.is_symlink()
        return kind == "link"

    def is_dir(self, path: Path) -> bool:
        kind = self._kinds.get(str(path))
        return path.is_dir() if kind is None or kind == "link" else kind == "dir"

    def is_file(self, path: Path) -> bool:
        kind = self._kinds.get(str(path))
        return path.is_file() if kind is None or kind == "link" else kind == "file"

    def exists(self, path: Path) -> bool:
        kind = self._kinds.get(str(path))
        if kind is None:
            return False if str(path.parent) in self._listings else path.exists()
        return path.exists() if kind == "link" else True


def review_files(protocols_dir: Path, reviewer: str | None, scan: Scan | None = None) -> list[Path]:
    """The protocol, reviewer and consensus files a load will probably read
    (the folders it lists are remembered in ``scan``)."""
    files: list[Path] = []
    if protocols_dir.is_symlink():
        return files
    scan = scan or Scan()
    try:
        # Links are left to the parse step, which checks where they lead before reading.
        folders = sorted(entry.name for entry in scan.scan(protocols_dir)
                         if entry.is_dir(follow_symlinks=False) and not entry.name.startswith("."))
    except OSError:
        return files
    join = scan.join
    for name in folders:
        # Joined with "/": a path parsed from one string costs several times more.
        folder = join(protocols_dir, name)
        files.append(join(folder, PROTOCOL_FILE))
        codes = join(folder, CODES_DIR)
        try:
            scan.debris += [folder / entry.name for entry in scan.scan(folder)
                            if entry.name.endswith(".tmp") and temporary_target(entry.name) in OWN_FILES]
            names = [] if scan.is_symlink(codes) or not scan.is_dir(codes) else sorted(
                entry.name for entry in scan.scan(codes) if entry.is_file(follow_symlinks=False))
        except OSError:
            names = []
        scan.debris += [codes / name for name in names if name.endswith(".tmp")
                        and (temporary_target(name) or "").endswith(".yaml")]
        files += [join(codes, file_name) for file_name in names
                  if file_name.endswith(".yaml") and not file_name.startswith(".")
                  and (reviewer is None or file_name == f"{reviewer}.yaml")]
        if reviewer is None:
            files.append(join(folder, CONSENSUS_FILE))
    return files


ROOT_FILES = ("protocoder.yaml", "references.bib", "corrections.yaml", ".gitattributes")
"""Files of the workspace's top folder that protocoder writes atomically."""
OWN_FILES = (PROTOCOL_FILE, CONSENSUS_FILE)


def scan_workspace(paths: Paths, reviewer: str | None = None) -> Scan:
    """List the workspace's protocol folders; the returned scan's ``files`` are those a load
    will read (with ``reviewer``, only that reviewer's files among the reviewers'), and its
    ``debris`` the temporaries killed writes left there, in the top folder and in ``rubric/``."""
    scan = Scan()
    scan.files = review_files(paths.protocols_dir, reviewer, scan)
    for folder, wanted in ((paths.root, ROOT_FILES), (paths.rubric_dir, None)):
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        scan.debris += [folder / name for name in names if name.endswith(".tmp") and (target := temporary_target(name))
                        and (target in wanted if wanted else target.endswith(".yaml"))]
    return scan
