"""One protocol's index: built from its pinned snapshots, cached under ``.protocoder/find/``.

The cache folder is named by a hash of the snapshots' SHA-256 and the formats, so a new
version of a source makes the next query rebuild it; it is written to a temporary folder
and renamed into place, and a workspace where it cannot be written is searched without it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ...errors import Rejected
from ..extract import EXTRACTOR_VERSION
from .passages import Passage, source_passages
from .ranking import PassageIndex

if TYPE_CHECKING:
    from ...model import Protocol
    from ...storage.workspace import Review


INDEX_FORMAT = 3
"""Raised when the passages or the index change shape; cached indexes of other formats are rebuilt."""

CACHE_DIR = "find"
"""The folder under ``.protocoder/`` holding one cached index per protocol."""


@dataclass
class ProtocolPassages:
    """The searchable passages of one protocol, and the sources that could not be read."""

    index: PassageIndex
    sources: tuple[str, ...]
    """Ids of the sources whose passages are in the index."""
    missing: tuple[str, ...] = ()
    """Ids of pinned sources whose snapshot is not present here (or cannot be read)."""


def cache_key(protocol: Protocol) -> str:
    """The name of a protocol's cached index: a hash of its pinned snapshots and the formats."""
    pinned = sorted((s.id, s.sha256, s.media_type) for s in protocol.sources if s.has_snapshot)
    payload = json.dumps([INDEX_FORMAT, EXTRACTOR_VERSION, pinned], separators=(",", ":"))
    return hashlib.sha256(payload.encode()).hexdigest()[:24]


def protocol_passages(review: Review, protocol_id: str) -> ProtocolPassages:
    """The index of a protocol's pinned sources, from the cache when it is current.

    Raises :class:`Rejected` for an unknown protocol, one without pinned sources, or one
    none of whose snapshots is present here.
    """
    from ..snapshots import Snapshots

    try:
        protocol = review.protocol(protocol_id)
    except KeyError:
        raise Rejected(f"no protocol {protocol_id!r} in this workspace (list them with: protocoder protocol "
                       "list)") from None
    pinned = [s for s in protocol.sources if s.has_snapshot]
    if not pinned:
        raise Rejected(f"protocol {protocol_id!r} has no pinned sources to search; pin one with: protocoder "
                       f"source add {protocol_id} FILE")
    folder = review.paths.state_dir / CACHE_DIR / protocol_id
    key = cache_key(protocol)
    cached = read_index(folder / key)
    if cached is not None:
        return cached
    snapshots = Snapshots(review.paths)
    passages: list[Passage] = []
    read: list[str] = []
    missing: list[str] = []
    for item in pinned:
        state = snapshots.state(item.sha256, item.media_type)
        if not state.present or not state.intact:
            missing.append(item.id)
            continue
        try:
            extracted = snapshots.text(item.sha256, item.media_type)
        except Exception:  # noqa: BLE001 - InvalidInput from a snapshot that cannot be read: reported as missing
            missing.append(item.id)
            continue
        read.append(item.id)
        passages.extend(source_passages(item.id, extracted))
    if not read:
        names = ", ".join(missing)
        raise Rejected(f"no snapshot of protocol {protocol_id!r} is present here ({names}); copy the files "
                       f"into sources/, or pin them again with: protocoder source update {protocol_id} "
                       f"{missing[0]} FILE")
    result = ProtocolPassages(PassageIndex.build(passages), tuple(read), tuple(missing))
    if not missing:
        # An index missing sources is not cached: it would hide them once they are copied in.
        _save_cached(review, folder, key, result)
    return result


_PASSAGES_FILE = "passages.json"


def _save_cached(review: Review, folder: Path, key: str, result: ProtocolPassages) -> None:
    """Write the index to ``folder/key`` atomically (temporary folder, then rename); stale keys go.

    A cache that cannot be written (a read-only checkout, a ``.protocoder`` that is a link
    out of the workspace) is simply not written: the search works without it.
    """
    paths = review.paths
    if paths.state_dir.exists() and paths.leaves_workspace(paths.state_dir):
        return
    target = folder / key
    try:
        folder.mkdir(parents=True, exist_ok=True)
        if paths.leaves_workspace(folder):
            return
        temporary = Path(tempfile.mkdtemp(prefix=f".{key}.", suffix=".tmp", dir=folder))
        try:
            write_index(temporary, result)
            if target.is_dir():
                # A damaged index under this key (it was rebuilt because it could not be read):
                # moved aside in one rename, so that the new one can take its place.
                stale = Path(tempfile.mkdtemp(prefix=f".{key}.", suffix=".stale", dir=folder))
                os.replace(target, stale / key)
                shutil.rmtree(stale, ignore_errors=True)
            try:
                os.rename(temporary, target)
            except OSError:
                if not target.is_dir():
                    raise
                # Another process cached the same key first: theirs is as good as ours.
        finally:
            if temporary.exists():
                shutil.rmtree(temporary, ignore_errors=True)
        for other in folder.iterdir():
            if other.name != key and not other.name.startswith("."):
                shutil.rmtree(other, ignore_errors=True)
    except OSError:
        return


def write_index(folder: Path, result: ProtocolPassages) -> None:
    """Write ``result`` into the (new, empty) ``folder``: bm25s's own files and the passages."""
    index = result.index
    index.body.save(str(folder / "body"), show_progress=False)
    index.heading.save(str(folder / "heading"), show_progress=False)
    index.context.save(str(folder / "context"), show_progress=False)
    payload = {"format": INDEX_FORMAT, "sources": list(result.sources),
               "passages": [[p.source, p.heading, p.start, p.end, p.text, p.raw_start, p.raw_end, p.kind]
                            for p in index.passages]}
    (folder / _PASSAGES_FILE).write_text(json.dumps(payload, ensure_ascii=False), encoding="utf-8")


def read_index(folder: Path) -> ProtocolPassages | None:
    """The index :func:`write_index` wrote in ``folder``, or None when it is missing or unreadable."""
    import bm25s

    try:
        payload = json.loads((folder / _PASSAGES_FILE).read_text(encoding="utf-8"))
        if payload.get("format") != INDEX_FORMAT:
            return None
        passages = [Passage(str(s), str(h), int(a), int(b), str(t), ra, rb, str(k))
                    for s, h, a, b, t, ra, rb, k in payload["passages"]]
        with contextlib.redirect_stderr(None):
            body = bm25s.BM25.load(str(folder / "body"), show_progress=False, verbosity=0)
            heading = bm25s.BM25.load(str(folder / "heading"), show_progress=False, verbosity=0)
            context = bm25s.BM25.load(str(folder / "context"), show_progress=False, verbosity=0)
        if any(part.scores["num_docs"] != max(len(passages), 1) for part in (body, heading, context)):
            return None
        return ProtocolPassages(PassageIndex(passages, body, heading, context), tuple(payload["sources"]))
    except (OSError, ValueError, KeyError, TypeError, IndexError, EOFError):
        # Damaged (a truncated array, edited JSON): the caller builds the index again.
        return None
