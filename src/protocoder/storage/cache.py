"""Small answers kept in ``.protocoder/cache/`` so that a later command need not work them out again.

A cache file is one JSON object written atomically by the module that made it (never through a
symbolic link, never outside ``.protocoder/cache/``), with a key of everything its answer depends
on; a reader that finds anything unreadable, unexpected or keyed differently treats it as absent
and works the answer out itself. Nothing here is ever required: a workspace that cannot take a
cache (read-only, ``.protocoder`` a link) works as before, without one.

Users: the ledger's git check (:mod:`protocoder.lifecycle.gitcache`) and the parsed bibliography
(:mod:`.bibliography`).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ..errors import InvalidInput
from .files import atomic_write_text, read_capped

CACHE_DIR = "cache"
"""The caches' folder in ``.protocoder/``; it holds a ``.gitignore`` of ``*``, so that git never
takes a cache into a commit (where two branches' caches would conflict at every merge), also in
a repository that does not ignore ``.protocoder/``."""


def read_cache(state_dir: Path, name: str, max_bytes: int) -> dict[str, Any] | None:
    """The JSON object of ``.protocoder/cache/<name>``, or None when it is missing, read through a
    link, larger than ``max_bytes`` (then not ours) or not a JSON object."""
    folder = state_dir / CACHE_DIR
    path = folder / name
    try:
        if any(os.path.islink(link) for link in (state_dir, folder, path)) or not os.path.isfile(path):
            return None
        data = json.loads(read_capped(path, str(path), max_bytes))
    except (OSError, ValueError, InvalidInput):
        return None
    return data if isinstance(data, dict) else None


def write_cache(state_dir: Path, name: str, payload: dict[str, Any]) -> None:
    """Replace ``.protocoder/cache/<name>`` with ``payload`` (atomically); quietly nothing when the
    folder cannot take it or a link is on the way."""
    folder = state_dir / CACHE_DIR
    if any(os.path.islink(path) for path in (state_dir, folder, folder / name, folder / ".gitignore")):
        return  # never written through a link
    try:
        state_dir.mkdir(exist_ok=True)
        folder.mkdir(exist_ok=True)
        if not os.path.lexists(folder / ".gitignore"):
            atomic_write_text(folder / ".gitignore", "# caches of protocoder, never committed\n*\n")
        atomic_write_text(folder / name, json.dumps(payload, ensure_ascii=False) + "\n")
    except (OSError, InvalidInput):
        pass  # a cache is an optimisation: a workspace that cannot take one works without it
