"""ReaderScreen: the reader (:class:`~..widgets.reader.Reader`) on a screen of its own.

The coding screen opens the reader as a pane beside the cell when the terminal is wide
enough (see :data:`~.coding_aside.WIDE`); narrower, a pane would leave the text a few words a
line, so the reader takes the whole screen and escape returns to the cell.
"""

from __future__ import annotations

from collections.abc import Callable

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen

from ...model import Cell, Protocol, Quote
from ...storage.paths import Paths
from ..widgets.footer import AppFooter
from ..widgets.reader import MATCH_LIMIT, Reader, ReaderText
from .keys import FRONT_KEYS

__all__ = ["MATCH_LIMIT", "Reader", "ReaderScreen", "ReaderText"]


class ReaderScreen(Screen[None]):
    """Read the protocol's snapshots and quote passages into one cell."""

    BINDINGS = [
        *FRONT_KEYS,
        Binding("question_mark", "app.show_keys", "Keys", show=False),
    ]

    EXTRA_KEYS = Reader.KEYS
    KEYS_TITLE = "reading a source"

    def __init__(self, paths: Paths, protocol: Protocol, cell: Cell, *,
                 on_quote: Callable[[Quote], Cell | None] | None = None,
                 on_remove: Callable[[int], Cell | None] | None = None,
                 source_id: str | None = None, field_label: str = "") -> None:
        super().__init__()
        self._reader = Reader(paths, protocol, cell, on_quote=on_quote, on_remove=on_remove, source_id=source_id,
                              field_label=field_label, id="reader")

    @property
    def reader(self) -> Reader:
        """The reader this screen shows."""
        return self._reader

    def compose(self) -> ComposeResult:
        yield self._reader
        yield AppFooter()

    @on(Reader.Left)
    def _left(self, event: Reader.Left) -> None:
        event.stop()
        self.dismiss(None)
