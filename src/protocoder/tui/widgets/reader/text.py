"""The text of a snapshot as the reader shows it: running text, soft-wrapped, with its marks.

A Markdown or HTML paragraph, list item, blockquote, admonition or footnote is shown as running
text, soft-wrapped to the pane (its source line breaks shown as spaces, so offsets do not move:
:class:`FlowingText`); code and configuration keep their lines (:func:`keeps_lines`: the reader
numbers them); headings, quotes and matches are drawn as highlights (:class:`ReaderText`).
"""

from __future__ import annotations

import bisect
import re
from dataclasses import replace

from rich.style import Style
from textual.document._wrapped_document import WrappedDocument
from textual.widgets import TextArea
from textual.widgets.text_area import TextAreaTheme

from ....evidence.extract import Extracted
from ....evidence.reading import ReadingText

_THEME_NAME = "protocoder-reader"

FLOWING_KINDS = frozenset({"paragraph", "list_item", "blockquote", "admonition", "footnote"})
"""Blocks whose line breaks the reader shows as spaces: running text. Code, table rows and HTML
blocks keep their lines."""

FLOWING_MEDIA = frozenset({"text/markdown", "text/html"})
"""Media types whose blocks come from markup, so a paragraph is known to be one. A PDF's lines
stay as typeset (a word hyphenated at a line end would read ``evalu- ation``); a plain text
file's "paragraph" may be a list or a table written line by line."""


def keeps_lines(media_type: str) -> bool:
    """True for a source read line by line, as code and configuration are: a plain text file (a
    script, a config, a harness's code), not Markdown, HTML or a PDF. The reader numbers its lines."""
    return media_type not in FLOWING_MEDIA and media_type != "application/pdf"


_LONE_BREAK = re.compile(r"(?<!\n)\n(?!\n)")


class FlowingText(ReadingText):
    """:class:`ReadingText` with each paragraph shown as running text, for the widget to soft-wrap.

    A README is mostly hard-wrapped: one sentence over several source lines. Shown with those
    breaks and then soft-wrapped to the pane, it reads raggedly. Here a lone line break inside a
    block of :data:`FLOWING_KINDS` is shown as a space: one character for one, so every offset
    (``to_display``, ``to_extracted``) stays what it was and selections, matches and quotes still
    point at the same characters of the extracted text, which quotes are taken from. Only the
    rows and columns on screen change: :meth:`location` and :meth:`offset` count lines in the
    text as shown.
    """

    def __init__(self, extracted: Extracted, *, flow: bool = True) -> None:
        super().__init__(extracted)
        if flow:
            shown = list(self.display)
            text = extracted.text
            for block in extracted.blocks:
                if block.kind not in FLOWING_KINDS:
                    continue
                # Within the block only: a blank line inside it (a blockquote's two paragraphs)
                # and the separators around it stay.
                for found in _LONE_BREAK.finditer(text, block.start, block.end):
                    shown[self.to_display(found.start())] = " "
            self.display = "".join(shown)
        self._shown_line_starts = [0] + [m.end() for m in re.finditer("\n", self.display)]

    def location(self, display_offset: int) -> tuple[int, int]:
        """(row, column) of a display offset in the text as shown."""
        row = bisect.bisect_right(self._shown_line_starts, display_offset) - 1
        return row, display_offset - self._shown_line_starts[row]

    def offset(self, row: int, column: int) -> int:
        """The display offset of (row, column) in the text as shown."""
        row = min(max(row, 0), len(self._shown_line_starts) - 1)
        return self._shown_line_starts[row] + column


def _reader_theme() -> TextAreaTheme:
    base = TextAreaTheme.get_builtin_theme("css")
    assert base is not None
    styles = {
        "quote": Style(bgcolor="#3d3a00", underline=True),
        "quoted": Style(underline=True, color="#afd7af"),
        "match": Style(bgcolor="#5f4b00"),
        "current": Style(bgcolor="#d7af00", color="#000000", bold=True),
        "heading": Style(bold=True, color="#87afff"),
        "marker": Style(dim=True, italic=True),
    }
    return replace(base, name=_THEME_NAME, syntax_styles=styles)


class _RowCountedDocument(WrappedDocument):
    """Textual's wrapped document, with its height read off the row table it keeps.

    ``WrappedDocument.height`` adds up every line's sections on each call, and TextArea asks
    for it once per line drawn: on a 300-page text that made every repaint take a second.
    The table of (line, section) per screen row has exactly that length.
    """

    @property
    def height(self) -> int:
        return len(self._offset_to_line_info)


class ReaderText(TextArea):
    """The snapshot's text: read-only, soft-wrapped, with marks drawn as highlights.

    TextArea draws syntax highlights from ``_highlights`` (per row: start byte, end byte,
    style name); the reader fills it with its own marks instead of a parser's, which the
    pinned Textual release supports (see ``TextArea._build_highlight_map``).
    """

    def __init__(self, **kwargs: object) -> None:
        # Set before TextArea's own __init__, which builds the highlight map.
        self.marks: dict[str, list[tuple[tuple[int, int], tuple[int, int]]]] = {}
        super().__init__("", read_only=True, soft_wrap=True, show_line_numbers=False, **kwargs)  # type: ignore[arg-type]
        self.register_theme(_reader_theme())
        self.theme = _THEME_NAME

    def show_text(self, text: str) -> None:
        """Show ``text`` (read-only)."""
        self.load_text(text)
        self.wrapped_document.__class__ = _RowCountedDocument

    def show_marks(self, marks: dict[str, list[tuple[tuple[int, int], tuple[int, int]]]]) -> None:
        """Replace the highlighted ranges: ``{style name: [(start location, end location), ...]}``."""
        self.marks = marks
        self._build_highlight_map()
        self.refresh()

    def _build_highlight_map(self) -> None:
        self._line_cache.clear()
        highlights = self._highlights
        highlights.clear()
        for name in ("marker", "heading", "quoted", "quote", "match", "current"):  # later ones are drawn on top
            for (start_row, start_col), (end_row, end_col) in self.marks.get(name, ()):
                for row in range(start_row, end_row + 1):
                    if row >= self.document.line_count:
                        break
                    line = self.document.get_line(row)
                    first = start_col if row == start_row else 0
                    last = end_col if row == end_row else len(line)
                    if last <= first:
                        continue
                    highlights[row].append((len(line[:first].encode()), len(line[:last].encode()), name))
