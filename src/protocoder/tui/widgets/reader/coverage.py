"""Coverage: which blocks of the source shown the reviewer has had on screen.

Whenever the text is shown, scrolled or resized, the blocks of the extracted text that are in
view (a heading, a paragraph, a list item, a code block, a table row; for a text without blocks,
its blank-line paragraphs) are added to what was seen of that snapshot. Seen blocks are handed
to the holder's ``on_reading`` at once on a source's first view, then in batches (every
:data:`SAVE_EVERY` seconds while new ones come,
and when the source changes or the reader is left), never on every frame of a scroll. The holder
records them in the reviewer's own codes file (``reading:``), where ``status --reading`` counts
them. A browser session runs this same widget: reading there counts the same.
"""

from __future__ import annotations

import bisect
import re
from contextlib import suppress

from textual.geometry import Offset
from textual.timer import Timer

from ....evidence.reading import ReadingText
from ....model import Source, SourceReading
from .document import ReaderDocument

SAVE_EVERY = 4.0
"""Seconds between two hand-overs of newly seen blocks while the reviewer reads."""

_PARAGRAPH_BREAK = re.compile(r"\n\s*\n")


def reading_units(reading: ReadingText) -> list[tuple[int, int]]:
    """The units coverage counts in a text, as (start, end) offsets of the extracted text in order:
    its blocks, or, for a text the extractor gave none, its blank-line paragraphs."""
    extracted = reading.extracted
    if extracted.blocks:
        return [(block.start, block.end) for block in extracted.blocks]
    units, start = [], 0
    text = extracted.text
    for found in _PARAGRAPH_BREAK.finditer(text):
        if text[start:found.start()].strip():
            units.append((start, found.start()))
        start = found.end()
    if text[start:].strip():
        units.append((start, len(text)))
    return units


class ReaderCoverage(ReaderDocument):
    """The reader's record of what was on screen."""

    _units: list[tuple[int, int]] = []
    _unit_starts: list[int] = []
    _unit_ends: list[int] = []
    _seen_source: Source | None = None
    _save_timer: Timer | None = None
    _watching = False

    def _start_coverage(self) -> None:
        """The text of :attr:`source` is shown now: count its units and what is in view."""
        self.hand_over_reading()  # what was seen of the previous source
        reading = self.reading
        self._units = reading_units(reading) if reading is not None else []
        self._unit_starts = [start for start, _ in self._units]
        self._unit_ends = [end for _, end in self._units]
        self._seen_source = self.source
        self._seen: set[int] = set()
        self._handed: set[int] = set()
        if not self._watching:
            self._watching = True
            self.watch(self.text_area, "scroll_y", self._scrolled, init=False)
        self.call_after_refresh(self._note_visible)

    def _scrolled(self, _old: float = 0.0, _new: float = 0.0) -> None:
        self._note_visible()

    def on_resize(self) -> None:
        self.call_after_refresh(self._note_visible)

    def _note_visible(self) -> None:
        """Add the units in view to what was seen (cheap: two look-ups and a range)."""
        reading, area = self.reading, self.text_area
        if reading is None or not self._units or self.source is not self._seen_source or not self.display \
                or not area.size.height or not area.wrapped_document.height:
            return
        top = round(area.scroll_y)
        height = area.scrollable_content_region.height
        wrapped = area.wrapped_document
        first = reading.to_extracted(reading.offset(*wrapped.offset_to_location(Offset(0, top))))
        last = reading.to_extracted(reading.offset(*wrapped.offset_to_location(Offset(10_000, top + height - 1))))
        low = bisect.bisect_right(self._unit_ends, first)
        high = bisect.bisect_right(self._unit_starts, last)
        before = len(self._seen)
        self._seen.update(range(low, high))
        if len(self._seen) != before:
            self._show_title()  # the share read, as it grows
            if not self._handed:
                # The first view of a source is handed over at once, so the source list and the
                # cell's "read:" line agree with the title from the start; later ones in batches.
                self.hand_over_reading()
            elif self._save_timer is None:
                self._save_timer = self.set_timer(SAVE_EVERY, self.hand_over_reading)

    def hand_over_reading(self) -> None:
        """Give the holder the blocks seen since the last hand-over (nothing when none are new)."""
        if self._save_timer is not None:
            self._save_timer.stop()
            self._save_timer = None
        source = self._seen_source
        seen: set[int] = getattr(self, "_seen", set())
        new = seen - getattr(self, "_handed", set())
        if source is None or not new or self.on_reading is None:
            return
        self._handed = set(seen)
        self.on_reading(self.protocol.id, source, len(self._units), sorted(seen))
        if self.is_mounted and self.children:
            self._show_title()

    def reading_of(self, source: Source) -> SourceReading | None:
        """What the reviewer has read of ``source`` (recorded, and seen since), None when unknown."""
        recorded = self.recorded_reading(source) if self.recorded_reading is not None else None
        if source is self._seen_source and self._units:
            here = SourceReading(len(self._units)).with_blocks(getattr(self, "_seen", ()))
            return here.union(recorded) if recorded is not None else here
        return recorded

    def on_unmount(self) -> None:
        # The reader goes (its screen closed): what was seen since the last hand-over goes with it to the
        # holder. At the app's very end the holder may be gone too: the periodic hand-over has kept
        # all but the last few seconds then.
        with suppress(Exception):
            self.hand_over_reading()
