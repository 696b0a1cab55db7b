"""Showing a document: the reader's base, which loads a source and shows its text and marks.

The text is the snapshot's extracted text (what ``validate`` checks quotes against), with a
marker line before each page, drawn by :class:`~.text.ReaderText` (running text, or numbered
lines for code); headings, the cell's quotes, other fields' quotes and search matches are
highlighted. :class:`ReaderDocument` is the part of the
:class:`~.Reader` that loads a source, shows it, moves between sources and leaves; the
other parts (search, candidates, quoting, coverage) are its siblings in this package.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Input, OptionList, Static, TextArea
from textual.widgets.text_area import Selection

from ....errors import InvalidInput
from ....evidence.locate import Span
from ....evidence.reading import ReadingText
from ....evidence.search import Candidate
from ....evidence.snapshots import Snapshots, location_text, position
from ....model import Cell, Protocol, Quote, Source, SourceReading
from ....storage.paths import Paths
from .text import FLOWING_MEDIA, FlowingText, ReaderText, keeps_lines

MATCH_LIMIT = 5000
"""Most matches of one search that are highlighted and stepped through."""


class ReaderDocument(Vertical):
    """The reader's base: one protocol's snapshots, the source on screen, its marks and the position."""

    @dataclass
    class Left(Message):
        """Escape in the reader: its holder returns to the cell."""

        reader: ReaderDocument

    if TYPE_CHECKING:
        # The sibling parts' members the base calls.
        def _hide_candidates(self) -> None: ...
        def _show_quotes(self) -> None: ...
        def _search(self, query: str, *, jump: bool) -> None: ...
        def _jump_to_candidate(self) -> None: ...
        def _close_search(self) -> None: ...
        def _start_coverage(self) -> None: ...
        def hand_over_reading(self) -> None: ...
        def reading_of(self, source: Source) -> SourceReading | None: ...

    def __init__(self, paths: Paths, protocol: Protocol, cell: Cell, *,
                 on_quote: Callable[[Quote], Cell | None] | None = None,
                 on_remove: Callable[[int], Cell | None] | None = None,
                 source_id: str | None = None, field_label: str = "",
                 on_candidates: Callable[[str, str], list[Candidate]] | None = None,
                 on_leave: Callable[[], None] | None = None,
                 fields: Sequence[tuple[str, str]] = (),
                 cells: Callable[[], Mapping[str, Cell]] | None = None,
                 on_quote_into: Callable[[str, Quote], Cell | None] | None = None,
                 on_remove_from: Callable[[str, int], Cell | None] | None = None,
                 on_reading: Callable[[str, Source, int, list[int]], None] | None = None,
                 recorded_reading: Callable[[Source], SourceReading | None] | None = None,
                 **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.on_reading = on_reading
        """Called with (protocol id, source, its block count, the blocks seen of it) in batches: the
        holder records them as the reviewer's reading (None: reading is not recorded)."""
        self.recorded_reading = recorded_reading
        """What the reviewer's file records as read of a source (None: nothing is known)."""
        self._intact = True
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
        self.fields: list[tuple[str, str]] = list(fields) or [(cell.field, self.field_label)]
        """The protocol's fields as (id, label), in the rubric's order: what ``q`` can quote into."""
        self.cells_of = cells
        """The protocol's cells as the holder has them now, by field (None: only :attr:`cell` is known)."""
        if on_quote_into is None and on_quote is not None:
            # A holder that knows one cell: quotes go to that cell only.
            def on_quote_into(field_id: str, quote: Quote) -> Cell | None:
                return on_quote(quote) if field_id == self.cell.field else None
        if on_remove_from is None and on_remove is not None:
            def on_remove_from(field_id: str, index: int) -> Cell | None:
                return on_remove(index) if field_id == self.cell.field else None
        self.on_quote_into = on_quote_into
        """Called with (field id, new quote); returns that field's cell as it now is (None: not taken)."""
        self.on_remove_from = on_remove_from
        """Called with (field id, quote number); returns that field's cell as it now is (None: not done)."""
        self.said = ""
        """The reader's status line, as last set."""
        self.field_spans: list[tuple[str, Span]] = []
        """Where the other fields' quotes are in the text shown: (field id, span)."""
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
                # What the last key did (quoted, undone): a line here, not a toast over the quotes.
                yield Static("", id="reader-status")
                # Beside (or under) the text, always shown: showing it must not resize, and so
                # re-wrap, the text.
                yield Input(id="reader-search", placeholder="/ to search", compact=True)
                yield Static("Quotes of this cell", classes="reader-heading")
                yield OptionList(id="reader-quotes")
                yield Static("", id="reader-candidates-heading", classes="reader-heading")
                yield OptionList(id="reader-candidates")
                yield Static("/ search · n/N next/prev · q quote · s source · esc back", id="reader-help")

    def on_mount(self) -> None:
        self.query_one("#reader-status", Static).display = False
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

    def say(self, message: str, *, warning: bool = False) -> None:
        """Tell the reviewer what just happened, on the reader's status line (it stays until the next)."""
        self.said = message
        status = self.query_one("#reader-status", Static)
        status.update(Text(message, style="bold yellow" if warning else ""))
        status.display = bool(message)

    def cells(self) -> dict[str, Cell]:
        """The protocol's cells by field as the holder has them now (the cell being coded among them)."""
        cells = dict(self.cells_of()) if self.cells_of is not None else {}
        cells[self.cell.field] = self.cell
        return cells

    def field_name(self, field_id: str) -> str:
        """A field's label."""
        return next((label for known, label in self.fields if known == field_id), field_id)

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
        area.show_line_numbers = keeps_lines(source.media_type)
        area.show_text(reading.display)
        self._intact = intact
        self._start_coverage()
        self._show_title()
        self._show_quotes()
        self._repaint()
        self._moved()
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

    def _show_title(self) -> None:
        """The title line: the source, its version and type, where it is among the sources, the share read."""
        source = self.source
        if source is None or self.reading is None:
            return
        read = self.reading_of(source)
        # What changes as one reads comes first: at 80 columns the end of the line is cut.
        title = Text.assemble((source.title, "bold"), (f" · {read.percent} read" if read is not None else "", "bold"),
                              (f" · source {self.source_index + 1} of {len(self.sources)}"
                               if len(self.sources) > 1 else "", "dim"),
                              f" · {source.version} · {source.media_type}")
        if not self._intact:
            title.append(" · changed since it was pinned: validate reports it", style="bold red")
        self.query_one("#reader-title", Static).update(title)

    # ------------------------------------------------------------------ marks

    def _repaint(self) -> None:
        reading = self.reading
        if reading is None:
            return
        marks: dict[str, list[tuple[tuple[int, int], tuple[int, int]]]] = {
            "marker": [(reading.location(m.start), reading.location(m.end)) for m in reading.markers],
            "heading": [((row, 0), (row, 10_000)) for row in reading.heading_rows()],
            "quoted": [reading.rows(span) for _, span in self.field_spans],
            "quote": [reading.rows(span) for span in self.quote_spans.values()],
            "match": [reading.rows(span) for span in self.matches[:MATCH_LIMIT]],
        }
        if 0 <= self.match_index < len(self.matches):
            marks["current"] = [reading.rows(self.matches[self.match_index])]
        self.text_area.show_marks(marks)


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
        if self.text_area.show_line_numbers:
            where = f"line {row + 1}" + (f" · {location_text(page, section)}" if section or page else "")
        lines = [f"{self.protocol.name} · {self.field_label}", f"at {where}"]
        quoted_for = sorted({self.field_name(field_id) for field_id, span in self.field_spans
                             if span.start <= offset <= span.end})
        if quoted_for:
            # The passages other fields quote are underlined; which fields, said here.
            lines.append(f"quoted for {', '.join(quoted_for)}")
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


    # ------------------------------------------------------------------ sources, leaving

    def _switch(self, delta: int) -> None:
        if len(self.sources) < 2:
            self.say("This protocol has one pinned snapshot." if self.sources else "No snapshot is pinned.")
            return
        self.source_index = (self.source_index + delta) % len(self.sources)
        self.reading = None
        self.load_source()

    def action_pick_source(self) -> None:
        """The protocol's sources in a list with a filter: enter opens the one picked."""
        if len(self.sources) < 2:
            self.say("This protocol has one pinned snapshot." if self.sources else "No snapshot is pinned.")
            return
        from ...screens.source_picker import SourcePickerModal  # screens import the widgets, not the other way

        read = {source.id: share.percent for source in self.sources if (share := self.reading_of(source)) is not None}
        shown = self.source.id if self.source is not None else None
        self.app.push_screen(SourcePickerModal(self.sources, shown, read), self._open_source)

    def _open_source(self, source_id: str | None) -> None:
        index = next((i for i, source in enumerate(self.sources) if source.id == source_id), None)
        if index is None or (index == self.source_index and self.reading is not None):
            return
        self.source_index = index
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
        self.hand_over_reading()
        if self.on_leave is not None:
            self.on_leave()  # now, before the keys typed after escape (a message would wait behind them)
            return
        self.post_message(self.Left(self))
