"""The side pane of the coding screen (``#aside``): the rubric guide, or the source reader.

The side pane is open by default when the terminal is at least :data:`WIDE` columns wide;
``f2`` opens or closes it at any width (when narrow, it takes the place of the fields and
sources, so the cell stays in view). Other panes can be mounted into ``#aside`` and shown
with :meth:`CodingAside.show_aside`.

``ctrl+l`` opens the reader on the protocol's pinned snapshots: from :data:`WIDE` columns on
as a pane in ``#aside`` in place of the rubric guide (escape returns to the cell and the
pane stays, following the cell from field to field; ``f2`` brings the rubric guide back);
narrower, on a screen of its own (:class:`~.reader.ReaderScreen`), since a pane there would
be a few words wide. The cell's quotes are listed under its source location either way.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING

from textual import events, on
from textual.containers import Vertical
from textual.screen import Screen

from ...errors import Rejected
from ...evidence.quotes import same_quote
from ...evidence.search import Candidate
from ...evidence.snapshots import location_text
from ...model import Cell, Field, Protocol, Quote, Source, SourceReading
from ..session import Session
from ..widgets import CellEditor, CodeChoice, RubricGuide, SourceList
from ..widgets.reader import Reader

_PARAMETER = re.compile(r"^`?[A-Za-z_][A-Za-z0-9_.\-]*`?(\s*[:=(].*)?$")
_SECTION_WORDS = re.compile(r"^[A-Za-z][a-z]+$")


def parameter_heading(section: str) -> bool:
    """True when a heading names a parameter or option (``max_steps``, ``--limit``, ``sandbox.type``)
    rather than a section: one code-like token (underscore, dot, dash or backticks), not a word."""
    text = section.strip()
    option = text.startswith("-")
    text = text.lstrip("-")
    if not text or " " in text.split("(")[0].split(":")[0].strip():
        return False
    if _SECTION_WORDS.match(text) and not option:
        return False  # "Overview", "Scoring": a one-word section title
    return bool(_PARAMETER.match(text))


WIDE = 120
"""From this many columns on, the rubric guide is open beside the cell by default."""


class CodingAside(Screen[None]):
    """The side pane of :class:`~.coding.CodingScreen`: when it shows, what it holds (the
    rubric guide or the reader), and the reader's quotes, written to the cell being coded.

    A part of the coding screen, not a screen of its own. It is a ``Screen`` rather than a
    plain mixin because Textual registers ``@on`` handlers only on its own classes.
    """

    def __init__(self) -> None:
        super().__init__()
        self.aside_open: bool | None = None
        """The reviewer's choice for the side pane; None: open when the terminal is wide."""
        self._reader: Reader | None = None
        """The reader pane in ``#aside``, once opened (kept, hidden, when closed: it keeps its place)."""
        self._aside_before_reader: bool | None = None
        self._last_quote: tuple[str, Quote, str | None] | None = None
        """The quote added last: its field, the quote, and the source location it replaced (None: it filled none)."""
        self._reading_now: dict[tuple[str, str], SourceReading] = {}
        """What was handed over as read in this session, by (protocol, snapshot SHA-256), before it is on disk."""
        self.candidates_shown: set[tuple[str, str]] = set()
        """(protocol, field) of the cells whose candidate passages were listed in this session."""

    if TYPE_CHECKING:
        # The coding screen's members (and its drafts') the side pane uses.
        @property
        def session(self) -> Session: ...
        @property
        def protocol(self) -> Protocol: ...
        @property
        def field(self) -> Field: ...
        @property
        def code_choice(self) -> CodeChoice: ...
        @property
        def sources(self) -> SourceList: ...
        @property
        def editor(self) -> CellEditor: ...
        def flush_edits(self) -> None: ...
        def _draft(self, field_id: str) -> Cell: ...
        def _write_quotes(self, cell: Cell) -> Cell: ...
        def _show_field(self) -> None: ...
        def action_next_field(self) -> None: ...
        def action_previous_field(self) -> None: ...

    def on_resize(self, event: events.Resize) -> None:
        self._arrange()

    def _arrange(self) -> None:
        """Show or hide the side pane for the width; when narrow, it replaces the fields and sources."""
        wide = self.size.width >= WIDE
        shown = self.aside_open if self.aside_open is not None else wide
        self.query_one("#aside", Vertical).display = shown
        self.query_one("#coding-side", Vertical).display = wide or not shown
        self.set_class(wide, "-wide")

    def show_aside(self, shown: bool = True) -> None:
        """Open (or close) the side pane beside the cell, whatever the width."""
        self.aside_open = shown
        self._arrange()

    def action_toggle_aside(self) -> None:
        if self.reader_open:
            self.close_reader()  # the rubric guide comes back in its place
            self.show_aside(True)
            return
        self.show_aside(not self.query_one("#aside", Vertical).display)

    # ------------------------------------------------------------------ reader

    @property
    def reader_open(self) -> bool:
        """The reader pane is showing in ``#aside``."""
        return self._reader is not None and self._reader.display

    def _reading(self) -> bool:
        focused = self.focused
        return self._reader is not None and focused is not None and self._reader in focused.ancestors_with_self

    async def action_read_sources(self) -> None:
        """Open the reader on the protocol's snapshots: a pane beside the cell when wide, else a screen."""
        self.flush_edits()
        writable = not self.session.read_only
        quoting = dict(fields=[(field.id, field.label) for field in self.session.rubric.fields]
                       if self.session.rubric is not None else [],
                       cells=self._cells, on_quote_into=self._add_quote if writable else None,
                       on_remove_from=self._remove_quote if writable else None,
                       on_reading=self._record_reading if writable else None,
                       recorded_reading=self._recorded_reading)
        if self.size.width < WIDE:
            from .reader import ReaderScreen

            self.app.push_screen(ReaderScreen(self.session.paths, self.protocol, self._draft(self.field.id),
                                              field_label=self.field.label, on_step=self._step_from_reader,
                                              on_candidates=self._candidates, **quoting),  # type: ignore[arg-type]
                                 lambda _: self._show_field())
            return
        reader = self._reader
        if reader is None:
            reader = Reader(self.session.paths, self.protocol, self._draft(self.field.id),
                            field_label=self.field.label, on_candidates=self._candidates,
                            on_leave=self._back_to_cell, id="reader-pane", classes="-pane",
                            **quoting)  # type: ignore[arg-type]
            self._reader = reader
            # Awaited: the keys typed after ctrl+l are handled once the reader is there, in order.
            await self.query_one("#aside", Vertical).mount(reader)
        if not self.reader_open or self._aside_before_reader is None:
            self._aside_before_reader = self.aside_open
        reader.display = True
        self.query_one("#rubric-guide", RubricGuide).display = False
        self.add_class("-reading")
        self.show_aside(True)
        # Now, not after the next refresh: a focus moved later would take the keys typed after
        # ctrl+l (escape, tab, the source location) into the reader.
        reader.focus_text()

    def _candidates(self, protocol_id: str, field_id: str) -> list[Candidate]:
        """Candidate passages for one cell (called off the UI thread by the reader). A cell whose
        candidates were shown is coded as ``assisted`` from then on (see CodingDrafts._write_code)."""
        from ...evidence.search import find_passages

        review = self.session.review
        if review is None:
            raise Rejected("the workspace is not loaded yet")
        # The ranking learns from this reviewer's own quotes of the field in other protocols.
        found = find_passages(review, protocol_id, field_id, limit=10, reviewer=self.session.reviewer)
        self.candidates_shown.add((protocol_id, field_id))
        return found

    def _step_from_reader(self, delta: int) -> tuple[Protocol, Cell, str]:
        """``]`` / ``[`` on the reader's own screen: move the cell, and tell the reader where it is now."""
        if delta > 0:
            self.action_next_field()
        else:
            self.action_previous_field()
        return self.protocol, self._draft(self.field.id), self.field.label

    def close_reader(self) -> None:
        """Hide the reader pane and bring back the rubric guide (and the side pane as it was)."""
        if not self.reader_open:
            return
        assert self._reader is not None
        self._reader.display = False
        self.query_one("#rubric-guide", RubricGuide).display = True
        self.remove_class("-reading")
        self.aside_open, self._aside_before_reader = self._aside_before_reader, None
        self._arrange()
        self.code_choice.focus()

    def _back_to_cell(self) -> None:
        """Escape in the reader pane: the codes have the focus at once (``set_focus``, not
        ``focus()``, which would act only after the keys typed after escape). The pane stays
        beside the cell and follows it from field to field; ctrl+l goes back in."""
        self.set_focus(self.code_choice)

    @on(Reader.Left)
    def _reader_left(self, event: Reader.Left) -> None:
        event.stop()
        self._back_to_cell()

    def _follow_protocol(self) -> None:
        reader = self._reader
        if reader is None:
            return
        protocol = self.protocol
        if reader.protocol.id != protocol.id or reader.protocol.sources != protocol.sources:
            reader.show_protocol(protocol, self._draft(self.field.id), self.field.label)

    def _cells(self) -> dict[str, Cell]:
        """The protocol's cells as drafted now, by field (what the reader marks, by field)."""
        rubric = self.session.rubric
        return {field.id: self._draft(field.id) for field in rubric.fields} if rubric is not None else {}

    def _record_reading(self, protocol_id: str, source: Source, blocks: int, seen: list[int]) -> None:
        """The reader's batch of blocks seen: queued for the reviewer's codes file like any edit."""
        # Through the app's write queue, as cells and notes are (the app, not imported here: screens
        # do not import the app).
        edit = self.session.reading_edit(protocol_id, source.sha256, blocks, seen)
        self._reading_now[(protocol_id, source.sha256)] = edit.reading
        self.app.queue_edit(edit)  # type: ignore[attr-defined]
        if protocol_id == self.protocol.id and self.is_mounted:
            self.sources.show(self.protocol.sources, self.read_shares())
            self.editor.show_quotes(self._draft(self.field.id), self.protocol.sources, read=self.read_line())

    def read_shares(self) -> dict[str, str]:
        """The share of each pinned snapshot of the protocol this reviewer has had on screen (``"63%"``)."""
        shares = {}
        for source in self.protocol.sources:
            if not source.has_snapshot or not source.id:
                continue
            known = self._reading_now.get((self.protocol.id, source.sha256))
            recorded = self.session.reading_of(self.protocol.id, source.sha256)
            if known is not None and recorded is not None:
                known = known.union(recorded)
            known = known or recorded
            shares[source.id] = known.percent if known is not None else "0%"
        return shares

    def read_line(self) -> str:
        """What the reviewer read of each source, for a cell with no quotes (an NR rests on what was read)."""
        shares = self.read_shares()
        return "read: " + " · ".join(f"{source} {share}" for source, share in shares.items()) if shares else ""

    def _recorded_reading(self, source: Source) -> SourceReading | None:
        recorded = self.session.reading_of(self.protocol.id, source.sha256)
        handed = self._reading_now.get((self.protocol.id, source.sha256))
        if recorded is not None and handed is not None:
            return recorded.union(handed)
        return recorded or handed

    def _tell(self, message: str) -> None:
        """A line for the reviewer: on the reader's status line when a reader is showing (a toast there
        would cover its quotes and candidates), else a short toast."""
        reader = next(iter(self.app.screen.query(Reader)), None)
        if reader is not None and reader.display:
            reader.say(message)
        else:
            self.notify(message, timeout=3)

    def _add_quote(self, field_id: str, quote: Quote) -> Cell:
        # Into any field of the protocol: one pass through a source can feed every field. The
        # code is left alone: it stays the reviewer's decision.
        cell = self._draft(field_id)
        before = cell.source
        filled = ""
        if not cell.source.strip():
            # Only an empty source location is filled, from the quote's position (editable), and the
            # reviewer is told what was filled. A heading that names one parameter (``max_steps``)
            # describes that setting, not where a field's general rule is: it is left out.
            section = "" if parameter_heading(quote.section) else quote.section
            filled = location_text(quote.page, section)
            if filled:
                cell = replace(cell, source=filled)
        self._last_quote = (field_id, quote, before if filled else None)
        written = self._write_quotes(replace(cell, quotes=(*cell.quotes, quote)))
        if filled:
            self._tell(f"Source location filled: {filled}")
        elif not cell.source.strip() and quote.section:
            self._tell(f"Source location left empty: “{quote.section}” is a parameter's heading")
        return written

    def _remove_quote(self, field_id: str, index: int) -> Cell:
        cell = self._draft(field_id)
        removed = cell.quotes[index]
        last, self._last_quote = self._last_quote, None
        if last is not None and last[0] == field_id and last[2] is not None and same_quote(last[1], removed):
            # Taking back the quote just added also takes back the source location it filled,
            # unless the reviewer has edited it since.
            section = "" if parameter_heading(removed.section) else removed.section
            if cell.source == location_text(removed.page, section):
                cell = replace(cell, source=last[2])
        return self._write_quotes(replace(cell, quotes=cell.quotes[:index] + cell.quotes[index + 1:]))
