"""ReaderScreen: the reader (:class:`~..widgets.reader.Reader`) on a screen of its own.

The coding screen opens the reader as a pane beside the cell when the terminal is wide
enough (see :data:`~.coding_aside.WIDE`); narrower, a pane would leave the text a few words a
line, so the reader takes the whole screen and escape returns to the cell.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen

from ...evidence.search import Candidate
from ...model import Cell, Protocol, Quote, Source, SourceReading
from ...storage.paths import Paths
from ..widgets.footer import AppFooter
from ..widgets.reader import MATCH_LIMIT, Reader, ReaderText
from .keys import FRONT_KEYS

__all__ = ["MATCH_LIMIT", "Reader", "ReaderScreen", "ReaderText"]


class ReaderScreen(Screen[None]):
    """Read the protocol's snapshots and quote passages into one cell."""

    BINDINGS = [
        *FRONT_KEYS,
        Binding("]", "step_field(1)", "Next field", show=False, id="reader_screen.next_field",
                tooltip="Next field: the reader follows the cell"),
        Binding("[", "step_field(-1)", "Prev field", show=False, id="reader_screen.previous_field",
                tooltip="Previous field: the reader follows the cell"),
        Binding("question_mark", "app.show_keys", "Keys", show=False, tooltip=FRONT_KEYS[1].tooltip),
        # Escape leaves even before the reader's text has the focus (typed right after ctrl+l).
        Binding("escape", "back", "Back to the cell", show=False, id="reader_screen.back"),
        # A code's digit here says where codes are picked, as the reader pane does (typed into
        # the search box it is text: the box takes it first).
        *[Binding(key, f"code_key('{key}')", show=False) for key in "1234567890"],
    ]

    AUTO_FOCUS = "#reader-text"
    """The text has the focus from the start: keys typed right after ctrl+l are the reader's."""

    EXTRA_KEYS = Reader.KEYS
    KEYS_TITLE = "reading a source"

    def __init__(self, paths: Paths, protocol: Protocol, cell: Cell, *,
                 on_quote: Callable[[Quote], Cell | None] | None = None,
                 on_remove: Callable[[int], Cell | None] | None = None,
                 source_id: str | None = None, field_label: str = "",
                 on_step: Callable[[int], tuple[Protocol, Cell, str]] | None = None,
                 on_candidates: Callable[[str, str], list[Candidate]] | None = None,
                 fields: Sequence[tuple[str, str]] = (),
                 cells: Callable[[], Mapping[str, Cell]] | None = None,
                 on_quote_into: Callable[[str, Quote], Cell | None] | None = None,
                 on_remove_from: Callable[[str, int], Cell | None] | None = None,
                 on_reading: Callable[[str, Source, int, list[int]], None] | None = None,
                 recorded_reading: Callable[[Source], SourceReading | None] | None = None) -> None:
        super().__init__()
        self._on_step = on_step
        """Moves the coding screen's cell by a field and returns where it is now (``]`` / ``[``)."""
        self._reader = Reader(paths, protocol, cell, on_quote=on_quote, on_remove=on_remove, source_id=source_id,
                              field_label=field_label, on_candidates=on_candidates, fields=fields, cells=cells,
                              on_quote_into=on_quote_into, on_remove_from=on_remove_from, on_reading=on_reading,
                              recorded_reading=recorded_reading, id="reader")

    @property
    def reader(self) -> Reader:
        """The reader this screen shows."""
        return self._reader

    def compose(self) -> ComposeResult:
        yield self._reader
        yield AppFooter()

    def action_step_field(self, delta: int) -> None:
        """Move the cell being coded to the next or previous field; the reader follows it."""
        if self._on_step is None:
            return
        protocol, cell, label = self._on_step(delta)
        reader = self._reader
        if protocol.id != reader.protocol.id:
            reader.show_protocol(protocol, cell, label)
        else:
            reader.show_cell(cell, label)
        reader.say(f"Now quoting into {protocol.name} · {label}")

    def action_code_key(self, key: str) -> None:
        """A digit on the reader's screen changes nothing and says so."""
        self.notify(f"{key} picks a code only while the codes have the focus: escape goes back to them.",
                    severity="warning")

    def action_back(self) -> None:
        """Back to the cell."""
        self.dismiss(None)

    @on(Reader.Left)
    def _left(self, event: Reader.Left) -> None:
        event.stop()
        self.dismiss(None)
