"""ConfirmModal: a yes/no question."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static


class ConfirmModal(ModalScreen[bool]):
    """Ask a question; dismiss with True (yes) or False (no, escape)."""

    BINDINGS = [
        Binding("y", "answer(True)", "Yes", id="confirm.yes"),
        Binding("n,escape", "answer(False)", "No", id="confirm.no"),
    ]

    def __init__(self, title: str, message: str, *, yes: str = "Yes", no: str = "No",
                 danger: bool = False) -> None:
        super().__init__()
        self._title = title
        self._message = message
        self._yes = yes
        self._no = no
        self._danger = danger

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(self._title, classes="dialog-title")
            yield Static(self._message, classes="dialog-body")
            with Horizontal(classes="dialog-buttons"):
                yield Button(f"{self._yes} (y)", id="confirm-yes", variant="error" if self._danger else "primary")
                yield Button(f"{self._no} (n)", id="confirm-no")

    def on_mount(self) -> None:
        # The safe answer has the focus: enter alone never destroys anything.
        self.query_one("#confirm-no", Button).focus()

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)

    @on(Button.Pressed)
    def answer_from_button(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "confirm-yes")
