"""A snapshot's text as the reader shows it: page markers between pages, offsets both ways.

No Textual here: the coding app's reader (``tui/widgets/reader.py``) draws this, and tests
drive it directly. Offsets are those of the extracted text (what quotes' spans and
``validate`` use); *display* offsets are those of the text on screen, which has a marker
line before each page.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from .extract import Extracted
from .locate import Haystack, Span, sentence_around


@dataclass(frozen=True)
class Marker:
    """A line the reader adds: a page marker (``kind == "page"``) at display offset ``start``."""

    start: int
    end: int
    kind: str
    label: str


class ReadingText:
    """One snapshot's text laid out for reading and searching."""

    def __init__(self, extracted: Extracted) -> None:
        self.extracted = extracted
        text = extracted.text
        parts: list[str] = []
        self._pieces: list[tuple[int, int, int]] = []  # (display start, extracted start, length)
        self.markers: list[Marker] = []
        length = 0
        pages = extracted.pages or [(0, "")]
        for index, (start, label) in enumerate(pages):
            end = pages[index + 1][0] if index + 1 < len(pages) else len(text)
            if extracted.pages:
                line = f"──── p. {label} ────"
                self.markers.append(Marker(length, length + len(line), "page", label))
                parts.append(line + "\n")
                length += len(line) + 1
            piece = text[start:end]
            self._pieces.append((length, start, len(piece)))
            parts.append(piece)
            length += len(piece)
            if extracted.pages and not piece.endswith("\n"):
                parts.append("\n")
                length += 1
        self.display = "".join(parts)
        self._display_starts = [piece[0] for piece in self._pieces]
        self._extracted_starts = [piece[1] for piece in self._pieces]
        self._line_starts = [0] + [m.end() for m in re.finditer("\n", self.display)]
        self.haystack = Haystack(text)

    # ------------------------------------------------------------------ offsets

    def to_extracted(self, display_offset: int) -> int:
        """The extracted-text offset of a display offset (a marker line maps to the page after it)."""
        index = max(0, bisect.bisect_right(self._display_starts, display_offset) - 1)
        display_start, extracted_start, length = self._pieces[index]
        if display_offset < display_start:
            return extracted_start
        return extracted_start + min(display_offset - display_start, length)

    def to_display(self, offset: int) -> int:
        """The display offset of an extracted-text offset."""
        index = max(0, bisect.bisect_right(self._extracted_starts, offset) - 1)
        display_start, extracted_start, length = self._pieces[index]
        return display_start + min(max(offset - extracted_start, 0), length)

    def location(self, display_offset: int) -> tuple[int, int]:
        """(row, column) of a display offset: the coordinates a text widget uses."""
        row = bisect.bisect_right(self._line_starts, display_offset) - 1
        return row, display_offset - self._line_starts[row]

    def offset(self, row: int, column: int) -> int:
        """The display offset of (row, column)."""
        row = min(max(row, 0), len(self._line_starts) - 1)
        return self._line_starts[row] + column

    def rows(self, span: Span) -> tuple[tuple[int, int], tuple[int, int]]:
        """(start, end) locations on screen of an extracted-text span."""
        return self.location(self.to_display(span.start)), self.location(self.to_display(span.end))

    # ------------------------------------------------------------------ reading

    def find_all(self, query: str) -> list[Span]:
        """Every match of ``query`` (normalised like ``validate``), in text order."""
        return self.haystack.find_all(query)

    def sentence(self, span: Span) -> Span:
        """``span`` widened to the sentence (or sentences) holding it, never into a heading.

        In a code block a "sentence" is a line: a match there widens to the line (or lines)
        holding it, not to the whole block.
        """
        text = self.extracted.text
        block = self.extracted.block_at(span.start)
        if block is not None and block.kind == "code" and span.end <= block.end:
            start = text.rfind("\n", block.start, span.start) + 1 or block.start
            start = max(start, block.start)
            end = text.find("\n", max(span.end, span.start + 1) - 1, block.end)
            end = block.end if end < 0 else end
            while start < end and text[start].isspace():
                start += 1
            while end > start and text[end - 1].isspace():
                end -= 1
            if end > start:
                return Span(start, end)
        widened = sentence_around(text, span.start, span.end)
        start, end = widened.start, widened.end
        for offset, _, _ in self.extracted.headings:
            line_end = text.find("\n", offset)
            line_end = len(text) if line_end < 0 else line_end
            if start <= offset and line_end <= span.start:
                start = line_end  # a heading line before the passage: the sentence starts after it
            elif span.end <= offset < end:
                end = offset
        while start < end and text[start].isspace():
            start += 1
        while end > start and text[end - 1].isspace():
            end -= 1
        return Span(start, end)

    def passage(self, span: Span) -> str:
        """The text of a span as a quote: on one line, words broken at line ends joined again."""
        return quote_text(self.extracted.text[span.start:span.end])

    def heading_rows(self) -> list[int]:
        """Rows on screen where a heading starts."""
        return [self.location(self.to_display(offset))[0] for offset, _, _ in self.extracted.headings]


_BROKEN_WORD = re.compile(r"(?<=[a-z])-[ \t]*\n[ \t]*(?=[a-z])")
_LINE_END_HYPHEN = re.compile(r"(?<=\w)-[ \t]*\n[ \t]*(?=\w)")
_SOFT_HYPHEN = re.compile("\u00ad[ \t]*\n?[ \t]*")


def quote_text(raw: str) -> str:
    """Extracted text made into a quote: one line, and a word the typesetter hyphenated at a line
    end joined again (``evalu-\\nation`` → ``evaluation``; ``state-of-the-\\nArt`` keeps its
    hyphen). Either way ``validate`` finds it: its comparison ignores hyphens inside words."""
    text = _SOFT_HYPHEN.sub("", _LINE_END_HYPHEN.sub("-", _BROKEN_WORD.sub("", raw)))
    return " ".join(text.split())
