"""PDF to text with pypdf: pages and their labels, headings from the outline (or numbering)."""

from __future__ import annotations

import contextlib
import io
import re
from typing import Any

from .cleaning import clean, error_reason, first_line
from .limits import MAX_OUTLINE_ENTRIES, MAX_PAGES, MAX_TEXT_CHARS, ExtractionError
from .structure import Block, Extracted, numbered_headings, path_finder


def _pdf_blocks(text: str, headings: list[tuple[int, int, str]]) -> list[Block]:
    """Paragraph blocks of PDF text: a line that ends a sentence well short of the page's
    measure ends a paragraph (PDF text has no blank lines inside a page)."""
    path_of = path_finder(headings)
    heading_at = {offset for offset, _, _ in headings}
    lines = list(re.finditer(r"[^\n]+", text))
    if not lines:
        return []
    measure = sorted(len(m.group()) for m in lines)[int(len(lines) * 0.8)] if lines else 0
    blocks = []
    start = lines[0].start()
    for index, line in enumerate(lines):
        following = lines[index + 1] if index + 1 < len(lines) else None
        content = line.group().rstrip()
        if line.start() in heading_at:
            if line.start() > start:
                blocks.append(Block(start, line.start() - 1, "paragraph", path_of(start)))
            blocks.append(Block(line.start(), line.end(), "heading", path_of(line.start())))
            start = following.start() if following else line.end()
            continue
        ends = (following is None or text[line.end():following.start()].count("\n") > 1
                or following.start() in heading_at
                or (content.endswith((".", "!", "?", ":")) and len(content) < 0.8 * measure))
        if ends:
            blocks.append(Block(start, line.end(), "paragraph", path_of(start)))
            start = following.start() if following else line.end()
    return [b for b in blocks if b.end > b.start]


def extract_pdf(data: bytes) -> Extracted:
    """A PDF: its text page by page, with the outline's headings and blocks."""
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
        raise ExtractionError(f"not a readable PDF ({error_reason(exc)})") from None
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
            raise ExtractionError(f"page {index + 1} cannot be read ({error_reason(exc)})") from None
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
    return Extracted(text, pages, headings, title or first_line(text), _pdf_blocks(text, headings), None)


def _outline_headings(reader: Any, text: str, pages: list[tuple[int, str]]) -> list[tuple[int, int, str]]:
    """Headings from the PDF's outline, placed at their line on their page."""
    from ..locate import Haystack

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
