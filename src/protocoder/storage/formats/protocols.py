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


FETCH_KEYS = ("final_url", "retrieved_at", "etag", "last_modified")
"""What ``source add URL`` records of the answer it pinned."""
REPOSITORY_KEYS = ("repository", "rev", "commit", "path", "permalink")
"""What ``source add --repo`` (or a GitHub file URL) records of the repository file it pinned."""
SOURCE_KEYS = ("id", "title", "url", "version", "accessed", "sha256", "media_type", "previous", *FETCH_KEYS,
               *REPOSITORY_KEYS)
COMMIT_PATTERN = re.compile(r"^[0-9a-f]{40}(?:[0-9a-f]{24})?$")
"""A full git commit id: SHA-1 (40 hexadecimal digits) or SHA-256 (64)."""


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
                  accessed or date.min, source_id, sha256, media_type, tuple(previous), **_fetched(r, item, path),
                  **_repository_file(r, item, path))


def _fetched(r: Reader, item: Mapping[str, Any], path: KeyPath) -> dict[str, str]:
    """Where and when a fetched source was read: its final URL, the time, and the server's validators."""
    final_url = r.text(item, "final_url", path).strip()
    if final_url and (problem := url_problem(final_url)):
        r.add([*path, "final_url"], problem)
    return {"final_url": final_url, "retrieved_at": r.moment(item, "retrieved_at", path),
            "etag": r.text(item, "etag", path), "last_modified": r.text(item, "last_modified", path)}


def _repository_file(r: Reader, item: Mapping[str, Any], path: KeyPath) -> dict[str, str]:
    """A repository file's repository, revision, full commit id, path in the repository and permalink."""
    values = {key: r.text(item, key, path).strip() for key in REPOSITORY_KEYS}
    if values["commit"] and not COMMIT_PATTERN.match(values["commit"]):
        r.add([*path, "commit"], "commit must be a full git commit id (40 or 64 hexadecimal digits, in lowercase)")
        values["commit"] = ""
    file_path = values["path"]
    if file_path and (file_path.startswith("/") or "\\" in file_path or ".." in file_path.split("/")):
        r.add([*path, "path"], f"path {file_path!r} must be relative to the repository's top (no '..', no leading '/')")
        values["path"] = ""
    if values["permalink"] and (problem := url_problem(values["permalink"])):
        r.add([*path, "permalink"], problem)
        values["permalink"] = ""
    if (values["commit"] or values["path"]) and not values["repository"]:
        r.add(path, "a source with a commit or a path needs its 'repository'")
    return values


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
