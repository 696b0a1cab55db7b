"""The adjudication app's quotes dialog: every reviewer's quotes of one cell, whole."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static


class QuotesModal(ModalScreen[None]):
    """Every reviewer's quotes of one cell, whole, with where each is (escape closes)."""

    BINDINGS = [Binding("escape,ctrl+o,q", "close", "Close", id="adjudicate_quotes.close")]

    def __init__(self, title: str, body: Text) -> None:
        super().__init__()
        self._title = title
        self._body = body

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(self._title, classes="dialog-title", markup=False)
            with VerticalScroll(id="adj-quotes-scroll"):
                yield Static(self._body, classes="dialog-body", markup=False)
            yield Static("escape closes", classes="dialog-hint")

    def action_close(self) -> None:
        self.dismiss(None)
