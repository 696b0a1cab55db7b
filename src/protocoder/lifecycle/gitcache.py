"""The ledger's git check, paid for once per change.

:func:`~.githistory.lost_in_git` reads every committed version of ``corrections.yaml``
(three git processes, and one blob per commit that holds the file) and runs for every
command that reads the history: ``validate``, ``render``, ``status``, ``freeze``,
``correct``. Its answer depends only on the commit at ``HEAD`` (which fixes every commit
and blob it reads) and on the working ledger, so it is kept in
``.protocoder/cache/ledger-check.json`` under a key made of both: HEAD's commit id and where
the workspace sits in the repository (one ``git rev-parse``), and a digest of the ledger's
entries. A later command runs that one process instead of three, and the whole check again
only when a commit, a checkout or a new correction changed the key.

A cache carried in from elsewhere (a copied folder, a ``.protocoder/`` committed by
mistake) cannot hide lost entries: its key would have to name the commit at HEAD, which a
file committed in that very history cannot know. Anything unreadable or unexpected in the
file counts as no cache; a cache that cannot be written (a read-only workspace, a
``.protocoder`` that is a link) is simply not kept.
"""

from __future__ import annotations

import hashlib
import subprocess
from collections.abc import Sequence

from ..errors import Problem
from ..storage.cache import CACHE_DIR, read_cache, write_cache
from ..storage.paths import Paths
from .corrections import Correction
from .githistory import lost_in_git

__all__ = ["CACHE_DIR", "CACHE_FILE", "cache_key", "lost_in_git_once"]

CACHE_FILE = "ledger-check.json"
"""The cache's name in :data:`CACHE_DIR`."""

FORMAT = 1
"""Bumped when what the check reports changes, so that an older answer is never reused."""

MAX_CACHE_BYTES = 1 << 20
"""A larger file is not ours (the answer is a few problems at most)."""


def lost_in_git_once(paths: Paths, corrections: Sequence[Correction], name: str) -> list[Problem]:
    """:func:`~.githistory.lost_in_git` of the tracked ledger ``name``, answered from
    ``.protocoder/`` while neither HEAD nor the ledger has changed since it last ran."""
    key = cache_key(paths, corrections)
    if key is None:  # git missing, or nothing committed yet
        return lost_in_git(paths, corrections, name)
    kept = _read(paths, key)
    if kept is not None:
        return kept
    found = lost_in_git(paths, corrections, name)
    _write(paths, key, found)
    return found


def cache_key(paths: Paths, corrections: Sequence[Correction]) -> str | None:
    """A digest of what the check reads: the commit at HEAD, the workspace's place in the
    repository, the ledger's entries (with the links a merge records) and how it is shown."""
    try:
        done = subprocess.run(["git", "rev-parse", "--show-prefix", "--show-toplevel", "HEAD"], cwd=paths.root,
                              capture_output=True, text=True, check=False)
    except OSError:
        return None
    lines = done.stdout.splitlines()
    if done.returncode != 0 or len(lines) < 2 or len(lines[-1]) not in (40, 64):
        return None
    digest = hashlib.sha256()
    for part in (str(FORMAT), done.stdout, paths.show(paths.corrections)):
        digest.update(part.encode("utf-8", "surrogateescape") + b"\0")
    for entry in corrections:
        links = ",".join(f"{item.old}>{item.new}" for item in (*entry.rechained, *entry.joined))
        digest.update(f"{entry.hash} {links}\n".encode())
    return digest.hexdigest()


def _read(paths: Paths, key: str) -> list[Problem] | None:
    data = read_cache(paths.state_dir, CACHE_FILE, MAX_CACHE_BYTES)
    if data is None or data.get("format") != FORMAT or data.get("key") != key:
        return None
    try:
        problems = []
        for item in data["problems"]:
            path, line, column, message, severity = item
            if not (isinstance(path, str) and isinstance(message, str) and severity in ("error", "warning")
                    and type(line) is int and type(column) is int):
                return None
            problems.append(Problem(path, line, column, message, severity))
        return problems
    except (ValueError, TypeError, KeyError):
        return None


def _write(paths: Paths, key: str, problems: list[Problem]) -> None:
    write_cache(paths.state_dir, CACHE_FILE, {
        "format": FORMAT, "key": key,
        "problems": [[p.path, p.line, p.column, p.message, p.severity] for p in problems]})
