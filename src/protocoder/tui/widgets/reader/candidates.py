"""Candidates: passages ranked for the cell's field, and the list of places to jump to under the quotes.

``c`` ranks the protocol's passages for the field (off the UI thread) and lists them; the same
list shows search hits in every source and the outline. Enter jumps to the place, in whichever
source it is.
"""

from __future__ import annotations

from rich.text import Text
from textual import on, work
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from ....errors import Rejected
from ....evidence.locate import Span
from ....evidence.quotes import printable
from ....evidence.search import Candidate
from .document import ReaderDocument


def cut(text: str, width: int) -> str:
    """``text`` on one line of at most ``width`` columns (an ellipsis where it is cut)."""
    return text if len(text) <= width else text[:max(width - 1, 1)] + "…"


def section_path(heading: str, title: str) -> str:
    """A candidate's heading path without the document's title in front (every passage of a README
    sits under its title: repeated on each row, it hid the part that tells them apart)."""
    parts = [part for part in heading.split(" › ") if part.strip()]
    if parts and title and parts[0].strip().casefold() == title.strip().casefold():
        parts = parts[1:]
    return " › ".join(parts) or ("opening" if heading else "no heading")


def _row_note(candidate: Candidate) -> str:
    """`` · row N of M`` for a table candidate (the list shows its best row, not its header), `` · line N of M``
    for a file listing, else nothing."""
    place = candidate.focus_place()
    return f" · {candidate.row_name} {place[0]} of {place[1]}" if place else ""


class ReaderCandidates(ReaderDocument):
    """The reader's candidates and its list of places to jump to."""

    def _hide_candidates(self) -> None:
        self.candidates = []
        self.query_one("#reader-candidates-heading", Static).display = False
        self.query_one("#reader-candidates", OptionList).display = False
        self.remove_class("-listing")

    def action_candidates(self) -> None:
        """Rank the protocol's passages for the cell's field (off the UI thread) and list them."""
        if self.on_candidates is None:
            self.say("Candidate passages are not available here.", warning=True)
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
            self.say(f"No candidate passages: {refusal}", warning=True)
            return
        self.candidates = found
        titles = {source.id: source.title for source in self.sources}
        several = len({c.source for c in found}) > 1
        rows: list[tuple[Text, Candidate | None]] = [
            (self._row(f"{n}. {f'{c.source} · ' if several else ''}"
                       f"{section_path(c.heading, titles.get(c.source, ''))}{_row_note(c)}", c.shown_text), c)
            for n, c in enumerate(found, 1)]
        self._show_list(f"{len(found)} candidates: enter jumps, q quotes", rows)

    def _row(self, where: str, text: str) -> Text:
        """Two lines: where (dim) and the start of the text, each cut to the list's width, so that a
        list at 80×24 shows several places at once rather than one long passage."""
        width = self._row_width()
        flat = " ".join(printable(text).split())
        return Text.assemble((cut(where, width) + "\n", "dim"), cut(flat, width))

    def _row_width(self) -> int:
        side = self.query_one("#reader-side")
        # The side's content width, less the list's scrollbar and a column of air.
        return max(side.content_region.width - 2, 20) if side.content_region.width else 34

    def _show_list(self, title: str, rows: list[tuple[Text, Candidate | None]], *, focus: bool = True) -> None:
        """Show a list of places to jump to (candidates, search hits, the outline) under ``title``."""
        heading = self.query_one("#reader-candidates-heading", Static)
        listing = self.query_one("#reader-candidates", OptionList)
        heading.update(title)
        heading.display = True
        self.add_class("-listing")  # the quotes and the help make room for the list
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
            self.say(f"Source {candidate.source} has no snapshot here.", warning=True)
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
        self._select(Span(*candidate.focus))  # a table's best row, so that q quotes that row
        self.text_area.focus()
        self._moved()
