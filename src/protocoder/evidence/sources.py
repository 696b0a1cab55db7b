"""Pinning sources: ``protocoder source add / list / update / remove``.

Each operation reads the document, extracts its text in a bounded child process, and only
then writes: the snapshot and its sidecar under ``sources/``, then ``protocol.yaml``. A
document that cannot be read leaves the workspace as it was.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import date
from pathlib import Path

from ..errors import InvalidInput, Rejected
from ..model import Protocol, Source, SourceVersion, is_slug, slugify
from ..storage.formats import url_problem
from ..storage.store import Store
from ..storage.workspace import Review, load_review
from .extract import Extracted
from .quotes import Anchor, QuoteRef, all_quotes, anchor, reanchor
from .snapshots import (
    Snapshots,
    extract_document,
    read_document,
    sidecar_file,
    sidecar_text,
    snapshot_file,
)


@dataclass(frozen=True)
class Pinned:
    """A snapshot just pinned, with what it did to the quotes of its source."""

    protocol: str
    source: Source
    file: Path
    extracted: Extracted
    unchanged: bool = False
    moved: tuple[QuoteRef, ...] = ()
    """Quotes still found in the new version (now anchored to it)."""
    drifted: tuple[QuoteRef, ...] = ()
    """Quotes not found in the new version: drifted evidence."""


def _protocol(review: Review, protocol_id: str) -> Protocol:
    try:
        protocol = review.protocol(protocol_id)
    except KeyError:
        raise Rejected(f"no protocol {protocol_id!r} in this workspace (see: protocoder protocol list)") from None
    # Rewriting a protocol file that did not parse cleanly would drop what could not be read.
    shown = review.paths.show(review.paths.protocol_file(protocol_id))
    errors = [problem for problem in review.errors if problem.path == shown]
    if errors:
        raise InvalidInput(errors)
    return protocol


def _read(file: Path) -> tuple[bytes, str, str, Extracted]:
    display = str(file)
    data = read_document(file, display)
    sha256, media_type, extracted = extract_document(data, file.name, display)
    return data, sha256, media_type, extracted


def _accessed(value: date | None) -> date:
    return value or date.today()


def _default_version(sha256: str) -> str:
    return f"snapshot {sha256[:12]}"


def _store(review: Review, sha256: str, media_type: str, data: bytes, extracted: Extracted) -> Path:
    paths = review.paths
    path = snapshot_file(paths, sha256, media_type)
    Store(paths).write_snapshot(path, data, sidecar_file(paths, sha256), sidecar_text(sha256, media_type, extracted))
    return path


def add_source(review: Review, protocol_id: str, file: Path, *, source_id: str | None = None,
               title: str | None = None, url: str | None = None, version: str | None = None,
               accessed: date | None = None) -> Pinned:
    """Pin a local copy of a reviewed document as a new source of a protocol.

    The id defaults to a slug of the title (the document's own title, else the file name),
    made unique within the protocol.
    """
    protocol = _protocol(review, protocol_id)
    if url and (problem := url_problem(url)):
        raise Rejected(problem)
    if source_id is not None and not is_slug(source_id):
        raise Rejected(f"source id {source_id!r} is not a safe id (lowercase letters, digits, and single '-', "
                       "'_' or '.' between them)")
    if source_id is not None and any(s.id == source_id for s in protocol.sources):
        raise Rejected(f"protocol {protocol_id!r} already has a source {source_id!r}; pin a new version of it "
                       f"with: protocoder source update {protocol_id} {source_id} FILE")
    data, sha256, media_type, extracted = _read(file)
    twin = next((s for s in protocol.sources if s.sha256 == sha256), None)
    if twin is not None:
        raise Rejected(f"{file} is already pinned for {protocol_id!r} as source {twin.id!r}")
    title = (title or extracted.title or file.stem).strip()
    if source_id is None:
        base = slugify(title)[:48].strip("-") or "source"
        source_id, number = base, 2
        while any(s.id == source_id for s in protocol.sources):
            source_id, number = f"{base}-{number}", number + 1
    source = Source(title, (url or "").strip(), (version or _default_version(sha256)).strip(), _accessed(accessed),
                    source_id, sha256, media_type)
    path = _store(review, sha256, media_type, data, extracted)
    Store(review.paths).update_protocol(replace(protocol, sources=(*protocol.sources, source)))
    return Pinned(protocol_id, source, path, extracted)


def update_source(review: Review, protocol_id: str, source_id: str, file: Path, *, version: str | None = None,
                  accessed: date | None = None, url: str | None = None, title: str | None = None) -> Pinned:
    """Pin a new version of a source, and report which quotes of it are no longer found.

    Quotes still found move to the new snapshot; the others stay anchored to the version
    they were taken from, as drifted evidence. Pinning the file that is pinned already
    changes nothing but re-anchors quotes found in it (so an interrupted update can be run
    again).
    """
    protocol = _protocol(review, protocol_id)
    old = next((s for s in protocol.sources if s.id == source_id), None)
    if old is None:
        ids = ", ".join(s.id for s in protocol.sources if s.id) or "none"
        raise Rejected(f"protocol {protocol_id!r} has no source {source_id!r} (sources with ids: {ids}; add one "
                       f"with: protocoder source add {protocol_id} FILE)")
    if url and (problem := url_problem(url)):
        raise Rejected(problem)
    data, sha256, media_type, extracted = _read(file)
    unchanged = sha256 == old.sha256
    path = _store(review, sha256, media_type, data, extracted)
    if unchanged:
        source = old
    else:
        previous = tuple(v for v in old.previous if v.sha256 != sha256)
        if old.has_snapshot:
            previous += (SourceVersion(old.version, old.accessed, old.sha256, old.media_type),)
        source = replace(old, sha256=sha256, media_type=media_type, previous=previous,
                         version=(version or _default_version(sha256)).strip(), accessed=_accessed(accessed),
                         url=(url or old.url).strip(), title=(title or old.title).strip())
        sources = tuple(source if s.id == source_id else s for s in protocol.sources)
        Store(review.paths).update_protocol(replace(protocol, sources=sources))
    fresh = load_review(review.paths.root)
    moved, drifted = reanchor(fresh, fresh.protocol(protocol_id), source, [old.sha256] if old.sha256 else [],
                              Snapshots(review.paths))
    return Pinned(protocol_id, source, path, extracted, unchanged, tuple(moved), tuple(drifted))


def remove_source(review: Review, protocol_id: str, source_id: str) -> list[Path]:
    """Unpin a source no quote uses; delete its snapshots that no other source pins. Returns files deleted."""
    protocol = _protocol(review, protocol_id)
    source = next((s for s in protocol.sources if s.id == source_id), None)
    if source is None:
        raise Rejected(f"protocol {protocol_id!r} has no source {source_id!r}")
    users = [ref for ref in all_quotes(review) if ref.cell.protocol == protocol_id and ref.quote.source == source_id]
    if users:
        cells = sorted({f"{ref.key} ({ref.cell.reviewer})" for ref in users})
        shown = ", ".join(cells[:5]) + (f" and {len(cells) - 5} more" if len(cells) > 5 else "")
        raise Rejected(f"source {source_id!r} is quoted {len(users)} time(s), in {shown}; remove those quotes "
                       f"first (protocoder quote remove --cell PROTOCOL/FIELD --reviewer NAME --source {source_id})")
    remaining = tuple(s for s in protocol.sources if s is not source)
    store = Store(review.paths)
    store.update_protocol(replace(protocol, sources=remaining))
    return store.remove_files(_unused_files(review, source, protocol_id))


def _unused_files(review: Review, source: Source, protocol_id: str) -> list[Path]:
    mine = {source.sha256: source.media_type} if source.has_snapshot else {}
    mine.update({v.sha256: v.media_type for v in source.previous})
    used: set[str] = set()
    for protocol in review.protocols:
        for other in protocol.sources:
            if protocol.id == protocol_id and other is source:
                continue
            used.add(other.sha256)
            used.update(v.sha256 for v in other.previous)
    files = []
    for sha256, media_type in mine.items():
        if sha256 and sha256 not in used:
            files += [snapshot_file(review.paths, sha256, media_type), sidecar_file(review.paths, sha256)]
    return files


@dataclass(frozen=True)
class SourceRow:
    """One pinned source as ``source list`` shows it."""

    protocol: str
    source: Source
    state: str
    """``present``, ``not present here`` (genuinely absent), ``changed since pinned``, ``no snapshot``, or
    ``not the pinned file: ...`` (a link, a folder: see :attr:`SnapshotState.impostor`)."""
    quotes: int
    drifted: int


def source_rows(review: Review, protocol_ids: Iterable[str] | None = None) -> list[SourceRow]:
    """Every pinned source (of the given protocols), with its snapshot's state and how often it is quoted."""
    wanted = set(protocol_ids) if protocol_ids is not None else None
    snapshots = Snapshots(review.paths)
    counts: dict[tuple[str, str], list[int]] = {}
    for ref in all_quotes(review):
        entry = counts.setdefault((ref.cell.protocol, ref.quote.source), [0, 0])
        entry[0] += 1
        if ref.source is not None and anchor(ref.quote, ref.source) is Anchor.DRIFTED:
            entry[1] += 1
    rows = []
    for protocol in review.protocols:
        if wanted is not None and protocol.id not in wanted:
            continue
        for source in protocol.sources:
            if not source.has_snapshot:
                state = "no snapshot"
            else:
                found = snapshots.state(source.sha256, source.media_type)
                if found.impostor:
                    state = f"not the pinned file: {found.impostor}"
                else:
                    state = ("present" if found.intact else "changed since pinned") if found.present \
                        else "not present here"
            quoted, drifting = counts.get((protocol.id, source.id), [0, 0]) if source.id else (0, 0)
            rows.append(SourceRow(protocol.id, source, state, quoted, drifting))
    return rows
