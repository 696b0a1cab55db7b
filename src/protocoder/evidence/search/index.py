"""One protocol's index: built from its pinned snapshots, cached under ``.protocoder/find/``.

The cache folder is named by a hash of the protocol, its snapshots' SHA-256 and the formats
(the index's and the extractor's), so a new version of a source makes the next query rebuild
it. It is written to a temporary folder and renamed into place, with a manifest of what it
was built from and the SHA-256 of each of its files; an index is used only when its manifest
names this protocol's snapshots and every file matches its hash, else it is rebuilt. Cleaning
up deletes only files a manifest (or, for an interrupted build, find's marker) says find
wrote; ``.protocoder`` and every folder under it must be real folders, checked before
anything is read, created or deleted there.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...errors import Rejected
from ...storage.state import check_state_folder, remove_made, state_folder
from ..extract import EXTRACTOR_VERSION
from . import semantic
from .passage import Passage
from .ranking import PassageIndex
from .saved import SavedBM25

if TYPE_CHECKING:
    from ...model import Protocol
    from ...storage.workspace import Review


INDEX_FORMAT = 11
"""Raised when the passages or the index change shape; cached indexes of other formats are rebuilt (9: a file
listing in a code block is one passage of kind ``listing``, and a table whose rows describe is of kind
``reference``; 10: Chinese, Japanese and Korean text is indexed as pairs of characters, and a blank line ending
in CRLF ends a paragraph; 11: the commands of a code block written without a blank line between them are one
passage, ``kinds.code_groups``)."""

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
    """The name of a protocol's cached index: a hash of the protocol's id, its pinned snapshots' SHA-256
    and media types, the index's format and the extractor's version."""
    return hashlib.sha256(json.dumps(_key_inputs(protocol), separators=(",", ":")).encode()).hexdigest()[:24]


def _key_inputs(protocol: Protocol) -> list[Any]:
    pinned = sorted([s.id, s.sha256, s.media_type] for s in protocol.sources if s.has_snapshot)
    return [INDEX_FORMAT, EXTRACTOR_VERSION, protocol.id, pinned, semantic.model_id()]


def protocol_passages(review: Review, protocol_id: str) -> ProtocolPassages:
    """The index of a protocol's pinned sources, from the cache when it is current and verified.

    Raises :class:`Rejected` for an unknown protocol, one without pinned sources, one none of
    whose snapshots is present here, or a cache folder (``.protocoder``, ``.protocoder/find``
    or the protocol's folder in it) that is a symbolic link or a file: checked before anything
    is read or written there.
    """
    try:
        protocol = review.protocol(protocol_id)
    except KeyError:
        raise Rejected(f"no protocol {protocol_id!r} in this workspace (list them with: protocoder protocol "
                       "list)") from None
    pinned = [s for s in protocol.sources if s.has_snapshot]
    if not pinned:
        raise Rejected(f"protocol {protocol_id!r} has no pinned sources to search; pin one with: protocoder "
                       f"source add {protocol_id} FILE")
    folder = check_state_folder(review.paths, CACHE_DIR, protocol_id)
    key = cache_key(protocol)
    cached = read_index(folder / key, _key_inputs(protocol))
    if cached is not None:
        return cached
    # Building: what a query against a cached index never loads (the extractors, the cutting into passages).
    from ..snapshots import Snapshots
    from .passages import source_passages

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
        try:
            raw = snapshots.raw(item.sha256, item.media_type)
        except Exception:  # noqa: BLE001 - as above: a snapshot that cannot be read is missing
            missing.append(item.id)
            continue
        read.append(item.id)
        passages.extend(source_passages(item.id, extracted, raw))
        # The extraction and the raw text go before the next source is read and before BM25 is built
        # (together they weigh more than the passages cut from them).
        del extracted, raw
    if not read:
        names = ", ".join(missing)
        raise Rejected(f"no snapshot of protocol {protocol_id!r} is present here ({names}); copy the files "
                       f"into sources/, or pin them again with: protocoder source update {protocol_id} "
                       f"{missing[0]} FILE")
    result = ProtocolPassages(PassageIndex.build(passages), tuple(read), tuple(missing))
    if not missing:
        # An index missing sources is not cached: it would hide them once they are copied in.
        _save_cached(review, protocol, key, result)
    return result


_PASSAGES_FILE = "passages.json"
_VECTORS_FILE = "semantic.npy"
MANIFEST_FILE = "manifest.json"
"""Written last into each cached index: what it was built from and the SHA-256 of every file protocoder
wrote into it. Loading checks both; cleaning up deletes only the files it lists."""
MARKER_FILE = ".protocoder-find"
"""Written first into a new index folder: a folder without it (and without a manifest) was not made
by ``find``, and nothing in it is ever deleted."""
_MADE_BY = "protocoder find"


def _save_cached(review: Review, protocol: Protocol, key: str, result: ProtocolPassages) -> None:
    """Write the index to ``.protocoder/find/<protocol>/<key>`` (temporary folder, then rename) and
    remove what this protocol's earlier indexes were, file by file as their manifests list them.

    The folders on the way are checked for links before anything is made (:func:`state_folder`).
    A cache that cannot be written (a read-only checkout) is not written: the search works
    without it.
    """
    try:
        folder = state_folder(review.paths, CACHE_DIR, protocol.id)
    except OSError:
        return  # a read-only checkout: searched without a cache (a link is refused, not passed over)
    target = folder / key
    try:
        temporary = Path(tempfile.mkdtemp(prefix=f".{key}.", suffix=".tmp", dir=folder))
    except OSError:
        return
    try:
        (temporary / MARKER_FILE).write_text(_MADE_BY + "\n", encoding="utf-8")
        write_index(temporary, result, _key_inputs(protocol))
        if _is_made_folder(target):
            # An index under this key that did not verify (it was rebuilt): its files go, then ours take its place.
            _remove_index(target)
        # Refused when another process cached the same key first (theirs is as good) or a folder find did
        # not make is there (it stays; the search works without the cache).
        with contextlib.suppress(OSError):
            os.rename(temporary, target)
    except OSError:
        pass
    finally:
        if temporary.exists():
            _remove_index(temporary)
    try:
        others = list(folder.iterdir())
    except OSError:
        return
    for other in others:
        if other.name != key and _is_made_folder(other):
            _remove_index(other)


def _is_made_folder(path: Path) -> bool:
    """True for a real folder (not a link) holding find's marker: one this code made."""
    try:
        if not stat.S_ISDIR(path.lstat().st_mode):
            return False
        marker = path / MARKER_FILE
        return stat.S_ISREG(marker.lstat().st_mode) and marker.read_text(encoding="utf-8").strip() == _MADE_BY
    except (OSError, UnicodeDecodeError):
        return False


_BM25_PARTS = ("body", "heading")


def _remove_index(folder: Path) -> None:
    """Delete an index folder find made: the files its manifest lists, else (a build that was
    interrupted before its manifest) the files find writes by name; never anything else."""
    made = [MARKER_FILE, MANIFEST_FILE, _PASSAGES_FILE, _VECTORS_FILE]
    try:
        manifest = json.loads((folder / MANIFEST_FILE).read_text(encoding="utf-8"))
        made += [str(name) for name in manifest.get("files", {})]
    except (OSError, ValueError, AttributeError):
        pass
    for part in _BM25_PARTS:
        try:
            made += [f"{part}/{p.name}" for p in (folder / part).iterdir()
                     if p.name.endswith((".index.npy", ".index.json"))]
        except OSError:
            continue
    # The marker last: a folder interrupted half-way is still recognisably find's.
    made.remove(MARKER_FILE)
    remove_made(folder, [*dict.fromkeys(made), MARKER_FILE])


def write_index(folder: Path, result: ProtocolPassages, key_inputs: list[Any] | None = None) -> None:
    """Write ``result`` into the (new, empty) ``folder``: bm25s's own files, the passages, and last
    the manifest (what the index was built from and the SHA-256 of each file written)."""
    index = result.index
    for part in _BM25_PARTS:
        getattr(index, part).save(str(folder / part), show_progress=False)
    # json.dumps of {"format", "sources", "passages": [[...], ...]}, written a passage at a time: the
    # whole document as one string (and its rows as lists) would double what the passages weigh.
    with (folder / _PASSAGES_FILE).open("w", encoding="utf-8") as handle:
        handle.write(f'{{"format": {json.dumps(INDEX_FORMAT)}, "sources": '
                     f'{json.dumps(list(result.sources), ensure_ascii=False)}, "passages": [')
        for number, p in enumerate(index.passages):
            handle.write((", " if number else "") + json.dumps(
                [p.source, p.heading, p.start, p.end, p.text, p.raw_start, p.raw_end, p.kind], ensure_ascii=False))
        handle.write("]}")
    if index.vectors is not None:
        import numpy as np

        with (folder / _VECTORS_FILE).open("wb") as handle:
            np.save(handle, index.vectors.astype("float16"), allow_pickle=False)
    files = {}
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder).as_posix()
        if path.is_file() and not path.is_symlink() and relative not in (MARKER_FILE, MANIFEST_FILE):
            files[relative] = _file_sha256(path)
    manifest = {"made_by": _MADE_BY, "key": key_inputs, "files": files}
    (folder / MANIFEST_FILE).write_text(json.dumps(manifest), encoding="utf-8")


def _file_sha256(path: Path) -> str:
    """The SHA-256 of a file, read in chunks (the passages of a big source are tens of MB)."""
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def read_index(folder: Path, key_inputs: list[Any] | None = None) -> ProtocolPassages | None:
    """The index :func:`write_index` wrote in ``folder``, or None when it is missing, unreadable, or
    does not verify: its manifest must name ``key_inputs`` (the protocol, its snapshots, the formats)
    and every file it lists must have the SHA-256 it lists. The caller builds the index again."""
    try:
        if not stat.S_ISDIR(folder.lstat().st_mode):
            return None
        manifest = json.loads((folder / MANIFEST_FILE).read_text(encoding="utf-8"))
        if manifest.get("made_by") != _MADE_BY or (key_inputs is not None and manifest.get("key") != key_inputs):
            return None
        files = manifest["files"]
        for name in (_PASSAGES_FILE, *(f"{part}/params.index.json" for part in _BM25_PARTS)):
            if name not in files:
                return None
        for name, digest in files.items():
            path = folder / name
            if _plain_relative(name) is None or path.is_symlink():
                return None
            if hashlib.sha256(path.read_bytes()).hexdigest() != digest:
                return None
        payload = json.loads((folder / _PASSAGES_FILE).read_text(encoding="utf-8"))
        if payload.get("format") != INDEX_FORMAT:
            return None
        passages = [Passage(str(s), str(h), int(a), int(b), str(t), ra, rb, str(k))
                    for s, h, a, b, t, ra, rb, k in payload["passages"]]
        sources = tuple(str(s) for s in payload["sources"])
        if key_inputs is not None:
            pinned = {entry[0] for entry in key_inputs[3]}
            if set(sources) != pinned or any(p.source not in pinned for p in passages):
                return None
        # Read without bm25s (SavedBM25): a query imports neither it, nor the scipy it brings, nor numpy.
        body, heading = (SavedBM25.load(folder / part) for part in _BM25_PARTS)
        if body is None or heading is None or any(part.scores["num_docs"] != max(len(passages), 1)
                                                  for part in (body, heading)):
            return None
        vectors = None
        if key_inputs is not None and key_inputs[-1] is not None:
            import numpy as np

            if _VECTORS_FILE not in files:
                return None
            vectors = np.load(folder / _VECTORS_FILE, allow_pickle=False).astype("float32")
            if vectors.ndim != 2 or vectors.shape[0] != len(passages):
                return None
        return ProtocolPassages(PassageIndex(passages, body, heading, vectors), sources)
    except (OSError, ValueError, KeyError, TypeError, IndexError, EOFError, AttributeError):
        # Damaged (a truncated array, edited JSON): the caller builds the index again.
        return None


def _plain_relative(name: str) -> str | None:
    parts = name.split("/")
    return None if name.startswith("/") or any(p in ("", ".", "..") for p in parts) else name
