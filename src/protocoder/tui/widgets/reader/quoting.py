"""Quoting: ``q`` takes the selection (else the match or sentence) as a quote; the cell's quotes listed and marked."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from ....evidence.locate import Span
from ....evidence.quotes import Anchor, anchor, locate_quote, printable, same_quote
from ....evidence.search import Candidate
from ....evidence.snapshots import location_text
from ....model import Quote
from .document import ReaderDocument


class ReaderQuoting(ReaderDocument):
    """The reader's quoting: into any field of the protocol, after a preview, with an undo right after."""

    last_quoted: tuple[str, Quote] | None = None
    """The quote just saved and its field, for ``u``."""

    def _locate_quotes(self) -> None:
        self.quote_spans = {}
        self.field_spans = []
        source, reading = self.source, self.reading
        if source is None or reading is None:
            return
        for field_id, cell in self.cells().items():
            for number, quote in enumerate(cell.quotes):
                span = self._span_of(quote)
                if span is None:
                    continue
                if field_id == self.cell.field:
                    self.quote_spans[number] = span
                else:
                    self.field_spans.append((field_id, span))

    def _span_of(self, quote: Quote) -> Span | None:
        """Where a quote is in the text shown (None: another source, or not in this version)."""
        source, reading = self.source, self.reading
        if source is None or reading is None or quote.source != source.id \
                or anchor(quote, source) is not Anchor.CURRENT:
            return None
        haystack = reading.haystack
        if quote.start is not None and quote.end is not None and haystack.matches_at(quote.text, quote.start,
                                                                                      quote.end):
            return Span(quote.start, quote.end)
        return haystack.find(quote.text)

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

    def _highlighted_candidate(self) -> Candidate | None:
        """The candidate (or search hit) highlighted in the list, when the list has the focus: ``q``
        there quotes it, as the list's heading says."""
        listing = self.query_one("#reader-candidates", OptionList)
        index = listing.highlighted
        if self.screen.focused is not listing or index is None or not 0 <= index < len(self._jumps):
            return None
        candidate = self._jumps[index]
        if candidate is None or not any(s.id == candidate.source for s in self.sources):
            return None
        return candidate

    def action_quote(self) -> None:
        """Show the passage to quote (source, heading, text) and the fields it can go to; nothing is saved
        until a field is picked. Quoting never sets a code."""
        reading, source = self.reading, self.source
        if reading is None or source is None:
            self.say("There is no text to quote here.", warning=True)
            return
        if self.on_quote_into is None:
            self.say("This session is read-only: quotes cannot be added.", warning=True)
            return
        candidate = self._highlighted_candidate()
        if candidate is not None and candidate.source != source.id:
            # Another source's passage: show it there first (quoted with the next q, once in view).
            self._pending_jump = candidate
            self.source_index = next(i for i, s in enumerate(self.sources) if s.id == candidate.source)
            self.reading = None
            self.load_source()
            self.say(f"Shown in {candidate.source}: q quotes it.")
            return
        span = Span(*candidate.focus) if candidate is not None else self.passage_to_quote()
        text = reading.passage(span) if span is not None else ""
        if span is None or not text:
            self.say("Select a passage first (shift+arrows or the mouse), or search with /.", warning=True)
            return
        quote = locate_quote(Quote(source.id, text, start=span.start, end=span.end), source, self.snapshots)
        if quote is None:  # pragma: no cover - the passage comes from this very text
            self.say("That passage cannot be located in the snapshot.", warning=True)
            return
        from ...screens.quote_into import QuoteIntoModal  # screens import the widgets, not the other way round

        cells = self.cells()
        rows = []
        for field_id, label in self.fields:
            quotes = cells[field_id].quotes if field_id in cells else ()
            rows.append((field_id, label, len(quotes), any(same_quote(quote, known) for known in quotes)))
        where = f"{source.title} › {location_text(quote.page, quote.section) or 'no page or heading'}"
        self.app.push_screen(QuoteIntoModal(where, printable(text), rows, self.cell.field),
                             lambda field_id: self._quote_into(field_id, quote))

    def _quote_into(self, field_id: str | None, quote: Quote) -> None:
        if field_id is None or self.on_quote_into is None:
            self.say("Nothing quoted.")
            return
        self.said = ""
        updated = self.on_quote_into(field_id, quote)
        note = self.said  # what the holder said while saving (the source location it filled)
        if updated is None:
            return
        if field_id == self.cell.field:
            self.cell = updated
        self.last_quoted = (field_id, quote)
        self._show_quotes()
        self._repaint()
        self._moved()
        # Short, so that "u undoes" is in view on a narrow side: the passage is marked in the text.
        self.say(f"Quoted into {self.field_name(field_id)} · u undoes" + (f"\n{note}" if note else ""))

    def action_undo_quote(self) -> None:
        """Take back the quote just saved (from whichever field it went to)."""
        if self.last_quoted is None or self.on_remove_from is None:
            self.say("Nothing to undo: no quote was saved here since the reader opened.", warning=True)
            return
        field_id, quote = self.last_quoted
        cell = self.cells().get(field_id)
        index = next((i for i, known in enumerate(cell.quotes) if same_quote(known, quote)), None) \
            if cell is not None else None
        self.last_quoted = None
        if index is None:
            self.say(f"The quote is no longer in {self.field_name(field_id)}: nothing undone.", warning=True)
            return
        updated = self.on_remove_from(field_id, index)
        if updated is None:
            return
        if field_id == self.cell.field:
            self.cell = updated
        self._show_quotes()
        self._repaint()
        self._moved()
        self.say(f"Undone: the quote is removed from {self.field_name(field_id)} (saved).")

    @on(OptionList.OptionSelected, "#reader-quotes")
    def _quote_chosen(self, event: OptionList.OptionSelected) -> None:
        number = int(event.option.id or -1)
        span = self.quote_spans.get(number)
        if span is None:
            self.say("That quote is not in the text shown (another source, or another version).", warning=True)
            return
        self._select(span)
        self.text_area.focus()

    def action_remove_quote(self) -> None:
        listing = self.query_one("#reader-quotes", OptionList)
        if self.screen.focused is not listing or listing.highlighted is None or not self.cell.quotes:
            return
        if self.on_remove_from is None:
            self.say("This session is read-only: quotes cannot be removed.", warning=True)
            return
        from ...screens.confirm import ConfirmModal  # screens import the widgets, not the other way round

        index = listing.highlighted
        quote = self.cell.quotes[index]
        text = " ".join(printable(quote.text).split())

        def answered(yes: bool | None) -> None:
            if not yes or self.on_remove_from is None:
                return
            updated = self.on_remove_from(self.cell.field, index)
            if updated is not None:
                self.cell = updated
                self._show_quotes()
                self._repaint()
                self.say(f"Quote {index + 1} removed (saved)")

        self.app.push_screen(ConfirmModal(f"Remove quote {index + 1} of {self.field_label}?",
                                          f"“{text[:200]}{'…' if len(text) > 200 else ''}”", yes="Remove",
                                          danger=True), answered)
