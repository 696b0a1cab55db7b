"""Search: ``/`` in the source shown (normalised like ``validate``), ``n``/``N``, hits in every source, the outline."""

from __future__ import annotations

from rich.text import Text
from textual import on, work
from textual.widgets import Input

from ....errors import InvalidInput
from ....evidence.reading import ReadingText
from ....evidence.search import Candidate
from ....evidence.snapshots import location_text, position
from ....model import Source
from .candidates import ReaderCandidates, section_path
from .document import MATCH_LIMIT

SEARCH_HITS_PER_SOURCE = 50
"""Most hits of a search listed for each source (every one is still stepped through with n/N)."""


class ReaderSearch(ReaderCandidates):
    """The reader's search."""

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
                rows.append((self._row(section_path(hit.heading, source.title) if hit.heading else "no heading",
                                       hit.text), hit))
        self._show_list(f"“{query}” in {len(hits)} sources: {total} hit{'s' if total != 1 else ''} · enter jumps",
                        rows, focus=False)

    def action_outline(self) -> None:
        """List the headings of the source shown, indented by level; enter jumps to one."""
        reading, source = self.reading, self.source
        if reading is None or source is None:
            self.say("There is no text here yet.", warning=True)
            return
        rows: list[tuple[Text, Candidate | None]] = []
        for offset, level, title in reading.extracted.headings:
            jump = Candidate(source.id, title, offset, offset + len(title), None, None, title, 0.0)
            rows.append((Text("  " * max(level - 1, 0) + title), jump))
        if not rows:
            self.say(f"{source.title} has no headings.", warning=True)
            return
        self._show_list(f"Outline of {source.title} · enter jumps", rows)

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
            self.say(f"“{query}” is not in this source", warning=True)
        if self.matches and self.said:
            self.say("")  # a warning about an earlier search no longer holds
        self._repaint()
        self._moved()

    def _step(self, delta: int) -> None:
        if not self.matches:
            self.say("Search first: press /" if not self.query_text else f"No match for “{self.query_text}”",
                     warning=True)
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
