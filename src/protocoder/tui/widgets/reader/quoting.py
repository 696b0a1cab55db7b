"""Quoting: ``q`` takes the selection (else the match or sentence) as a quote; the cell's quotes listed and marked."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from ....evidence.locate import Span
from ....evidence.quotes import Anchor, anchor, locate_quote, printable, same_quote
from ....evidence.snapshots import location_text
from ....model import Quote
from .document import ReaderDocument


class ReaderQuoting(ReaderDocument):
    """The reader's quoting."""

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
        from ...screens.confirm import ConfirmModal  # screens import the widgets, not the other way round

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
