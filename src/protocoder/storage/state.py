"""State folders under ``.protocoder/``: real folders inside the workspace, checked before anything is made.

``.protocoder/`` holds locks and caches that protocoder may delete and rebuild. A clone can bring
``.protocoder`` (or a folder under it) as a symbolic link, to a folder outside the workspace or to a
tracked folder inside it (``protocols/<id>/codes``): a cache written and swept there would delete
reviewers' files. :func:`state_folder` refuses any link on the way, in one line naming it and the
command that gets out, *before* creating anything; :func:`remove_made` deletes only the files a
manifest says protocoder wrote.
"""

from __future__ import annotations

import contextlib
import stat
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from ..errors import Rejected
from .paths import Paths, state_link_message


def check_state_folder(paths: Paths, *parts: str) -> Path:
    """``.protocoder/<parts...>`` after checking every step of the way, creating nothing.

    Each step that exists must be a real folder (not a symbolic link, not a file) and the whole
    path must stay inside the workspace. Raises :class:`Rejected` (one line naming the link or
    file and the command that fixes it) otherwise. A ``part`` must be one plain name.
    """
    for part in parts:
        if not part or part in (".", "..") or "/" in part or "\\" in part or "\x00" in part:
            raise ValueError(f"not a plain folder name: {part!r}")
    if paths.leaves_workspace(paths.root / "."):
        raise Rejected(f"the workspace {paths.root} cannot be resolved")
    folder = paths.state_dir
    for step in (None, *parts):
        if step is not None:
            folder = folder / step
        try:
            info = folder.lstat()
        except FileNotFoundError:
            break  # nothing further down exists either
        except OSError as exc:
            raise Rejected(f"{paths.show(folder)} cannot be read ({exc.strerror or exc})") from None
        if stat.S_ISLNK(info.st_mode):
            raise Rejected(state_link_message(paths, folder))
        if not stat.S_ISDIR(info.st_mode):
            raise Rejected(f"{paths.show(folder)} is a file where protocoder keeps a folder of its state; move it "
                           f"away (mv {paths.show(folder)} {paths.show(folder)}.bak) and run the command again")
    return paths.state_dir.joinpath(*parts)


def state_folder(paths: Paths, *parts: str) -> Path:
    """``.protocoder/<parts...>``, created when missing, after :func:`check_state_folder` found no link.

    The check runs before the first ``mkdir``, and each folder is made one at a time and checked
    again (a link planted between the check and the ``mkdir`` is refused, not followed).
    """
    check_state_folder(paths, *parts)
    folder = paths.state_dir
    for step in (None, *parts):
        if step is not None:
            folder = folder / step
        with contextlib.suppress(FileExistsError):
            folder.mkdir()
        info = folder.lstat()
        if stat.S_ISLNK(info.st_mode):
            raise Rejected(state_link_message(paths, folder))
        if not stat.S_ISDIR(info.st_mode):
            raise Rejected(f"{paths.show(folder)} is not a folder")
    return folder


def _plain_relative(name: str) -> PurePosixPath | None:
    relative = PurePosixPath(name)
    if relative.is_absolute() or not relative.parts or any(p in ("", ".", "..") for p in relative.parts):
        return None
    return relative


def remove_made(folder: Path, made: Iterable[str]) -> bool:
    """Delete the files ``made`` (paths relative to ``folder``, as a manifest lists them), then the
    folders left empty, then ``folder`` itself if it is empty. True when ``folder`` is gone.

    Only what is listed goes: a file protocoder did not write stays, and so does the folder
    holding it. Nothing is followed: ``folder`` or a folder on the way that is a symbolic link
    is left alone, and a listed name that is now a folder or a link to one is not entered.
    """
    try:
        if not stat.S_ISDIR(folder.lstat().st_mode):
            return False
    except OSError:
        return False
    parents: set[PurePosixPath] = set()
    for name in made:
        relative = _plain_relative(name)
        if relative is None:
            continue
        target = folder
        safe = True
        for step in relative.parts[:-1]:
            target = target / step
            try:
                if not stat.S_ISDIR(target.lstat().st_mode):  # a link or a file in the way: not ours to follow
                    safe = False
                    break
            except OSError:
                safe = False
                break
        if not safe:
            continue
        target = target / relative.parts[-1]
        try:
            info = target.lstat()
        except OSError:
            continue
        if stat.S_ISDIR(info.st_mode):
            continue
        try:
            target.unlink()  # a regular file, or a link (the link goes, never what it points to)
        except OSError:
            continue
        for depth in range(1, len(relative.parts)):
            parents.add(PurePosixPath(*relative.parts[:depth]))
    for parent in sorted(parents, key=lambda p: len(p.parts), reverse=True):
        path = folder / parent
        try:
            if stat.S_ISDIR(path.lstat().st_mode):
                path.rmdir()  # only when empty: anything else in it stays
        except OSError:
            pass
    try:
        folder.rmdir()
    except OSError:
        return False
    return True
