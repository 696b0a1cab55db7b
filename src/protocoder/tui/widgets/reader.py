"""Reader: a protocol's pinned snapshot, to read and to quote the passage a code rests on.

The text is the snapshot's extracted text (what ``validate`` checks quotes against), with a
marker line before each page; a Markdown or HTML paragraph, list item, blockquote,
admonition or footnote is shown as running text, soft-wrapped to the pane (its source line
breaks shown as spaces, so offsets do not move: :class:`FlowingText`); headings, the cell's
quotes and search matches are highlighted. ``/`` searches (normalised like ``validate``: line breaks, hyphenation and
ligatures do not hide a match), ``n``/``N`` go to the next/previous match, and ``q`` (or
enter) quotes the selection, else the current match widened to its sentence, else the
sentence at the cursor. The reader does not write files itself: it hands each new quote
to ``on_quote`` (the coding screen adds it to its draft of the cell and saves it like any
other edit) and shows the cell it gets back.

The same widget is a pane of the coding screen (in its ``#aside``, class ``-pane``: text
above, search and quotes below) and the body of :class:`~..screens.reader.ReaderScreen`
(full screen: text on the left, search and quotes beside it). Escape posts
:class:`Reader.Left`: whoever holds the reader returns to the cell.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from dataclasses import dataclass, replace

from rich.style import Style
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.document._wrapped_document import WrappedDocument
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Input, OptionList, Static, TextArea
from textual.widgets.option_list import Option
from textual.widgets.text_area import Selection, TextAreaTheme

from ...errors import InvalidInput, Rejected
from ...evidence.extract import Extracted
from ...evidence.locate import Span
from ...evidence.quotes import Anchor, anchor, locate_quote, printable, same_quote
from ...evidence.reading import ReadingText
from ...evidence.search import Candidate
from ...evidence.snapshots import Snapshots, location_text, position
from ...model import Cell, Protocol, Quote, Source
from ...storage.paths import Paths

SEARCH_HITS_PER_SOURCE = 50
"""Most hits of a search listed for each source (every one is still stepped through with n/N)."""

MATCH_LIMIT = 5000
"""Most matches of one search that are highlighted and stepped through."""

_THEME_NAME = "protocoder-reader"

FLOWING_KINDS = frozenset({"paragraph", "list_item", "blockquote", "admonition", "footnote"})
"""Blocks whose line breaks the reader shows as spaces: running text. Code, table rows and HTML
blocks keep their lines."""

FLOWING_MEDIA = frozenset({"text/markdown", "text/html"})
"""Media types whose blocks come from markup, so a paragraph is known to be one. A PDF's lines
stay as typeset (a word hyphenated at a line end would read ``evalu- ation``); a plain text
file's "paragraph" may be a list or a table written line by line."""

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
        for name in ("marker", "heading", "quote", "match", "current"):  # later ones are drawn on top
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


class Reader(Vertical):
    """Read the protocol's snapshots and quote passages into one cell (the coding screen's current one)."""

    BINDINGS = [
        # Quoting first: the footer shows the screen's keys, then these in this order, as many as fit.
        Binding("q", "quote", "Quote", id="reader.quote",
                tooltip="Quote the selection, else the match or the sentence at the cursor"),
        Binding("slash", "search", "Search", id="reader.search", tooltip="Search the text (as validate matches)"),
        Binding("n", "next_match", "Next match", id="reader.next"),
        Binding("N", "previous_match", "Prev match", id="reader.previous"),
        Binding("s", "next_source", "Next source", id="reader.source"),
        Binding("h", "outline", "Outline", id="reader.outline",
                tooltip="The headings of this source: enter jumps to one"),
        Binding("w", "widen('word')", "Widen to words", show=False, id="reader.widen_word",
                tooltip="Extend the selection to whole words"),
        Binding("full_stop", "widen('sentence')", "Widen to sentence", show=False, id="reader.widen_sentence",
                tooltip="Extend the selection to whole sentences"),
        Binding("c", "candidates", "Candidates", id="reader.candidates",
                tooltip="Candidate passages for this field across the protocol's sources (enter jumps there)"),
        Binding("enter", "quote", "Quote", show=False),
        Binding("S", "previous_source", "Prev source", show=False),
        Binding("delete", "remove_quote", "Remove quote", show=False),
        # Priority: acted on as it arrives, in order with tab (a priority binding too). Handed to
        # the text while the reader was still busy with its first snapshot, escape waited there
        # and the tab typed after it went first, into the reader's search box.
        Binding("escape", "leave", "Back to the cell", priority=True, id="reader.back"),
    ]

    KEYS = [
        ("/", "search the text (normalised as validate matches quotes)"),
        ("n / N", "next / previous match"),
        ("q / enter", "quote the selection, else the current match widened to its sentence"),
        ("shift+arrows, mouse", "select a passage"),
        ("s / S", "next / previous pinned source"),
        ("/ then enter", "also lists the hits in every pinned source of the protocol, by source and heading"),
        ("h", "outline: the headings of this source (enter jumps to one)"),
        ("w / .", "extend the selection to whole words / whole sentences"),
        ("c", "candidate passages for the field (enter jumps to one, then q quotes it); "
              "off with candidates: false"),
        ("tab", "the cell's quotes: enter shows one, delete removes it (asks first)"),
        ("pgdn / pgup, arrows", "move through the text"),
        ("escape", "back to the cell"),
    ]
    """The reader's keys, for the keys table of whichever screen holds it."""

    DEFAULT_CSS = """
    Reader { height: 1fr; }
    Reader #reader-title { height: 1; background: $boost; padding: 0 1; text-wrap: nowrap; text-overflow: ellipsis; }
    Reader #reader-body { height: 1fr; }
    Reader #reader-text { width: 1fr; border: none; }
    Reader #reader-side { width: 38; padding: 0 1; border-left: solid $primary-background; }
    Reader .reader-heading { text-style: bold; margin-top: 1; }
    Reader #reader-quotes { height: 1fr; max-height: 20; }
    Reader #reader-candidates { height: 1fr; max-height: 20; }
    Reader.-pane #reader-candidates { height: auto; max-height: 8; border: none; padding: 0; }
    Reader #reader-position { height: auto; color: $text-muted; }
    Reader #reader-search { margin-top: 1; }
    /* A pane beside the cell: the text on top, position, search and quotes under it. */
    Reader.-pane #reader-title { background: $boost; padding: 0; }
    Reader.-pane #reader-body { layout: vertical; }
    Reader.-pane #reader-text { height: 1fr; width: 1fr; }
    Reader.-pane #reader-side { width: 1fr; height: auto; padding: 0; border-left: none; border-top: hkey $panel; }
    Reader.-pane #reader-search { margin-top: 0; }
    Reader.-pane .reader-heading { margin-top: 0; }
    Reader.-pane #reader-quotes { height: auto; max-height: 5; border: none; padding: 0; }
    Reader.-pane #reader-help { display: none; }
    """

    @dataclass
    class Left(Message):
        """Escape in the reader: its holder returns to the cell."""

        reader: Reader

    def __init__(self, paths: Paths, protocol: Protocol, cell: Cell, *,
                 on_quote: Callable[[Quote], Cell | None] | None = None,
                 on_remove: Callable[[int], Cell | None] | None = None,
                 source_id: str | None = None, field_label: str = "",
                 on_candidates: Callable[[str, str], list[Candidate]] | None = None,
                 on_leave: Callable[[], None] | None = None, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.on_leave = on_leave
        """Called at once on escape (the holder moves the focus back to the cell); None: a
        :class:`Left` message is posted instead."""
        self.on_candidates = on_candidates
        """Ranks candidate passages for (protocol id, field id); raises Rejected with the reason
        when there are none to show (candidates: false, no snapshot present). None: no candidates."""
        self.candidates: list[Candidate] = []
        self._pending_jump: Candidate | None = None
        self._jumps: list[Candidate | None] = []
        """What each row of the list under the quotes jumps to (None: a group's title)."""
        self.paths = paths
        self.protocol = protocol
        self.cell = cell
        self.on_quote = on_quote
        """Called with each new quote; returns the cell as it now is (None: not taken)."""
        self.on_remove = on_remove
        self.field_label = field_label or cell.field
        self.snapshots = Snapshots(paths)
        self.sources: list[Source] = [s for s in protocol.sources if s.has_snapshot]
        self.source_index = next((i for i, s in enumerate(self.sources) if s.id == source_id), 0)
        self.reading: ReadingText | None = None
        self.matches: list[Span] = []
        self.match_index = -1
        self.query_text = ""
        self.quote_spans: dict[int, Span] = {}
        """Where each of the cell's quotes is in the text shown (by its number in the cell)."""

    # ------------------------------------------------------------------ layout

    def compose(self) -> ComposeResult:
        yield Static("", id="reader-title")
        with Horizontal(id="reader-body"):
            yield ReaderText(id="reader-text")
            with Vertical(id="reader-side"):
                yield Static("", id="reader-position")
                # Beside (or under) the text, always shown: showing it must not resize, and so
                # re-wrap, the text.
                yield Input(id="reader-search", placeholder="/ to search", compact=self.has_class("-pane"))
                yield Static("Quotes of this cell", classes="reader-heading")
                yield OptionList(id="reader-quotes")
                yield Static("", id="reader-candidates-heading", classes="reader-heading")
                yield OptionList(id="reader-candidates")
                yield Static("/ search · n/N next/prev · q quote · s source · esc back", id="reader-help")

    def on_mount(self) -> None:
        self._hide_candidates()
        self._show_quotes()
        if not self.sources:
            self._show_message(f"No snapshot is pinned for {self.protocol.name}. Pin a copy of a source with: "
                               f"protocoder source add {self.protocol.id} FILE")
            return
        self.load_source()

    @property
    def source(self) -> Source | None:
        """The source on screen."""
        return self.sources[self.source_index] if self.sources else None

    @property
    def text_area(self) -> ReaderText:
        return self.query_one("#reader-text", ReaderText)

    def _show_message(self, message: str) -> None:
        self.query_one("#reader-title", Static).update(Text(message, style="bold"))
        self.text_area.show_text("")

    # ------------------------------------------------------------------ attributes down

    def show_cell(self, cell: Cell, field_label: str = "") -> None:
        """Quote into ``cell`` from now on (the coding screen moved to another field, or saved it)."""
        moved = (cell.protocol, cell.field) != (self.cell.protocol, self.cell.field)
        self.cell = cell
        self.field_label = field_label or cell.field
        if self.is_mounted:
            if moved:
                self._hide_candidates()  # they answered the previous field: c asks for this one's
            self._show_quotes()
            self._repaint()
            self._moved()

    def show_protocol(self, protocol: Protocol, cell: Cell, field_label: str = "") -> None:
        """Read another protocol's snapshots (or the same protocol's, after its sources changed)."""
        same = protocol.id == self.protocol.id
        shown = self.source.id if same and self.source is not None else None
        self.protocol = protocol
        self.sources = [s for s in protocol.sources if s.has_snapshot]
        self.source_index = next((i for i, s in enumerate(self.sources) if s.id == shown), 0)
        self.reading = None
        self.matches, self.match_index = [], -1
        self.show_cell(cell, field_label)
        if not self.sources:
            self._show_message(f"No snapshot is pinned for {self.protocol.name}. Pin a copy of a source with: "
                               f"protocoder source add {self.protocol.id} FILE")
            return
        self.load_source()

    def focus_text(self) -> None:
        """Put the focus on the text (the reader's keys then apply), now: ``Widget.focus`` defers
        it to a callback queued behind keys already typed, which then went to the old focus."""
        self._focus_now(self.text_area)

    def _focus_now(self, widget: Widget) -> None:
        self.screen.set_focus(widget)

    # ------------------------------------------------------------------ loading

    @work(thread=True, exclusive=True, group="reader-load", exit_on_error=False)
    def load_source(self) -> None:
        """Read the snapshot's text off the UI thread (a sidecar loads at once; a missing one is extracted)."""
        source = self.source
        assert source is not None
        state = self.snapshots.state(source.sha256, source.media_type)
        if not state.present:
            self.app.call_from_thread(self._show_message, f"{source.title}: the snapshot {self.paths.show(state.file)} "
                                      "is not present here (sources may be kept out of git)")
            return
        try:
            reading = FlowingText(self.snapshots.text(source.sha256, source.media_type),
                                  flow=source.media_type in FLOWING_MEDIA)
        except InvalidInput as exc:
            self.app.call_from_thread(self._show_message, f"{source.title}: {exc.problems[0].message}")
            return
        self.app.call_from_thread(self._show_text, source, reading, state.intact)

    def _show_text(self, source: Source, reading: ReadingText, intact: bool) -> None:
        if source is not self.source:
            return  # another source was chosen meanwhile
        self.reading = reading
        self.matches, self.match_index = [], -1
        area = self.text_area
        area.show_text(reading.display)
        title = Text.assemble((source.title, "bold"), f" · {source.version} · {source.media_type}",
                              (f" · source {self.source_index + 1} of {len(self.sources)}"
                               if len(self.sources) > 1 else "", "dim"))
        if not intact:
            title.append(" · changed since it was pinned: validate reports it", style="bold red")
        self.query_one("#reader-title", Static).update(title)
        self._show_quotes()
        self._repaint()
        if self.query_text:
            self._search(self.query_text, jump=False)
        first = next(iter(self.quote_spans.values()), None)
        if self._pending_jump is not None:
            self._jump_to_candidate()
            return
        if first is not None:
            self._select(first, select=False)
        if self.screen.focused is None:
            # Only when nothing has the focus. The text arrives after the keys typed meanwhile
            # were handled: the reviewer may have gone back to the cell, or into the search box
            # or the quotes; taking the focus back then sent what they typed next elsewhere.
            self._focus_now(area)

    # ------------------------------------------------------------------ marks

    def _locate_quotes(self) -> None:
        self.quote_spans = {}
        source, reading = self.source, self.reading
        if source is None or reading is None:
            return
        for number, quote in enumerate(self.cell.quotes):
            if quote.source != source.id or anchor(quote, source) is not Anchor.CURRENT:
                continue
            haystack = reading.haystack
            if quote.start is not None and quote.end is not None and haystack.matches_at(quote.text, quote.start,
                                                                                          quote.end):
                self.quote_spans[number] = Span(quote.start, quote.end)
            elif (found := haystack.find(quote.text)) is not None:
                self.quote_spans[number] = found

    def _repaint(self) -> None:
        reading = self.reading
        if reading is None:
            return
        marks: dict[str, list[tuple[tuple[int, int], tuple[int, int]]]] = {
            "marker": [(reading.location(m.start), reading.location(m.end)) for m in reading.markers],
            "heading": [((row, 0), (row, 10_000)) for row in reading.heading_rows()],
            "quote": [reading.rows(span) for span in self.quote_spans.values()],
            "match": [reading.rows(span) for span in self.matches[:MATCH_LIMIT]],
        }
        if 0 <= self.match_index < len(self.matches):
            marks["current"] = [reading.rows(self.matches[self.match_index])]
        self.text_area.show_marks(marks)

    def _show_quotes(self) -> None:
        self._locate_quotes()
        listing = self.query_one("#reader-quotes", OptionList)
        options = []
        source = self.source
        for number, quote in enumerate(self.cell.quotes):
            where = location_text(quote.page, quote.section) or "no position yet"
            note = ""
            if source is None or quote.source != source.id:
                note = f" · {quote.source}"
            elif number not in self.quote_spans:
                state = anchor(quote, source)
                note = {Anchor.DRIFTED: " · drifted: not in this version",
                        Anchor.CONFIRMED: " · of an earlier version (confirmed)"}.get(state, " · not in this version")
            text = printable(quote.text)
            options.append(Option(Text.assemble((f"{number + 1}. {where}{note}\n", "dim"),
                                                text if len(text) <= 160 else text[:159] + "…"),
                                  id=str(number)))
        listing.set_options(options or [Option(Text("none yet: select a passage and press q", style="dim"),
                                               disabled=True)])

    # ------------------------------------------------------------------ position

    @on(TextArea.SelectionChanged, "#reader-text")
    def _moved(self) -> None:
        reading, source = self.reading, self.source
        if reading is None or source is None:
            return
        row, column = self.text_area.selection.end
        offset = reading.to_extracted(reading.offset(row, column))
        page, section = position(reading.extracted, offset)
        where = location_text(page, section) or "no page or heading"
        lines = [f"{self.protocol.name} · {self.field_label}", f"at {where}"]
        if self.matches:
            lines.append(f"match {self.match_index + 1 if self.match_index >= 0 else '-'} of {len(self.matches)}"
                         f"{'+' if len(self.matches) >= 1000 else ''} for “{self.query_text}”")
        elif self.query_text:
            lines.append(f"no match for “{self.query_text}”")
        self.query_one("#reader-position", Static).update(Text("\n".join(lines)))

    def _select(self, span: Span, *, select: bool = True) -> None:
        reading = self.reading
        if reading is None:
            return
        start, end = reading.rows(span)
        area = self.text_area
        area.selection = Selection(start, end) if select else Selection(start, start)
        area.scroll_cursor_visible(center=True, animate=False)

    # ------------------------------------------------------------------ search

    def action_search(self) -> None:
        box = self.query_one("#reader-search", Input)
        # What is in the box stays: the last search, or words typed and not yet searched for.
        if not box.value:
            box.value = self.query_text
        box.focus()
        box.select_all()  # typing replaces the last search; enter repeats it

    @on(Input.Submitted, "#reader-search")
    def _submitted(self, event: Input.Submitted) -> None:
        query = event.value.strip()
        self._search(query, jump=True)
        self._close_search()
        if query and len(self.sources) > 1:
            self._search_sources(query)

    @work(thread=True, exclusive=True, group="reader-search-all", exit_on_error=False)
    def _search_sources(self, query: str) -> None:
        """Every pinned source of the protocol searched for ``query`` (as validate matches), off the UI thread."""
        hits: list[tuple[Source, list[Candidate]]] = []
        for source in list(self.sources):
            state = self.snapshots.state(source.sha256, source.media_type)
            if not state.present:
                continue
            try:
                reading = ReadingText(self.snapshots.text(source.sha256, source.media_type))
            except InvalidInput:
                continue
            found = []
            for span in reading.haystack.find_all(query, limit=SEARCH_HITS_PER_SOURCE):
                page, section = position(reading.extracted, span.start)
                context = reading.sentence(span)
                found.append(Candidate(source.id, location_text(page, section), span.start, span.end, None, None,
                                       reading.passage(context), 0.0))
            hits.append((source, found))
        self.app.call_from_thread(self._show_hits, query, hits)

    def _show_hits(self, query: str, hits: list[tuple[Source, list[Candidate]]]) -> None:
        total = sum(len(found) for _, found in hits)
        rows: list[tuple[Text, Candidate | None]] = []
        for source, found in hits:
            rows.append((Text(f"{source.title} · {len(found)} hit{'s' if len(found) != 1 else ''}"
                              f"{'+' if len(found) >= SEARCH_HITS_PER_SOURCE else ''}", style="bold"), None))
            for hit in found:
                rows.append((self._row(hit.heading or "no heading", hit.text), hit))
        self._show_list(f"“{query}” in {len(hits)} sources: {total} hit{'s' if total != 1 else ''} · enter jumps",
                        rows, focus=False)

    def action_outline(self) -> None:
        """List the headings of the source shown, indented by level; enter jumps to one."""
        reading, source = self.reading, self.source
        if reading is None or source is None:
            self.notify("There is no text here yet.", severity="warning")
            return
        rows: list[tuple[Text, Candidate | None]] = []
        for offset, level, title in reading.extracted.headings:
            jump = Candidate(source.id, title, offset, offset + len(title), None, None, title, 0.0)
            rows.append((Text("  " * max(level - 1, 0) + title), jump))
        if not rows:
            self.notify(f"{source.title} has no headings.", severity="warning")
            return
        self._show_list(f"Outline of {source.title} · enter jumps", rows)

    def action_widen(self, unit: str) -> None:
        """Extend the selection to whole words, or to the sentences holding it."""
        reading = self.reading
        if reading is None:
            return
        selection = self.text_area.selection
        first, last = sorted((selection.start, selection.end))
        start = reading.to_extracted(reading.offset(*first))
        end = reading.to_extracted(reading.offset(*last))
        text = reading.extracted.text
        if unit == "word":
            while start > 0 and (text[start - 1].isalnum() or text[start - 1] in "_'’-"):
                start -= 1
            while end < len(text) and (text[end].isalnum() or text[end] in "_'’-"):
                end += 1
            span = Span(start, end)
        else:
            span = reading.sentence(Span(start, end))
        self._select(span)
        self._moved()

    def _close_search(self) -> None:
        self._focus_now(self.text_area)

    def _search(self, query: str, *, jump: bool) -> None:
        self.query_text = query
        reading = self.reading
        self.matches = reading.haystack.find_all(query, limit=MATCH_LIMIT) if reading is not None and query else []
        self.match_index = -1
        if jump and self.matches and reading is not None:
            row, column = self.text_area.selection.start
            here = reading.to_extracted(reading.offset(row, column))
            after = [i for i, span in enumerate(self.matches) if span.start >= here]
            self.match_index = after[0] if after else 0
            self._select(self.matches[self.match_index])
        elif jump and query:
            self.notify(f"“{query}” is not in this source", severity="warning")
        self._repaint()
        self._moved()

    def _step(self, delta: int) -> None:
        if not self.matches:
            self.notify("Search first: press /" if not self.query_text else f"No match for “{self.query_text}”",
                        severity="warning")
            return
        self.match_index = (self.match_index + delta) % len(self.matches) if self.match_index >= 0 else \
            (0 if delta > 0 else len(self.matches) - 1)
        self._select(self.matches[self.match_index])
        self._repaint()
        self._moved()

    def action_next_match(self) -> None:
        self._step(+1)

    def action_previous_match(self) -> None:
        self._step(-1)

    # ------------------------------------------------------------------ quoting

    def passage_to_quote(self) -> Span | None:
        """What ``q`` quotes: the selection; else the current match widened to its sentence; else
        the sentence at the cursor."""
        reading = self.reading
        if reading is None:
            return None
        selection = self.text_area.selection
        first, last = sorted((selection.start, selection.end))
        start = reading.to_extracted(reading.offset(*first))
        end = reading.to_extracted(reading.offset(*last))
        if end > start and reading.extracted.text[start:end].strip():
            current = self.matches[self.match_index] if 0 <= self.match_index < len(self.matches) else None
            if current is None or (start, end) != (current.start, current.end):
                return Span(start, end)
            return reading.sentence(current)
        return reading.sentence(Span(start, start))

    def action_quote(self) -> None:
        reading, source = self.reading, self.source
        if reading is None or source is None:
            self.notify("There is no text to quote here.", severity="warning")
            return
        if self.on_quote is None:
            self.notify("This session is read-only: quotes cannot be added.", severity="warning")
            return
        span = self.passage_to_quote()
        text = reading.passage(span) if span is not None else ""
        if span is None or not text:
            self.notify("Select a passage first (shift+arrows or the mouse), or search with /.", severity="warning")
            return
        quote = locate_quote(Quote(source.id, text, start=span.start, end=span.end), source, self.snapshots)
        if quote is None:  # pragma: no cover - the passage comes from this very text
            self.notify("That passage cannot be located in the snapshot.", severity="error")
            return
        if any(same_quote(quote, existing) for existing in self.cell.quotes):
            self.notify("This cell quotes that passage already.")
            return
        updated = self.on_quote(quote)
        if updated is None:
            return
        self.cell = updated
        self._show_quotes()
        self._repaint()
        where = location_text(quote.page, quote.section)
        self.notify(f"Quoted{f' ({where})' if where else ''}: “{printable(text[:80])}{'…' if len(text) > 80 else ''}”")

    @on(OptionList.OptionSelected, "#reader-quotes")
    def _quote_chosen(self, event: OptionList.OptionSelected) -> None:
        number = int(event.option.id or -1)
        span = self.quote_spans.get(number)
        if span is None:
            self.notify("That quote is not in the text shown (another source, or another version).",
                        severity="warning")
            return
        self._select(span)
        self.text_area.focus()

    def action_remove_quote(self) -> None:
        listing = self.query_one("#reader-quotes", OptionList)
        if self.screen.focused is not listing or listing.highlighted is None or not self.cell.quotes:
            return
        if self.on_remove is None:
            self.notify("This session is read-only: quotes cannot be removed.", severity="warning")
            return
        from ..screens.confirm import ConfirmModal  # screens import the widgets, not the other way round

        index = listing.highlighted
        quote = self.cell.quotes[index]
        text = " ".join(printable(quote.text).split())

        def answered(yes: bool | None) -> None:
            if not yes or self.on_remove is None:
                return
            updated = self.on_remove(index)
            if updated is not None:
                self.cell = updated
                self._show_quotes()
                self._repaint()
                self.notify(f"Quote {index + 1} removed (saved)")

        self.app.push_screen(ConfirmModal(f"Remove quote {index + 1} of {self.field_label}?",
                                          f"“{text[:200]}{'…' if len(text) > 200 else ''}”", yes="Remove",
                                          danger=True), answered)

    # ------------------------------------------------------------------ candidates

    def _hide_candidates(self) -> None:
        self.candidates = []
        self.query_one("#reader-candidates-heading", Static).display = False
        self.query_one("#reader-candidates", OptionList).display = False

    def action_candidates(self) -> None:
        """Rank the protocol's passages for the cell's field (off the UI thread) and list them."""
        if self.on_candidates is None:
            self.notify("Candidate passages are not available here.", severity="warning")
            return
        heading = self.query_one("#reader-candidates-heading", Static)
        heading.update(f"Candidates for {self.field_label}: ranking…")
        heading.display = True
        self._rank(self.cell.protocol, self.cell.field)

    @work(thread=True, exclusive=True, group="reader-candidates", exit_on_error=False)
    def _rank(self, protocol_id: str, field_id: str) -> None:
        assert self.on_candidates is not None
        try:
            found = self.on_candidates(protocol_id, field_id)
        except Rejected as exc:
            self.app.call_from_thread(self._show_candidates, protocol_id, field_id, [], str(exc))
            return
        self.app.call_from_thread(self._show_candidates, protocol_id, field_id, found, "")

    def _show_candidates(self, protocol_id: str, field_id: str, found: list[Candidate], refusal: str) -> None:
        if (protocol_id, field_id) != (self.cell.protocol, self.cell.field):
            return  # the cell moved on meanwhile
        heading = self.query_one("#reader-candidates-heading", Static)
        listing = self.query_one("#reader-candidates", OptionList)
        if refusal:
            heading.update(Text(f"No candidates: {refusal}", style="dim"))
            listing.display = False
            self.notify(f"No candidate passages: {refusal}", severity="warning", timeout=8)
            return
        self.candidates = found
        titles = {source.id: source.title for source in self.sources}
        rows: list[tuple[Text, Candidate | None]] = [
            (self._row(f"{n}. {titles.get(c.source, c.source)} › {c.heading or 'no heading'}", c.text), c)
            for n, c in enumerate(found, 1)]
        self._show_list(f"Candidates for {self.field_label} ({len(found)}): enter jumps, q quotes", rows)

    @staticmethod
    def _row(where: str, text: str) -> Text:
        flat = " ".join(printable(text).split())
        return Text.assemble((f"{where}\n", "dim"), flat if len(flat) <= 160 else flat[:159] + "…")

    def _show_list(self, title: str, rows: list[tuple[Text, Candidate | None]], *, focus: bool = True) -> None:
        """Show a list of places to jump to (candidates, search hits, the outline) under ``title``."""
        heading = self.query_one("#reader-candidates-heading", Static)
        listing = self.query_one("#reader-candidates", OptionList)
        heading.update(title)
        heading.display = True
        self._jumps = [jump for _, jump in rows]
        listing.set_options([Option(text, id=str(i), disabled=jump is None) for i, (text, jump) in enumerate(rows)]
                            or [Option(Text("nothing found", style="dim"), disabled=True)])
        listing.display = True
        listing.highlighted = next((i for i, jump in enumerate(self._jumps) if jump is not None), None)
        if focus:
            listing.focus()

    @on(OptionList.OptionSelected, "#reader-candidates")
    def _candidate_chosen(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        candidate = self._jumps[int(event.option.id or 0)]
        if candidate is None:
            return
        self._pending_jump = candidate
        index = next((i for i, s in enumerate(self.sources) if s.id == candidate.source), None)
        if index is None:
            self.notify(f"Source {candidate.source} has no snapshot here.", severity="warning")
            return
        if index != self.source_index or self.reading is None:
            self.source_index = index
            self.reading = None
            self.load_source()  # _show_text jumps once the text is shown
            return
        self._jump_to_candidate()

    def _jump_to_candidate(self) -> None:
        candidate, self._pending_jump = self._pending_jump, None
        if candidate is None or self.reading is None:
            return
        self._select(Span(candidate.start, candidate.end))
        self.text_area.focus()
        self._moved()

    # ------------------------------------------------------------------ sources, leaving

    def _switch(self, delta: int) -> None:
        if len(self.sources) < 2:
            self.notify("This protocol has one pinned snapshot." if self.sources else "No snapshot is pinned.")
            return
        self.source_index = (self.source_index + delta) % len(self.sources)
        self.reading = None
        self.load_source()

    def action_next_source(self) -> None:
        self._switch(+1)

    def action_previous_source(self) -> None:
        self._switch(-1)

    def action_leave(self) -> None:
        if self.screen.focused is self.query_one("#reader-search", Input):
            self._close_search()
            return
        if self.on_leave is not None:
            self.on_leave()  # now, before the keys typed after escape (a message would wait behind them)
            return
        self.post_message(self.Left(self))
