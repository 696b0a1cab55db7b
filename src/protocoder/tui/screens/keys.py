"""KeysModal: every key of the current screen, with what it does."""

from __future__ import annotations

from collections.abc import Sequence

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static


class KeysModal(ModalScreen[None]):
    """A table of (keys, action) pairs; any of escape, f1 or ? closes it."""

    BINDINGS = [Binding("escape,f1,question_mark,q", "close", "Close", id="keys.close")]

    def __init__(self, title: str, keys: Sequence[tuple[str, str]]) -> None:
        super().__init__()
        self._title = title
        self._keys = list(keys)

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog", id="keys-dialog"):
            yield Static(self._title, classes="dialog-title")
            table: DataTable[str] = DataTable(id="keys-table", cursor_type="row", zebra_stripes=True)
            table.add_columns("Key", "Action")
            for key, description in self._keys:
                table.add_row(key, description)
            yield table
            yield Static("escape closes · ctrl+p opens the command palette", classes="dialog-hint")

    def action_close(self) -> None:
        self.dismiss(None)
