"""A protocol's file: its sources, their snapshots' hashes and media types, and their URLs."""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import date
from typing import Any
from urllib.parse import urlsplit

from ...model import (
    MEDIA_TYPES,
    SHA256_PATTERN,
    Protocol,
    Source,
    SourceVersion,
)
from ..findings import Findings, Reader, describe
from ..yamlio import KeyPath


def parse_protocol(data: Any, findings: Findings, folder_id: str) -> Protocol | None:
    """Parse ``protocols/<id>/protocol.yaml``."""
    r = Reader(findings)
    top = r.mapping(data, [], required=("id", "name"), optional=("cites", "sources"),
                    what="a protocol mapping")
    if top is None:
        return None
    protocol_id = r.slug(top, "id", [], what="protocol id")
    if protocol_id and protocol_id != folder_id:
        r.add(["id"], f"protocol id {protocol_id!r} does not match its folder name {folder_id!r}")
    sources = []
    raw_sources = top.get("sources") or []
    if not isinstance(raw_sources, list):
        r.add(["sources"], f"expected a list of sources, found {describe(raw_sources)}")
        raw_sources = []
    for index, raw in enumerate(raw_sources):
        source = _parse_source(r, raw, ["sources", index])
        if source is not None:
            if source.id and any(s.id == source.id for s in sources):
                r.add(["sources", index, "id"], f"duplicate source id {source.id!r}")
            sources.append(source)
    return Protocol(protocol_id or folder_id, r.text(top, "name", [], required=True),
                    r.text_list(top, "cites", []), tuple(sources))


SOURCE_KEYS = ("id", "title", "url", "version", "accessed", "sha256", "media_type", "previous")


def _parse_source(r: Reader, raw: Any, path: KeyPath) -> Source | None:
    """One pinned source; with a snapshot (``sha256``) it needs an id and a media type, and
    the URL may be left out (a local copy of a document is still pinned by its hash)."""
    item = r.mapping(raw, path, required=("title", "version", "accessed"), optional=SOURCE_KEYS,
                     what="a source mapping")
    if item is None:
        return None
    sha256 = _snapshot_hash(r, item, "sha256", path)
    url = r.text(item, "url", path, required=not sha256)
    if "url" not in item and not sha256:
        r.add(path, "missing required key 'url'")
    if url and (problem := url_problem(url)):
        r.add([*path, "url"], problem)
    source_id = r.slug(item, "id", path, what="source id") if "id" in item or sha256 else ""
    if sha256 and "id" not in item:
        r.add(path, "a source with a snapshot (sha256) needs an 'id', the name quotes use")
    media_type = _media_type(r, item, path, required=bool(sha256))
    previous = []
    raw_previous = item.get("previous") or []
    if not isinstance(raw_previous, list):
        r.add([*path, "previous"], f"expected a list of earlier versions, found {describe(raw_previous)}")
        raw_previous = []
    for index, raw_version in enumerate(raw_previous):
        vpath = [*path, "previous", index]
        entry = r.mapping(raw_version, vpath, required=("version", "accessed", "sha256", "media_type"),
                          what="an earlier version mapping")
        if entry is None:
            continue
        previous.append(SourceVersion(r.text(entry, "version", vpath, required=True),
                                      r.day(entry, "accessed", vpath, required=True) or date.min,
                                      _snapshot_hash(r, entry, "sha256", vpath), _media_type(r, entry, vpath)))
    accessed = r.day(item, "accessed", path, required=True)
    return Source(r.text(item, "title", path, required=True), url, r.text(item, "version", path, required=True),
                  accessed or date.min, source_id, sha256, media_type, tuple(previous))


def _snapshot_hash(r: Reader, item: Mapping[str, Any], key: str, path: KeyPath) -> str:
    value = r.text(item, key, path).strip()
    if value and not SHA256_PATTERN.match(value):
        r.add([*path, key], f"{key} must be the 64 hexadecimal digits of a SHA-256, in lowercase")
        return ""
    return value


def _media_type(r: Reader, item: Mapping[str, Any], path: KeyPath, *, required: bool = True) -> str:
    value = r.text(item, "media_type", path).strip()
    if value and value not in MEDIA_TYPES:
        r.add([*path, "media_type"], f"unknown media type {value!r} (expected: {', '.join(MEDIA_TYPES)})")
        return ""
    if required and not value and "media_type" not in item:
        r.add(path, "missing required key 'media_type'")
    return value


_DOI = re.compile(r"^(?:doi:\s*)?(10\.\d{4,9}/\S+)$", re.IGNORECASE)


def openable_url(url: str) -> str | None:
    """The address protocoder may hand to a browser for a source's ``url``, or None.

    The one check every opener uses, the same as ``validate``'s (:func:`url_problem`): an http or
    https address as it is, a DOI (``10.…/…`` or ``doi:10.…/…``) through https://doi.org/.
    Anything else (``javascript:``, ``file:``, a bare word) is never opened.
    """
    text = url.strip()
    if url_problem(text) is None:
        return text
    if found := _DOI.match(text):
        return f"https://doi.org/{found.group(1)}"
    return None


def url_problem(url: str) -> str | None:
    """Why ``url`` is not a usable web address, or None when it is."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https"):
        return f"URL {url!r} needs a scheme (https://...)"
    if not parts.netloc or any(ch.isspace() for ch in url.strip()):
        return f"URL {url!r} is not a valid web address"
    return None
