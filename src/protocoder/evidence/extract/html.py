"""HTML to text with the standard library's streaming parser: headings, blocks, raw offsets."""

from __future__ import annotations

import contextlib
import re
from array import array
from html.parser import HTMLParser
from typing import Any

from .cleaning import UTF16_MARKS, clean, error_reason, first_line
from .layout import Layout
from .limits import MAX_TEXT_CHARS, ExtractionError
from .structure import PROSE_WORDS, Extracted, document_title, plain_heading

_SKIPPED = {"script", "style", "template", "noscript", "iframe", "object", "embed", "svg", "math", "head",
            "canvas", "select", "button"}
_BLOCKS = {"address", "article", "aside", "blockquote", "br", "dd", "details", "div", "dl", "dt", "figcaption",
           "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "li", "main", "nav",
           "ol", "p", "pre", "section", "summary", "table", "tbody", "td", "th", "thead", "tr", "ul", "caption"}
_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source", "track",
         "wbr"}


_PARAGRAPH_BREAK = {"p", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "blockquote", "table", "ul", "ol", "dl",
                    "figure", "aside", "details"}
_HTML_KINDS = {"li": "list_item", "tr": "table_row", "pre": "code", "blockquote": "blockquote",
               "aside": "admonition", "h1": "heading", "h2": "heading", "h3": "heading", "h4": "heading",
               "h5": "heading", "h6": "heading"}
_PROSE_KINDS = frozenset({"paragraph", "list_item", "admonition", "blockquote"})
"""The blocks whose words can make a page's first prose (not a table row, a heading or a navigation bar)."""
_ADMONITION_CLASS = re.compile(r"\b(?:admonition|callout|alert|note|warning|tip|caution|important)\b", re.I)


class _HtmlText(HTMLParser):
    """Collects visible text block by block, with headings and raw offsets; scripts and styles are skipped."""

    def __init__(self, raw: str) -> None:
        super().__init__(convert_charrefs=True)
        self.raw = raw
        # Compact: a page of a million lines would hold a million Python ints here.
        self.line_starts = array("q", [0])
        self.line_starts.extend(m.end() for m in re.finditer("\n", raw))
        self.out = Layout(raw, limit=MAX_TEXT_CHARS)  # markup can make a small file a large text
        self.skip = 0
        self.pre = 0
        self.heading: tuple[int, list[str]] | None = None  # (level, text) of the open heading
        self.heading_stack: list[tuple[int, str]] = []
        self.containers: list[str] = []  # kinds of the open block elements, innermost last
        self.admonitions = 0  # how many of them are admonitions (counted: pages nest 100,000 deep)
        self.cells = 0
        self.title_parts: list[str] = []
        self.in_title = False
        self.links = 0  # open <a> elements: their words are a bar of links, not prose
        self.block_words = 0  # words of prose in the block being read
        self.prose: int | None = None
        """Where the page's first prose (a block of PROSE_WORDS words outside links, or preformatted text) starts
        in the extracted text: a heading after it names a section, not the page (as ``markdown.py`` decides)."""
        self._path_key: tuple[int, tuple[int, str] | None] = (0, None)
        self._path_value: tuple[str, ...] = ()

    def _raw_position(self) -> int:
        line, column = self.getpos()
        return self.line_starts[min(line, len(self.line_starts)) - 1] + column

    def _path(self) -> tuple[str, ...]:
        # One tuple per heading path, shared by every block under it (not one per block).
        key = len(self.heading_stack), self.heading_stack[-1] if self.heading_stack else None
        if key != self._path_key:
            self._path_key = key
            self._path_value = tuple(title for _, title in self.heading_stack)
        return self._path_value

    def _boundary(self) -> None:
        """A block element opened or closed: the next text starts a block of the innermost kind."""
        self.out.start_block(self.containers[-1] if self.containers else "paragraph", self._path())

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        if tag == "title" and not self.title_parts:
            self.in_title = True
        if tag in _SKIPPED:
            if tag not in _VOID:
                self.skip += 1
            return
        if self.skip:
            return
        if tag == "pre":
            self.pre += 1
        if tag == "a":
            self.links += 1
        if tag in ("td", "th") and "table_row" in self.containers[-1:]:
            if self.cells:
                self.out.gap("\t")
            self.cells += 1
            return
        if tag in _BLOCKS:
            self.out.gap("\n\n" if tag in _PARAGRAPH_BREAK else "\n")
            if tag not in _VOID:
                classes = dict(attrs).get("class") or ""
                kind = _HTML_KINDS.get(tag, "paragraph")
                admonition = tag in ("div", "section") and _ADMONITION_CLASS.search(classes)
                if admonition or (kind == "paragraph" and self.admonitions):
                    kind = "admonition"
                self.containers.append(kind)
                self.admonitions += kind == "admonition"
            if tag == "tr":
                self.cells = 0
            self.block_words = 0
            self._boundary()
        if len(tag) == 2 and tag[0] == "h" and tag[1] in "123456":
            self.heading = (int(tag[1]), [])

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
        if tag == "a" and self.links:
            self.links -= 1
        if tag in ("td", "th") and "table_row" in self.containers[-1:]:
            return
        if len(tag) == 2 and tag[0] == "h" and tag[1] in "123456" and self.heading is not None:
            level, words = self.heading
            title = plain_heading(" ".join("".join(words).split())[:300]) if "".join(words).strip() else ""
            self.heading = None
            if title:
                while self.heading_stack and self.heading_stack[-1][0] >= level:
                    self.heading_stack.pop()
                self.heading_stack.append((level, title))
                start = self.out.block_start if self.out.block_start is not None else self.out.length
                self.out.headings.append((start, level, title))
                self.out.end_block(self._path())
        if tag in _BLOCKS and tag not in _VOID:
            if self.containers:
                self.admonitions -= self.containers.pop() == "admonition"
            self.out.gap("\n\n" if tag in _PARAGRAPH_BREAK else "\n")
            self.block_words = 0
            self._boundary()

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.title_parts.append(data)
            return
        if self.skip:
            return
        raw_from = self._raw_position()
        raw_limit = min(len(self.raw), raw_from + 8 * len(data) + 64)
        if self.prose is None and self.heading is None:
            self._note_prose(data)
        if self.pre:
            self._text(clean(data), raw_from, raw_limit)
            return
        collapsed = re.sub(r"\s+", " ", clean(data))
        if not collapsed.strip():
            last = self.out.parts[-1] if self.out.parts else ""
            if collapsed and last and not last.endswith((" ", "\n", "\t")) and not self.out.pending:
                self._text(" ", raw_from, raw_limit)
            return
        if self.out.pending or not self.out.parts or self.out.parts[-1].endswith((" ", "\n", "\t")):
            collapsed = collapsed.lstrip()
        self._text(collapsed, raw_from, raw_limit)

    def _note_prose(self, data: str) -> None:
        """Record where the first prose starts when ``data`` makes its block prose (see :attr:`prose`)."""
        if self.pre and data.strip():
            self.prose = self.out.length
            return
        if self.links or (self.containers and self.containers[-1] not in _PROSE_KINDS):
            return
        self.block_words += sum(1 for word in data.split() if any(char.isalnum() for char in word))
        if self.block_words >= PROSE_WORDS:
            self.prose = self.out.block_start if self.out.block_start is not None else self.out.length

    def _text(self, text: str, raw_from: int, raw_limit: int) -> None:
        if self.heading is not None:
            self.heading[1].append(text)
        self.out.emit(text, raw_from, raw_limit)


def extract_html(data: bytes) -> Extracted:
    """An HTML page: its visible text with headings, blocks and raw positions."""
    raw = decode_html(data)
    parser = _HtmlText(raw)
    try:
        parser.feed(raw)
        parser.close()
    except ExtractionError:
        raise
    except (AssertionError, ValueError, RecursionError) as exc:
        raise ExtractionError(f"not readable HTML ({error_reason(exc)})") from None
    headings = parser.out.headings
    title = " ".join(clean("".join(parser.title_parts)).split())
    extracted = parser.out.result(title=plain_heading(title) if title else document_title(headings, prose=parser.prose))
    if not extracted.text.strip():
        raise ExtractionError("the page has no visible text")
    extracted.headings = [h for h in extracted.headings if h[0] < len(extracted.text)]
    if not extracted.title:
        extracted.title = first_line(extracted.text)
    return extracted


_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.I)


def decode_html(data: bytes) -> str:
    """Bytes of an HTML page as text: UTF-16 or UTF-8 by its byte-order mark, else UTF-8, else the charset its <meta>
    declares, else Windows-1252."""
    if data[:2] in UTF16_MARKS:
        return data.decode("utf-16", errors="replace")
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
