"""Snapshots: local copies of reviewed sources, addressed by the SHA-256 of their bytes.

A snapshot lives at ``sources/<sha256>.<ext>`` in the workspace, beside its extracted
text ``sources/<sha256>.text.json`` (the *sidecar*: the text, where each page and
heading begins, and which extractor made it). The same file pinned by two protocols is
stored once. A workspace may keep ``sources/`` out of git: the hashes stay recorded in
each ``protocol.yaml``, and a snapshot that is not present is reported as such, never as
an error.
"""

from __future__ import annotations

import bisect
import hashlib
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from ..errors import InvalidInput, Problem
from ..model import MEDIA_TYPES, Source
from ..storage.files import read_capped
from ..storage.paths import Paths
from .extract import (
    EXTRACTOR_VERSION,
    MAX_SNAPSHOT_BYTES,
    Extracted,
    ExtractionError,
    meaningful_section,
)
from .locate import Haystack

SOURCES_DIR = "sources"
SIDECAR_FORMAT = 1

_EXTENSIONS = {".pdf": "application/pdf", ".html": "text/html", ".htm": "text/html", ".xhtml": "text/html",
               ".md": "text/markdown", ".markdown": "text/markdown", ".txt": "text/plain", ".text": "text/plain"}


def sources_dir(paths: Paths) -> Path:
    """The folder of snapshots and their sidecars."""
    return paths.root / SOURCES_DIR


def snapshot_file(paths: Paths, sha256: str, media_type: str) -> Path:
    """Where the snapshot with this hash is stored."""
    return sources_dir(paths) / f"{sha256}.{MEDIA_TYPES.get(media_type, 'bin')}"


def sidecar_file(paths: Paths, sha256: str) -> Path:
    """Where the extracted text of the snapshot with this hash is stored."""
    return sources_dir(paths) / f"{sha256}.text.json"


def sniff_media_type(data: bytes, name: str) -> str:
    """The media type of a document to snapshot, from its first bytes and its file name.

    Raises :class:`ExtractionError` for anything but PDF, HTML, Markdown or plain text.
    """
    suffix = Path(name).suffix.lower()
    head = data[:1024]
    if b"%PDF-" in head:
        return "application/pdf"
    if suffix == ".pdf":
        raise ExtractionError("not a PDF (it has no %PDF- header)")
    if suffix in _EXTENSIONS:
        return _EXTENSIONS[suffix]
    if re.search(rb"<!doctype\s+html|<html[\s>]", head, re.I):
        return "text/html"
    if b"\x00" in head:
        raise ExtractionError("not a document protocoder can read (expected PDF, HTML, Markdown or plain text)")
    try:
        data[:65536].decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < 65530:  # a character cut at the end of the sample is fine
            raise ExtractionError("not a document protocoder can read (expected PDF, HTML, Markdown or plain "
                                  "text in UTF-8)") from None
    return "text/plain"


def read_document(path: Path, display: str) -> bytes:
    """The bytes of a document to snapshot (a regular file of at most :data:`MAX_SNAPSHOT_BYTES`)."""
    return read_capped(path, display, MAX_SNAPSHOT_BYTES)


def sha256_of(data: bytes) -> str:
    """The content address of a snapshot."""
    return hashlib.sha256(data).hexdigest()


def hash_file(path: Path) -> str:
    """SHA-256 of a file, read in blocks (snapshots may be tens of megabytes)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def sidecar_text(sha256: str, media_type: str, extracted: Extracted) -> str:
    """The sidecar file's content for a snapshot."""
    head = {"format": SIDECAR_FORMAT, "extractor": EXTRACTOR_VERSION, "sha256": sha256, "media_type": media_type}
    return extracted.to_json(head) + "\n"


def read_sidecar(path: Path, sha256: str) -> Extracted | None:
    """The extracted text in a sidecar, or None when it is missing, broken, stale or of another file."""
    try:
        data = Extracted.load_json(path.read_bytes())
        if (data.get("format") != SIDECAR_FORMAT or data.get("extractor") != EXTRACTOR_VERSION
                or data.get("sha256") != sha256):
            return None
        return Extracted.from_dict(data)
    except (OSError, ValueError, TypeError, AttributeError):
        return None


# --------------------------------------------------------------------------- positions


def position(extracted: Extracted, offset: int) -> tuple[str, str]:
    """(page label, section) of the passage starting at ``offset``; empty where the text has none.

    The section is the nearest meaningful heading above the passage: a changelog's version
    line (``## v0.3.1``) and the document's own title are passed over for the heading above
    them (see :func:`.extract.meaningful_section`).
    """
    page = ""
    if extracted.pages:
        starts = [start for start, _ in extracted.pages]
        page = extracted.pages[max(0, bisect.bisect_right(starts, offset) - 1)][1]
    path: tuple[str, ...] = ()
    block = extracted.block_at(offset)
    if block is not None and block.path:
        path = block.path
    elif extracted.headings:
        # Documents extracted without heading paths: the stack of headings above the offset.
        stack: list[tuple[int, str]] = []
        for start, level, title in extracted.headings:
            if start > offset:
                break
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, title))
        path = tuple(title for _, title in stack)
    return page, meaningful_section(path, extracted.title)


_SECTION_NUMBER = re.compile(r"^((?:[1-9]\d?|[A-Z])(?:\.\d{1,2}){0,3})\.?\s")


def location_text(page: str, section: str) -> str:
    """A source location as a ledger writes it: ``p. 14, Sec. 3.2`` or ``App. A.2``."""
    parts = []
    if page:
        parts.append(f"p. {page}")
    if section:
        number = _SECTION_NUMBER.match(section)
        if number:
            label = number.group(1)
            parts.append(f"App. {label}" if label[0].isalpha() else f"Sec. {label}")
        else:
            parts.append(section if len(section) <= 60 else section[:59].rstrip() + "…")
    return ", ".join(parts)


def line_range(raw: str, raw_start: int, raw_end: int) -> tuple[int, int]:
    """The first and last line (from 1) of ``raw`` that the range ``[raw_start, raw_end)`` touches."""
    first = raw.count("\n", 0, raw_start) + 1
    return first, first + raw.count("\n", raw_start, max(raw_start, raw_end - 1))


def code_citation(source: Source, lines: tuple[int, int]) -> str:
    """Where a quote of code is, as a ledger cites it: the permalink (else the file's path in its
    repository, else ``lines``) with GitHub's and GitLab's line anchor ``#L10-L12``."""
    first, last = lines
    anchor = f"#L{first}" if first == last else f"#L{first}-L{last}"
    if source.permalink:
        return source.permalink + anchor
    if source.path:
        return source.path + anchor
    return f"line {first}" if first == last else f"lines {first}–{last}"


# --------------------------------------------------------------------------- reading snapshots


@dataclass
class SnapshotState:
    """What was found on disk for one pinned snapshot."""

    sha256: str
    media_type: str
    file: Path
    present: bool
    intact: bool
    """False when the file's bytes no longer hash to ``sha256``."""
    impostor: str = ""
    """What stands where the snapshot should be when it is not a regular file (a link, a
    folder, a device): an error naming it, never "not present here"."""


class Snapshots:
    """Snapshots of one workspace, each hashed and read at most once per run."""

    def __init__(self, paths: Paths) -> None:
        self.paths = paths
        self._states: dict[str, SnapshotState] = {}
        self._texts: dict[str, Extracted] = {}
        self._haystacks: dict[str, Haystack] = {}
        self._raws: dict[str, str | None] = {}

    def state(self, sha256: str, media_type: str) -> SnapshotState:
        """Whether the snapshot is present here and still the file that was pinned."""
        if sha256 not in self._states:
            path = snapshot_file(self.paths, sha256, media_type)
            impostor = _impostor(path, self.paths)
            present = not impostor and path.is_file()
            intact = False
            if present:
                try:
                    intact = hash_file(path) == sha256
                except OSError as exc:
                    present, impostor = False, f"cannot be read ({exc.strerror or exc})"
            self._states[sha256] = SnapshotState(sha256, media_type, path, present, intact, impostor)
        return self._states[sha256]

    def text(self, sha256: str, media_type: str) -> Extracted:
        """The snapshot's extracted text: its sidecar, or extracted again when the sidecar is
        missing or stale (nothing is written: reading never changes the workspace).

        Raises :class:`InvalidInput` when the snapshot is missing or cannot be read.
        """
        if sha256 not in self._texts:
            state = self.state(sha256, media_type)
            display = self.paths.show(state.file)
            if not state.present:
                raise InvalidInput([Problem(display, 0, 0, "snapshot not present here")])
            extracted = read_sidecar(sidecar_file(self.paths, sha256), sha256)
            if extracted is None:
                from .extract import extract_bounded  # the readers load only when a sidecar is missing or stale

                try:
                    extracted = extract_bounded(read_document(state.file, display), media_type)
                except ExtractionError as exc:
                    raise InvalidInput([Problem(display, 0, 0, str(exc))]) from None
            self._texts[sha256] = extracted
        return self._texts[sha256]

    def raw(self, sha256: str, media_type: str) -> str | None:
        """The snapshot file's decoded text, which raw offsets count in (None for a PDF).

        Raises :class:`InvalidInput` when the snapshot is missing or cannot be read.
        """
        if sha256 not in self._raws:
            state = self.state(sha256, media_type)
            display = self.paths.show(state.file)
            if not state.present:
                raise InvalidInput([Problem(display, 0, 0, "snapshot not present here")])
            if media_type == "application/pdf":
                self._raws[sha256] = None
            else:
                from .extract import raw_text  # the readers load only when a raw text is asked for

                self._raws[sha256] = raw_text(read_document(state.file, display), media_type)
        return self._raws[sha256]

    def haystack(self, sha256: str, media_type: str) -> Haystack:
        """The snapshot's text prepared for searching."""
        if sha256 not in self._haystacks:
            self._haystacks[sha256] = Haystack(self.text(sha256, media_type).text)
        return self._haystacks[sha256]


def _impostor(path: Path, paths: Paths) -> str:
    """Why what is at a snapshot's place is not a snapshot ('' when it is a file, or nothing is there)."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return ""
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"
    if stat.S_ISLNK(mode):
        where = "outside the workspace" if paths.leaves_workspace(path) else "inside the workspace"
        return f"is a symbolic link (to {os.readlink(path)}, {where}), not the pinned file"
    if stat.S_ISDIR(mode):
        return "is a folder, not the pinned file"
    if not stat.S_ISREG(mode):
        return "is not a regular file (a device, pipe or socket)"
    return ""


def extract_document(data: bytes, name: str, display: str) -> tuple[str, str, Extracted]:
    """(sha256, media type, extracted text) of a document about to be pinned.

    Raises :class:`InvalidInput` naming ``display`` in one line when it cannot be read as
    a document; nothing has been written then.
    """
    from .extract import (  # the readers load only for a document being pinned
        block_refusal,
        extract_bounded,
        size_refusal,
    )

    try:
        media_type = sniff_media_type(data, name)
        # Before extraction: a text source past its kind's limit would not be indexed in bounded memory.
        refusal = size_refusal(len(data), media_type)
        if refusal:
            raise ExtractionError(refusal)
        extracted = extract_bounded(data, media_type)
        refusal = block_refusal(len(extracted.blocks))  # a page of tiny blocks costs more than its bytes say
        if refusal:
            raise ExtractionError(refusal)
    except ExtractionError as exc:
        raise InvalidInput([Problem(display, 0, 0, str(exc))]) from None
    return sha256_of(data), media_type, extracted
