"""Files of a git repository at a commit, to pin as sources (``source add --repo``).

The ``git`` program does the reading: ``rev-parse`` resolves the revision to its full commit
id, ``ls-tree`` lists the files at that commit and ``cat-file`` gives each file's bytes, so
nothing is checked out and the working tree of a local repository is never read (what is
pinned is what was committed). A repository given by URL is cloned bare, without file
contents (``--filter=blob:none``), into a temporary folder that is removed afterwards; only
the files that match are then fetched.

Include patterns are matched against each file's path from the repository's top: ``*``
stays inside one folder, ``**`` crosses folders (``docs/**/*.md``), and a pattern without a
``/`` matches the file name in any folder (``*.py``), as in ``.gitignore``.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import quote, urlsplit

from ..errors import InvalidInput, Problem
from .extract import MAX_SNAPSHOT_BYTES
from .fetch import Fetched

GIT_TIMEOUT = 300.0
"""Seconds a git command may take (a clone of a large repository without its files is quick)."""

MAX_TOTAL_BYTES = 1 << 30
"""The most one ``source add --repo`` reads in all (the files after it are skipped with a note)."""

_COMMIT = re.compile(r"^[0-9a-f]{40}(?:[0-9a-f]{24})?$")


@dataclass(frozen=True)
class RepositoryFiles:
    """The files of a repository at one commit that matched the include patterns."""

    repository: str
    """The repository as recorded: its URL (a local repository's ``origin`` when it has one), else its path."""
    rev: str
    commit: str
    files: tuple[Fetched, ...]
    skipped: tuple[str, ...]
    """One note per matching file that is not pinned (binary, too large, a link, a submodule)."""


def _refuse(what: str, why: str) -> InvalidInput:
    return InvalidInput([Problem(what, 0, 0, why)])


def glob_pattern(pattern: str) -> re.Pattern[str]:
    """The regular expression of an include pattern (see the module's docstring)."""
    text = pattern.strip()
    if text.startswith("/"):
        text = text.lstrip("/")  # anchored at the repository's top
    elif "/" not in text:
        text = "**/" + text
    out, index = [], 0
    while index < len(text):
        if text.startswith("**/", index):
            out.append("(?:[^/]+/)*")
            index += 3
        elif text.startswith("**", index):
            out.append(".*")
            index += 2
        elif text[index] == "*":
            out.append("[^/]*")
            index += 1
        elif text[index] == "?":
            out.append("[^/]")
            index += 1
        else:
            out.append(re.escape(text[index]))
            index += 1
    return re.compile("".join(out) + r"\Z")


def _git(args: Sequence[str], where: str, *, cwd: Path | None = None, stdin: str | None = None) -> bytes:
    """The output of ``git ARGS``, or :class:`InvalidInput` naming ``where`` with git's first line of complaint."""
    # Never ask for a password (a private repository fails in one line instead of waiting), and
    # never run a program a repository's own configuration names (core.fsmonitor).
    environment = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "true", "SSH_ASKPASS": "true",
                   "LC_ALL": "C"}
    try:
        result = subprocess.run(["git", "-c", "core.fsmonitor=false", *args], cwd=cwd, capture_output=True,
                                timeout=GIT_TIMEOUT, env=environment,
                                input=stdin.encode() if stdin is not None else None,
                                stdin=subprocess.DEVNULL if stdin is None else None)
    except FileNotFoundError:
        raise _refuse(where, "the git program is not installed (it reads repositories)") from None
    except subprocess.TimeoutExpired:
        raise _refuse(where, f"git took more than {GIT_TIMEOUT:g} seconds") from None
    if result.returncode != 0:
        lines = [line.strip() for line in result.stderr.decode("utf-8", "replace").splitlines() if line.strip()]
        detail = next((line for line in lines if line.startswith(("fatal:", "error:"))), lines[0] if lines else "")
        raise _refuse(where, detail.removeprefix("fatal: ").removeprefix("error: ") or f"git {args[0]} failed")
    return result.stdout


def is_remote(repository: str) -> bool:
    """True when ``repository`` is a URL (or ``user@host:path``) rather than a local folder."""
    return bool(re.match(r"^[a-z][a-z0-9+.-]*://", repository, re.I)) or bool(
        re.match(r"^[\w.-]+@[\w.-]+:", repository))


def web_base(repository: str) -> str:
    """``https://github.com/OWNER/REPO`` (or GitLab's) for a repository hosted there, else ''."""
    text = repository.strip()
    scp = re.match(r"^[\w.-]+@(?P<host>[\w.-]+):(?P<path>.+)$", text)
    if scp:
        host, path = scp.group("host"), scp.group("path")
    else:
        parts = urlsplit(text)
        host, path = (parts.hostname or ""), parts.path
    host = host.lower()
    path = path.strip("/").removesuffix(".git")
    # github.com/OWNER/REPO; gitlab.com/GROUP[/SUBGROUP...]/REPO
    if host not in ("github.com", "gitlab.com") or "/" not in path or (host == "github.com" and path.count("/") != 1):
        return ""
    return f"https://{host}/{path}"


def permalink(repository: str, commit: str, path: str) -> str:
    """The page of ``path`` at ``commit`` on GitHub or GitLab ('' for a repository hosted elsewhere)."""
    base = web_base(repository)
    if not base:
        return ""
    middle = "/-/blob/" if base.startswith("https://gitlab.com/") else "/blob/"
    return f"{base}{middle}{commit}/{quote(path)}"


def resolve(repository: str, rev: str) -> str:
    """The full commit id ``rev`` of ``repository`` is at now (``ls-remote`` for a URL, ``rev-parse`` for a folder)."""
    if _COMMIT.match(rev):
        return rev
    if is_remote(repository):
        out = _git(["ls-remote", "--", repository, rev], repository).decode("utf-8", "replace")
        found = {}
        for line in out.splitlines():
            commit, _, name = line.partition("\t")
            found[name] = commit
        for name in (f"refs/heads/{rev}", f"refs/tags/{rev}^{{}}", f"refs/tags/{rev}", rev):
            if name in found:
                return found[name]
        raise _refuse(repository, f"no branch or tag {rev!r}")
    return _local_commit(Path(repository), rev, repository)


def _local_commit(folder: Path, rev: str, shown: str) -> str:
    try:
        out = _git(["rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}"], shown, cwd=folder)
    except InvalidInput:
        raise _refuse(shown, f"unknown revision {rev!r} (not a branch, tag or commit of this repository)") from None
    return out.decode().strip()


def read_repository(repository: str, rev: str, includes: Sequence[str], *, exact: str = "",
                    max_bytes: int = MAX_SNAPSHOT_BYTES) -> RepositoryFiles:
    """Every file of ``repository`` at ``rev`` whose path matches one of ``includes``.

    Raises :class:`InvalidInput` in one line when the repository cannot be read, the revision
    is unknown, or no file matches.
    """
    if not includes and not exact:
        raise _refuse(repository, "say which files with --include GLOB (for example --include README.md)")
    if not rev.strip() or rev.startswith("-"):
        raise _refuse(repository, f"revision {rev!r} is not a branch, tag or commit")
    if is_remote(repository):
        with tempfile.TemporaryDirectory(prefix="protocoder-repo-") as folder:
            clone = Path(folder) / "repository.git"
            _git(["clone", "--bare", "--quiet", "--filter=blob:none", "--", repository, str(clone)], repository)
            commit = _remote_commit(clone, rev, repository)
            return _files(clone, repository, repository, rev, commit, *_wanted(includes, exact), max_bytes,
                          remote=True)
    folder = Path(repository).expanduser()
    if not folder.is_dir():
        raise _refuse(repository, "no such folder (a repository is a local folder or a git URL)")
    try:
        top = _git(["rev-parse", "--show-toplevel"], repository, cwd=folder).decode().strip()
    except InvalidInput:
        # a bare repository has no top level; it is still a repository
        _git(["rev-parse", "--git-dir"], repository, cwd=folder)
        top = str(folder.resolve())
    commit = _local_commit(folder, rev, repository)
    origin = ""
    with contextlib.suppress(InvalidInput):  # no origin: the repository is recorded by its path
        origin = _git(["remote", "get-url", "origin"], repository, cwd=folder).decode().strip()
    recorded = origin if origin and is_remote(origin) else str(Path(top).resolve())
    return _files(folder, recorded, repository, rev, commit, *_wanted(includes, exact), max_bytes)


def _remote_commit(clone: Path, rev: str, shown: str) -> str:
    try:
        return _local_commit(clone, rev, shown)
    except InvalidInput:
        if not re.match(r"^[0-9a-f]{7,64}$", rev):
            raise
    # A commit no branch or tag points at: ask the server for it.
    try:
        _git(["fetch", "--quiet", "--filter=blob:none", "origin", rev], shown, cwd=clone)
    except InvalidInput:
        raise _refuse(shown, f"unknown revision {rev!r} (not a branch, tag or commit of this repository)") from None
    return _local_commit(clone, "FETCH_HEAD", shown)


def _wanted(includes: Sequence[str], exact: str) -> tuple[Callable[[str], bool], str]:
    """Which paths to read, and how to name them in a refusal."""
    if exact:
        return (lambda path: path == exact), exact
    patterns = [glob_pattern(pattern) for pattern in includes]
    return (lambda path: any(pattern.match(path) for pattern in patterns)), ", ".join(includes)


def _files(folder: Path, recorded: str, shown: str, rev: str, commit: str, wanted: Callable[[str], bool],
           described: str, max_bytes: int, *, remote: bool = False) -> RepositoryFiles:
    # Without --long: listing sizes would make a clone without file contents fetch every file.
    listing = _git(["ls-tree", "-r", "-z", "--full-tree", commit], shown, cwd=folder)
    candidates: list[tuple[str, str]] = []
    skipped: list[str] = []
    matched = 0
    for record in listing.split(b"\0"):
        if not record:
            continue
        meta, _, raw_path = record.partition(b"\t")
        try:
            path = raw_path.decode("utf-8")
        except UnicodeDecodeError:
            path = raw_path.decode("utf-8", "replace")
            if wanted(path):
                matched += 1
                skipped.append(f"{path}: its name is not UTF-8")
            continue
        if not wanted(path):
            continue
        matched += 1
        mode, kind, obj = meta.decode().split()
        if kind == "commit":
            skipped.append(f"{path}: a submodule, not a file")
        elif mode == "120000":
            skipped.append(f"{path}: a symbolic link, not a file")
        else:
            candidates.append((path, obj))
    if not matched:
        raise _refuse(shown, f"no file at {rev} ({commit[:12]}) matches {described}")
    if remote and candidates:
        _prefetch(folder, [obj for _, obj in candidates])
    chosen: list[tuple[str, str]] = []
    total = 0
    for (path, obj), size in zip(candidates, _sizes(folder, [obj for _, obj in candidates], shown), strict=True):
        if size > max_bytes:
            skipped.append(f"{path}: {size:,} bytes, over the {max_bytes:,} a source may have")
        elif total + size > MAX_TOTAL_BYTES:
            skipped.append(f"{path}: the files before it hold {total:,} bytes already, the most read at once")
        else:
            total += size
            chosen.append((path, obj))
    contents = _blobs(folder, [obj for _, obj in chosen], shown)
    now = datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")
    files: list[Fetched] = []
    for (path, _), data in zip(chosen, contents, strict=True):
        if b"\0" in data[:8192] and not data.startswith(b"%PDF-"):
            skipped.append(f"{path}: binary")
            continue
        link = permalink(recorded, commit, path)
        files.append(Fetched(link, data, "", now, Path(path).name, version=f"commit {commit[:12]}",
                             repository=recorded, rev=rev, commit=commit, path=path, permalink=link))
    return RepositoryFiles(recorded, rev, commit, tuple(files), tuple(skipped))


def _prefetch(clone: Path, objects: Sequence[str]) -> None:
    """Fetch the chosen files' contents into a clone made without them, in one request (what git
    does for one missing object at a time otherwise). A failure is left to the reads to report."""
    with contextlib.suppress(InvalidInput):
        _git(["-c", "fetch.negotiationAlgorithm=noop", "fetch", "--quiet", "origin", "--no-tags",
              "--no-write-fetch-head", "--recurse-submodules=no", "--filter=blob:none", "--stdin"], str(clone),
             cwd=clone, stdin="\n".join(objects) + "\n")


def _sizes(folder: Path, objects: Sequence[str], shown: str) -> list[int]:
    """The size in bytes of each of ``objects`` (``git cat-file --batch-check``)."""
    if not objects:
        return []
    out = _git(["cat-file", "--batch-check"], shown, cwd=folder, stdin="\n".join(objects) + "\n")
    sizes = []
    for obj, line in zip(objects, out.decode("utf-8", "replace").splitlines(), strict=True):
        parts = line.split()
        if len(parts) != 3 or not parts[2].isdigit():
            raise _refuse(shown, f"git could not read object {obj} ({line})")
        sizes.append(int(parts[2]))
    return sizes


def _blobs(folder: Path, objects: Sequence[str], shown: str) -> list[bytes]:
    """The contents of ``objects``, read by one ``git cat-file --batch``."""
    if not objects:
        return []
    out = _git(["cat-file", "--batch"], shown, cwd=folder, stdin="\n".join(objects) + "\n")
    contents, at = [], 0
    for obj in objects:
        newline = out.index(b"\n", at)
        header = out[at:newline].split()
        if len(header) != 3 or header[1] != b"blob":
            raise _refuse(shown, f"git could not read object {obj} ({out[at:newline].decode(errors='replace')})")
        size = int(header[2])
        contents.append(out[newline + 1:newline + 1 + size])
        at = newline + 1 + size + 1
    return contents


def read_file(repository: str, rev: str, path: str) -> tuple[str, Fetched]:
    """(commit, the file) of one file of ``repository`` at ``rev``: what ``source update`` and ``source check`` re-read.

    Raises :class:`InvalidInput` when the file is not at that commit or cannot be pinned.
    """
    found = read_repository(repository, rev, [], exact=path)
    match = next((f for f in found.files if f.path == path), None)
    if match is None:
        raise _refuse(repository, found.skipped[0] if found.skipped else f"{path}: not in this commit")
    return found.commit, match
