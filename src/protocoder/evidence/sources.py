"""Pinning sources: ``protocoder source add / list / update / remove``.

Each operation reads the document, extracts its text in a bounded child process, and only
then writes: the snapshot and its sidecar under ``sources/``, then ``protocol.yaml``. A
document that cannot be read leaves the workspace as it was.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import date
from pathlib import Path

from ..errors import InvalidInput, Problem, Rejected
from ..model import Protocol, Source, SourceVersion, is_slug, slugify
from ..storage.formats import url_problem
from ..storage.store import Store
from ..storage.workspace import Review, load_review
from .extract import Extracted
from .fetch import Fetched
from .naming import short_id
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


def _read(file: Path | Fetched) -> tuple[bytes, str, str, Extracted]:
    """The bytes, hash, media type and text of a local file, or of what was fetched or read from a repository."""
    display = str(file)
    if isinstance(file, Fetched):
        data, name = file.data, file.name
    else:
        data, name = read_document(file, display), file.name
    sha256, media_type, extracted = extract_document(data, name, display)
    return data, sha256, media_type, extracted


def _new_source(document: Path | Fetched, title: str, url: str | None, version: str | None, accessed: date | None,
                source_id: str, sha256: str, media_type: str) -> Source:
    """The source a newly pinned document becomes: what it was fetched from, when it was."""
    if not isinstance(document, Fetched):
        return Source(title, (url or "").strip(), (version or _default_version(sha256)).strip(), _accessed(accessed),
                      source_id, sha256, media_type)
    version = version or document.version or _default_version(sha256)
    return Source(title, (url or document.url).strip(), version.strip(), _accessed(accessed), source_id, sha256,
                  media_type, **document.source_fields())


def _accessed(value: date | None) -> date:
    return value or date.today()


def _default_version(sha256: str) -> str:
    return f"snapshot {sha256[:12]}"


def _store(review: Review, sha256: str, media_type: str, data: bytes, extracted: Extracted) -> Path:
    paths = review.paths
    path = snapshot_file(paths, sha256, media_type)
    Store(paths).write_snapshot(path, data, sidecar_file(paths, sha256), sidecar_text(sha256, media_type, extracted))
    return path


def add_source(review: Review, protocol_id: str, file: Path | Fetched, *, source_id: str | None = None,
               title: str | None = None, url: str | None = None, version: str | None = None,
               accessed: date | None = None) -> Pinned:
    """Pin a local copy of a reviewed document as a new source of a protocol.

    ``file`` is a local file, or a document fetched from a URL (:func:`.fetch.fetch`), whose
    origin (final URL, retrieval time, validators, commit) is recorded with it.

    The id defaults to a short slug of the title (the document's own title, else the file name;
    :func:`.naming.short_id`), made unique within the protocol.
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
        base = short_id(title) or "source"
        source_id, number = base, 2
        while any(s.id == source_id for s in protocol.sources):
            source_id, number = f"{base}-{number}", number + 1
    source = _new_source(file, title, url, version, accessed, source_id, sha256, media_type)
    path = _store(review, sha256, media_type, data, extracted)
    Store(review.paths).update_protocol(replace(protocol, sources=(*protocol.sources, source)))
    return Pinned(protocol_id, source, path, extracted)


def update_source(review: Review, protocol_id: str, source_id: str, file: Path | Fetched | None, *,
                  version: str | None = None, accessed: date | None = None, url: str | None = None,
                  title: str | None = None) -> Pinned:
    """Pin a new version of a source, and report which quotes of it are no longer found.

    ``file`` None reads the source again from where it lives: its repository at its revision,
    else its URL (:func:`fetch_again`).

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
    if file is None:
        file = fetch_again(old, protocol_id)
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
                         version=(version or _fetched_version(file) or _default_version(sha256)).strip(),
                         accessed=_accessed(accessed),
                         url=(url or _new_url(file, old)).strip(), title=(title or old.title).strip(),
                         **_origin(file, old))
        sources = tuple(source if s.id == source_id else s for s in protocol.sources)
        Store(review.paths).update_protocol(replace(protocol, sources=sources))
    fresh = load_review(review.paths.root)
    moved, drifted = reanchor(fresh, fresh.protocol(protocol_id), source, [old.sha256] if old.sha256 else [],
                              Snapshots(review.paths))
    return Pinned(protocol_id, source, path, extracted, unchanged, tuple(moved), tuple(drifted))


def _origin(document: Path | Fetched, old: Source) -> dict[str, str]:
    """What a new version records of where it came from: a fetch's or a repository's details; a
    local file replaces a fetched version, so the old fetch's details go (its URL stays)."""
    if isinstance(document, Fetched):
        fields = document.source_fields()
        fields["rev"] = fields["rev"] or old.rev
        return fields
    return dict.fromkeys(("final_url", "retrieved_at", "etag", "last_modified", "commit", "permalink"), "")


def _fetched_version(document: Path | Fetched) -> str:
    """The version a fetched document names (an arXiv version, a commit), or ''."""
    return document.version if isinstance(document, Fetched) else ""


def _new_url(document: Path | Fetched, old: Source) -> str:
    """The URL of a new version: a repository file's new permalink when its URL was the old one."""
    if isinstance(document, Fetched) and document.permalink and old.url in ("", old.permalink):
        return document.permalink
    return old.url


def fetch_again(source: Source, protocol_id: str = "PROTOCOL") -> Fetched:
    """The source read again from where it lives: its file in its repository at its revision
    (a branch's current commit), else its URL. Raises :class:`Rejected` for a source that has
    neither (a local file: the command names the file to give)."""
    from .fetch import fetch
    from .repository import read_file

    if source.repository and source.path and not source.final_url:
        return read_file(source.repository, source.rev or source.commit, source.path)[1]
    if source.url:
        return fetch(source.url)
    raise Rejected(f"source {source.id!r} of {protocol_id!r} was pinned from a local file and has no URL; give the "
                   f"new version's file: protocoder source update {protocol_id} {source.id} FILE")


def add_url_source(review: Review, protocol_id: str, url: str, *, source_id: str | None = None,
                   title: str | None = None, version: str | None = None, accessed: date | None = None) -> Pinned:
    """Fetch ``url`` (:func:`.fetch.fetch`: a web page, a GitHub file at its branch's commit, an
    arXiv paper's PDF) and pin it as a new source of a protocol. Nothing is fetched when the
    protocol or the id is refused, nothing is written when the fetch or the document fails."""
    from .fetch import fetch

    protocol = _protocol(review, protocol_id)
    if source_id is not None and not is_slug(source_id):
        raise Rejected(f"source id {source_id!r} is not a safe id (lowercase letters, digits, and single '-', "
                       "'_' or '.' between them)")
    if source_id is not None and any(s.id == source_id for s in protocol.sources):
        raise Rejected(f"protocol {protocol_id!r} already has a source {source_id!r}; pin a new version of it "
                       f"with: protocoder source update {protocol_id} {source_id}")
    return add_source(review, protocol_id, fetch(url), source_id=source_id, title=title, version=version,
                      accessed=accessed)


@dataclass(frozen=True)
class PinnedFiles:
    """The files of a repository just pinned as sources, and the matching files that were not."""

    protocol: str
    repository: str
    commit: str
    pinned: tuple[Pinned, ...]
    skipped: tuple[str, ...]


def add_repository_sources(review: Review, protocol_id: str, repository: str, rev: str, includes: list[str], *,
                           accessed: date | None = None, source_id: str | None = None,
                           title: str | None = None) -> PinnedFiles:
    """Pin every file of ``repository`` at ``rev`` that matches ``includes`` as a source of a protocol.

    Each source is named after the file's path, records the repository, the revision, the
    full commit id, the path and (on GitHub or GitLab) the permalink. Binary files are skipped
    with a note. Every file is read and extracted before anything is written; a file pinned
    already (the same bytes) is skipped with a note. Raises when nothing is left to pin.
    ``source_id`` and ``title`` name the one file pinned (refused when more than one is).
    """
    from .repository import read_repository

    protocol = _protocol(review, protocol_id)
    if source_id is not None and not is_slug(source_id):
        raise Rejected(f"source id {source_id!r} is not a safe id (lowercase letters, digits, and single '-', "
                       "'_' or '.' between them)")
    if source_id is not None and any(s.id == source_id for s in protocol.sources):
        raise Rejected(f"protocol {protocol_id!r} already has a source {source_id!r}; pin a new version of it "
                       f"with: protocoder source update {protocol_id} {source_id}")
    found = read_repository(repository, rev, includes)
    skipped = list(found.skipped)
    taken = {s.id for s in protocol.sources}
    pinned_hashes = {s.sha256: s.id for s in protocol.sources if s.sha256}
    ready: list[tuple[Source, bytes, Extracted]] = []
    for document in found.files:
        try:
            data, sha256, media_type, extracted = _read(document)
        except InvalidInput as exc:
            skipped.append(f"{document.path}: {exc.problems[0].message if exc.problems else exc}")
            continue
        if sha256 in pinned_hashes:
            skipped.append(f"{document.path}: pinned already as source {pinned_hashes[sha256]!r}")
            continue
        base = slugify(document.path.replace("/", "-"))[:48].strip("-") or "file"
        file_id, number = base, 2
        while file_id in taken:
            file_id, number = f"{base}-{number}", number + 1
        taken.add(file_id)
        pinned_hashes[sha256] = file_id
        ready.append((_new_source(document, document.path, None, None, accessed, file_id, sha256, media_type),
                      data, extracted))
    if not ready:
        raise InvalidInput([Problem(repository, 0, 0, "nothing to pin: " + "; ".join(skipped))])
    if (source_id or title) and len(ready) > 1:
        raise InvalidInput([Problem(repository, 0, 0, f"--id and --title name one file, and {len(ready)} match "
                                    f"({', '.join(s.path for s, _, _ in ready[:3])}{', …' if len(ready) > 3 else ''});"
                                    " give an --include that matches one file")])
    if source_id or title:
        only, data, extracted = ready[0]
        ready[0] = (replace(only, id=source_id or only.id, title=(title or only.title).strip()), data, extracted)
    pinned = tuple(Pinned(protocol_id, source, _store(review, source.sha256, source.media_type, data, extracted),
                          extracted) for source, data, extracted in ready)
    Store(review.paths).update_protocol(replace(protocol, sources=(*protocol.sources, *(p.source for p in pinned))))
    return PinnedFiles(protocol_id, found.repository, found.commit, pinned, tuple(skipped))


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


_FULL_OR_SHORT_COMMIT = re.compile(r"^[0-9a-f]{7,64}$")


@dataclass(frozen=True)
class CheckRow:
    """What ``source check`` found for one source: whether it changed where it lives since it was pinned."""

    protocol: str
    source: Source
    state: str
    """``unchanged``, ``changed``, ``local`` (pinned from a file: nowhere to look) or ``cannot check``."""
    detail: str = ""
    """The new commit or version, or why it could not be checked."""
    quotes: int = 0
    """Quotes of this source (a changed one's: how many of them are still found, in ``found``)."""
    found: int = 0


def check_sources(review: Review, protocol_ids: Iterable[str] | None = None) -> list[CheckRow]:
    """Read each URL or repository source again and say which changed since pinned; writes nothing.

    A repository file (or a GitHub file URL) is compared by its branch's current commit first,
    so an unmoved branch costs one small request; anything else is fetched and compared by
    hash. For a changed source, each of its quotes is looked for in the new version's text as
    ``source update`` would look for it.
    """
    from .fetch import current_commit, fetch_if_changed
    from .locate import Haystack
    from .repository import resolve

    wanted = set(protocol_ids) if protocol_ids is not None else None
    quotes: dict[tuple[str, str], list[str]] = {}
    for ref in all_quotes(review):
        quotes.setdefault((ref.cell.protocol, ref.quote.source), []).append(ref.quote.text)
    rows = []
    for protocol in review.protocols:
        if wanted is not None and protocol.id not in wanted:
            continue
        for source in protocol.sources:
            texts = quotes.get((protocol.id, source.id), []) if source.id else []
            if not source.has_snapshot:
                continue  # nothing pinned to compare with
            if not (source.repository and source.path) and not source.url:
                rows.append(CheckRow(protocol.id, source, "local", "pinned from a file", len(texts)))
                continue
            try:
                if source.commit and source.commit.startswith(source.rev or "-") \
                        and _FULL_OR_SHORT_COMMIT.match(source.rev):
                    now = source.commit  # pinned to a commit, not a branch: it cannot move
                elif source.commit and source.final_url:
                    now = current_commit(source.url) or ""  # a GitHub file URL: its branch's commit
                elif source.commit and source.repository and source.path:
                    now = resolve(source.repository, source.rev or source.commit)
                else:
                    now = ""
                if now and now == source.commit:
                    rows.append(CheckRow(protocol.id, source, "unchanged", f"commit {now[:12]}", len(texts)))
                    continue
                if not now and not source.commit and source.url and (source.etag or source.last_modified):
                    # A page with validators: a 304 says it is unchanged without sending it again.
                    again = fetch_if_changed(source.url, source.etag, source.last_modified)
                    if again is None:
                        rows.append(CheckRow(protocol.id, source, "unchanged", "not modified", len(texts)))
                        continue
                    document = again
                else:
                    document = fetch_again(source, protocol.id)
                _, sha256, _, extracted = _read(document)
            except (InvalidInput, Rejected) as exc:
                why = exc.problems[0].message if isinstance(exc, InvalidInput) and exc.problems else str(exc)
                rows.append(CheckRow(protocol.id, source, "cannot check", why, len(texts)))
                continue
            if sha256 == source.sha256:
                moved = f"commit {now[:12]}, the file unchanged" if now else ""
                rows.append(CheckRow(protocol.id, source, "unchanged", moved, len(texts)))
                continue
            haystack = Haystack(extracted.text)
            found = sum(1 for text in texts if haystack.find(text) is not None)
            detail = document.version or f"sha256 {sha256[:12]}"
            rows.append(CheckRow(protocol.id, source, "changed", detail, len(texts), found))
    return rows
