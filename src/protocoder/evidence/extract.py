"""Reviewed documents (PDF, HTML, Markdown, plain text) to text with page and heading positions.

Libraries, chosen:

* **PDF: pypdf.** Pure Python with no dependencies of its own (nothing to compile, no
  system library), actively maintained, and it gives exactly what a quote's position
  needs: text page by page, the document's page labels (``iv``, ``14``) and its outline
  (the bookmarks LaTeX's hyperref writes for every section), and it caps decompression
  output against zip bombs. pdfminer.six lays text out more faithfully but pulls in
  cryptography and charset-normalizer and is several times slower on long papers.
* **HTML: the standard library's html.parser.** It streams tags (no tree, so nesting
  depth costs nothing), decodes entities, and never runs scripts; keeping headings and
  block breaks takes a few lines. No dependency added.
* **Markdown: markdown-it-py**, already a dependency (basis text is inline Markdown).

:func:`extract_bounded` runs the extraction in a child process with limits on CPU time,
memory and output, so that a malformed or malicious file ends in a one-line error instead
of a hang or a crash; :func:`extract` is the same work in-process.

Extracted text is data: it is stored, searched and shown, never evaluated. Control
characters (escape sequences included) are removed, so nothing in a document can drive
the terminal that shows it.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import subprocess
import sys
import unicodedata
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any

MAX_SNAPSHOT_BYTES = 100 * 1024 * 1024
"""Largest file accepted as a snapshot (papers with figures are a few MB; a 100 MB file is
almost certainly not a document to quote from)."""

MAX_PAGES = 3000
"""Most pages read from one PDF."""

MAX_TEXT_CHARS = 30_000_000
"""Most characters of extracted text kept from one document."""

MAX_OUTLINE_ENTRIES = 5000

EXTRACT_SECONDS = float(os.environ.get("PROTOCODER_EXTRACT_SECONDS", "120"))
"""Wall-clock limit of one extraction (a 300-page paper takes a few seconds)."""

EXTRACT_MEMORY = int(os.environ.get("PROTOCODER_EXTRACT_MEMORY", str(2 * 1024 * 1024 * 1024)))
"""Address-space limit of the extracting child process, in bytes (2 GiB unless
``PROTOCODER_EXTRACT_MEMORY`` says otherwise)."""

EXTRACTOR_VERSION = 1
"""Raised when extraction changes what text it produces; sidecars of other versions are redone."""


class ExtractionError(Exception):
    """The document cannot be read as text; the message says why, in one line."""


@dataclass
class Extracted:
    """A document's text and where its pages and headings begin in it."""

    text: str
    pages: list[tuple[int, str]] = field(default_factory=list)
    """(offset where the page starts, its label), in page order; empty for documents without pages."""
    headings: list[tuple[int, int, str]] = field(default_factory=list)
    """(offset, level 1–6, heading text), in text order."""
    title: str = ""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (the sidecar's body)."""
        return {"title": self.title, "text": self.text, "pages": [list(p) for p in self.pages],
                "headings": [list(h) for h in self.headings]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Extracted:
        """Inverse of :meth:`to_dict`; raises ValueError for data of the wrong shape."""
        text = data.get("text")
        if not isinstance(text, str):
            raise ValueError("no text")
        pages = [(int(offset), str(label)) for offset, label in data.get("pages") or []]
        headings = [(int(offset), int(level), str(title)) for offset, level, title in data.get("headings") or []]
        return cls(text, pages, headings, str(data.get("title") or ""))


# --------------------------------------------------------------------------- cleaning

_T1_LIGATURES = {"\x1b": "ff", "\x1c": "fi", "\x1d": "fl", "\x1e": "ffi", "\x1f": "ffl"}
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def clean(text: str, *, pdf: bool = False) -> str:
    """NFC text with Unix line ends and no control characters (tab and newline aside).

    In PDF text the codes 0x1B–0x1F are ligatures of TeX's T1 fonts, so they become the
    letters; anywhere else they are controls like the rest and are dropped.
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if pdf:
        for code, letters in _T1_LIGATURES.items():
            text = text.replace(code, letters)
    text = _CONTROL.sub("", text)
    return unicodedata.normalize("NFC", text)


_NUMBERED_HEADING = re.compile(r"^(?:(?:[1-9]\d?|[A-Z])(?:\.\d{1,2}){0,3}\.?)[ \t]+[A-Z][^\n]{1,80}$", re.M)
"""A line such as ``3.2 Stopping rule`` or ``A.4 Harness``: a section heading in a document
without an outline (a heuristic: it may miss headings, and says nothing it cannot place)."""


def numbered_headings(text: str) -> list[tuple[int, int, str]]:
    """Headings found as numbered lines (``2``, ``2.1``, ``A.3``), their level from the number."""
    headings = []
    for match in _NUMBERED_HEADING.finditer(text):
        line = match.group().strip()
        number = line.split()[0].rstrip(".")
        if line.endswith((".", ",", ";", ":")) or (len(number) == 1 and number.isalpha() and "." not in number):
            continue  # a sentence that starts with a number, or "A Benchmark Paper"
        headings.append((match.start(), number.count(".") + 1, line))
    return headings


# --------------------------------------------------------------------------- PDF


def _pdf(data: bytes) -> Extracted:
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(io.BytesIO(data), strict=False)
        if reader.is_encrypted:
            # Many publishers encrypt with an empty user password (only printing is
            # restricted): such a file opens. One that needs a password does not.
            try:
                opened = reader.decrypt("")
            except Exception:  # noqa: BLE001 - unsupported algorithm, missing crypto library
                opened = 0
            if not opened:
                raise ExtractionError("the PDF is encrypted with a password; save an unencrypted copy "
                                      "(print to PDF) and add that")
        count = len(reader.pages)
    except ExtractionError:
        raise
    except (PdfReadError, ValueError, KeyError, TypeError, AttributeError, IndexError, RecursionError,
            OSError) as exc:
        raise ExtractionError(f"not a readable PDF ({_reason(exc)})") from None
    if count == 0:
        raise ExtractionError("the PDF has no pages")
    if count > MAX_PAGES:
        raise ExtractionError(f"the PDF has {count:,} pages; the limit is {MAX_PAGES:,}")
    try:
        labels = list(reader.page_labels)
    except Exception:  # noqa: BLE001 - a broken label tree: plain numbers serve as well
        labels = []
    if len(labels) != count:
        labels = [str(number) for number in range(1, count + 1)]
    parts: list[str] = []
    pages: list[tuple[int, str]] = []
    length = 0
    for index in range(count):
        try:
            page_text = clean(reader.pages[index].extract_text() or "", pdf=True).strip("\n")
        except Exception as exc:  # noqa: BLE001 - pypdf raises many kinds on broken content streams
            raise ExtractionError(f"page {index + 1} cannot be read ({_reason(exc)})") from None
        if parts:
            parts.append("\n\n")
            length += 2
        pages.append((length, labels[index]))
        parts.append(page_text)
        length += len(page_text)
        if length > MAX_TEXT_CHARS:
            raise ExtractionError(f"the PDF holds more than {MAX_TEXT_CHARS:,} characters of text")
    text = "".join(parts)
    if not text.strip():
        raise ExtractionError("the PDF has no text layer (a scan?); run OCR on it first")
    headings = _outline_headings(reader, text, pages) or numbered_headings(text)
    title = ""
    with contextlib.suppress(Exception):
        title = clean(str((reader.metadata or {}).get("/Title") or "")).strip()
    return Extracted(text, pages, headings, title or _first_line(text))


def _outline_headings(reader: Any, text: str, pages: list[tuple[int, str]]) -> list[tuple[int, int, str]]:
    """Headings from the PDF's outline, placed at their line on their page."""
    from .locate import Haystack

    entries: list[tuple[int, str, int]] = []

    def walk(items: Any, level: int) -> None:
        # In pypdf's outline a list that follows an entry holds that entry's children.
        for item in items:
            if len(entries) >= MAX_OUTLINE_ENTRIES:
                return
            if isinstance(item, list):
                if level < 6:
                    walk(item, level + 1)
                continue
            page = reader.get_destination_page_number(item)
            title = clean(str(getattr(item, "title", "") or "")).strip()
            if title and page is not None and 0 <= page < len(pages):
                entries.append((level, title, page))

    try:
        walk(reader.outline, 1)
    except Exception:  # noqa: BLE001 - a broken outline: fall back to numbered lines
        return []
    headings = []
    for level, title, page in entries:
        start = pages[page][0]
        end = pages[page + 1][0] if page + 1 < len(pages) else len(text)
        found = Haystack(text[start:end]).find(title)
        if found is None:
            offset, line = start, title
        else:
            line_start = text.rfind("\n", start, start + found.start) + 1
            line_start = max(line_start, start)
            line_end = text.find("\n", start + found.end, end)
            line_end = end if line_end < 0 else line_end
            offset, line = line_start, text[line_start:line_end].strip()
            if len(line) > len(title) + 20:
                line = title  # the title sits inside a paragraph: keep the outline's words
        headings.append((offset, level, line))
    headings.sort(key=lambda h: h[0])
    return headings


def _reason(exc: BaseException) -> str:
    message = " ".join(str(exc).split())
    if not message:
        return type(exc).__name__
    return message[:200]


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()[:200]
    return ""


# --------------------------------------------------------------------------- HTML

_SKIPPED = {"script", "style", "template", "noscript", "iframe", "object", "embed", "svg", "math", "head",
            "canvas", "select", "button"}
_BLOCKS = {"address", "article", "aside", "blockquote", "br", "dd", "details", "div", "dl", "dt", "figcaption",
           "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "li", "main", "nav",
           "ol", "p", "pre", "section", "summary", "table", "tbody", "td", "th", "thead", "tr", "ul", "caption"}
_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source", "track",
         "wbr"}


class _HtmlText(HTMLParser):
    """Collects visible text with block breaks and headings; scripts and styles are skipped."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.length = 0
        self.skip = 0
        self.pre = 0
        self.heading: tuple[int, int, int] | None = None  # (offset, level, index in parts) of the open heading
        self.headings: list[tuple[int, int, str]] = []
        self.title_parts: list[str] = []
        self.in_title = False
        self.pending_break = ""

    def _emit(self, text: str) -> None:
        if not text:
            return
        if self.pending_break and self.length:
            self.parts.append(self.pending_break)
            self.length += len(self.pending_break)
        self.pending_break = ""
        self.parts.append(text)
        self.length += len(text)
        if self.length > MAX_TEXT_CHARS:
            raise ExtractionError(f"the page holds more than {MAX_TEXT_CHARS:,} characters of text")

    def _break(self, kind: str) -> None:
        if len(kind) > len(self.pending_break):
            self.pending_break = kind

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        if tag == "title" and not self.skip_title():
            self.in_title = True
        if tag in _SKIPPED:
            if tag not in _VOID:
                self.skip += 1
            return
        if self.skip:
            return
        if tag == "pre":
            self.pre += 1
        if tag in _BLOCKS:
            self._break("\n\n" if tag in ("p", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "blockquote", "table")
                        else "\n")
        if len(tag) == 2 and tag[0] == "h" and tag[1] in "123456":
            self._flush_break()
            self.heading = (self.length, int(tag[1]), len(self.parts))

    def skip_title(self) -> bool:
        return bool(self.title_parts)

    def _flush_break(self) -> None:
        if self.pending_break and self.length:
            self.parts.append(self.pending_break)
            self.length += len(self.pending_break)
        self.pending_break = ""

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self.in_title = False
        if tag in _SKIPPED:
            if self.skip:
                self.skip -= 1
            return
        if self.skip:
            return
        if tag == "pre" and self.pre:
            self.pre -= 1
        if len(tag) == 2 and tag[0] == "h" and tag[1] in "123456" and self.heading is not None:
            offset, level, first_part = self.heading
            title = " ".join("".join(self.parts[first_part:]).split())
            if title:
                self.headings.append((offset, level, title[:300]))
            self.heading = None
        if tag in _BLOCKS:
            self._break("\n\n" if tag in ("p", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "blockquote", "table")
                        else "\n")

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.title_parts.append(data)
            return
        if self.skip:
            return
        if self.pre:
            self._emit(data)
            return
        collapsed = re.sub(r"\s+", " ", data)
        if not collapsed.strip():
            if collapsed and self.parts and not self.parts[-1].endswith((" ", "\n")) and not self.pending_break:
                self._emit(" ")
            return
        if self.pending_break or not self.parts or self.parts[-1].endswith((" ", "\n")):
            collapsed = collapsed.lstrip()
        self._emit(collapsed)


def _html(data: bytes) -> Extracted:
    parser = _HtmlText()
    try:
        parser.feed(_decode_html(data))
        parser.close()
    except ExtractionError:
        raise
    except (AssertionError, ValueError, RecursionError) as exc:
        raise ExtractionError(f"not readable HTML ({_reason(exc)})") from None
    raw_text = "".join(parser.parts)
    text = clean(raw_text)
    if text != raw_text:
        # Cleaning removed characters: heading offsets would drift, so they are found again.
        parser.headings = _relocate(text, parser.headings)
    text_stripped = text.rstrip()
    if not text_stripped.strip():
        raise ExtractionError("the page has no visible text")
    title = " ".join(clean("".join(parser.title_parts)).split())
    return Extracted(text_stripped, [], [h for h in parser.headings if h[0] < len(text_stripped)],
                     title or (parser.headings[0][2] if parser.headings else _first_line(text)))


def _relocate(text: str, headings: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    result = []
    position = 0
    for _, level, title in headings:
        found = text.find(title, position)
        if found >= 0:
            result.append((found, level, title))
            position = found + len(title)
    return result


_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.I)


def _decode_html(data: bytes) -> str:
    if data.startswith(b"\xef\xbb\xbf"):
        return data[3:].decode("utf-8", errors="replace")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    declared = _CHARSET.search(data[:4096])
    if declared:
        with contextlib.suppress(LookupError, UnicodeDecodeError):
            return data.decode(declared.group(1).decode("ascii"))
    return data.decode("cp1252", errors="replace")


# --------------------------------------------------------------------------- Markdown and text

_MD_BREAK_AFTER = {"paragraph_close": "\n\n", "heading_close": "\n\n", "bullet_list_close": "\n\n",
                   "ordered_list_close": "\n\n", "list_item_close": "\n", "blockquote_close": "\n\n",
                   "tr_close": "\n", "th_close": "\t", "td_close": "\t", "table_close": "\n\n", "hr": "\n\n"}


def _markdown(data: bytes) -> Extracted:
    from markdown_it import MarkdownIt

    source = clean(_decode_text(data))
    tokens = MarkdownIt("commonmark").enable("table").parse(source)
    parts: list[str] = []
    headings: list[tuple[int, int, str]] = []
    length = 0
    pending = ""
    heading_level = 0

    def emit(text: str) -> None:
        nonlocal length, pending
        if not text:
            return
        if pending and parts:
            parts.append(pending)
            length += len(pending)
        pending = ""
        parts.append(text)
        length += len(text)

    def gap(kind: str) -> None:
        # Consecutive breaks become the largest of them ("\n\n" over "\n" over "\t").
        nonlocal pending
        rank = {"": 0, "\t": 1, "\n": 2, "\n\n": 3}
        if rank[kind] > rank[pending]:
            pending = kind

    for token in tokens:
        if token.type == "heading_open":
            heading_level = int(token.tag[1])
        elif token.type == "inline":
            inline = _inline_text(token.children or [])
            emit(inline)
            if heading_level and inline.strip():
                headings.append((length - len(inline), heading_level, " ".join(inline.split())))
            heading_level = 0
        elif token.type in ("fence", "code_block"):
            emit(token.content.rstrip("\n"))
            gap("\n\n")
        elif token.type == "html_block":
            emit(re.sub(r"<[^>]*>", "", token.content).strip())
            gap("\n\n")
        elif token.type == "paragraph_close" and token.hidden:
            gap("\n")  # the items of a tight list
        elif token.type in _MD_BREAK_AFTER:
            gap(_MD_BREAK_AFTER[token.type])
    text = "".join(parts).rstrip()
    if not text.strip():
        raise ExtractionError("the Markdown file has no text")
    return Extracted(text, [], headings, headings[0][2] if headings else _first_line(text))


def _inline_text(children: list[Any]) -> str:
    out = []
    for child in children:
        if child.type in ("text", "code_inline"):
            out.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            out.append("\n")
        elif child.type == "image":
            out.append(_inline_text(child.children or []))
    return "".join(out)


def _decode_text(data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("cp1252", errors="replace")


def _plain(data: bytes) -> Extracted:
    text = clean(_decode_text(data)).rstrip()
    if not text.strip():
        raise ExtractionError("the file has no text")
    return Extracted(text, [], numbered_headings(text), _first_line(text))


# --------------------------------------------------------------------------- entry points

_EXTRACTORS = {"application/pdf": _pdf, "text/html": _html, "text/markdown": _markdown, "text/plain": _plain}


def extract(data: bytes, media_type: str) -> Extracted:
    """Extract text from a document's bytes, in this process (see :func:`extract_bounded`).

    Raises :class:`ExtractionError` with a one-line reason.
    """
    try:
        extractor = _EXTRACTORS[media_type]
    except KeyError:
        raise ExtractionError(f"cannot extract text from {media_type}") from None
    return extractor(data)


def extract_bounded(data: bytes, media_type: str, *, seconds: float | None = None) -> Extracted:
    """:func:`extract` in a child process limited in time (``seconds``) and memory.

    A document that makes the extractor loop, recurse or allocate without end costs at
    most that long and that much, and ends in :class:`ExtractionError`.
    """
    limit = EXTRACT_SECONDS if seconds is None else seconds
    command = [sys.executable, "-m", "protocoder.evidence._worker", media_type, str(int(limit) + 1)]
    env = {**os.environ, "PYTHONSAFEPATH": "1"}
    try:
        result = subprocess.run(command, input=data, capture_output=True, timeout=limit, env=env,
                                check=False)
    except subprocess.TimeoutExpired:
        raise ExtractionError(f"text extraction took longer than {limit:g} s; the file is too large or "
                              "malformed") from None
    except OSError as exc:
        raise ExtractionError(f"cannot start text extraction ({exc.strerror or exc})") from None
    if result.returncode != 0 or not result.stdout:
        if result.returncode < 0 or b"MemoryError" in result.stderr:
            raise ExtractionError("text extraction ran out of the time or memory it may use; the file is too "
                                  "large or malformed")
        last = result.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no output"]
        raise ExtractionError(f"text extraction failed ({last[0][:200]})")
    try:
        payload = json.loads(result.stdout)
    except ValueError:
        raise ExtractionError("text extraction returned no usable result") from None
    if "error" in payload:
        raise ExtractionError(str(payload["error"]))
    return Extracted.from_dict(payload)
