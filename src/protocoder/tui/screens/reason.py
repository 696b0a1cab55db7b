"""ReasonModal: why a released cell is being changed (recorded in the corrections ledger)."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static


class ReasonModal(ModalScreen[str | None]):
    """Asks for the reason of a change; enter records it, escape cancels the change."""

    BINDINGS = [Binding("escape", "cancel", "Cancel the change", id="reason.cancel")]

    def __init__(self, title: str, body: str) -> None:
        super().__init__()
        self._title = title
        self._body = body

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog", id="reason-dialog"):
            yield Static(self._title, classes="dialog-title", markup=False)
            yield Static(self._body, classes="dialog-body", markup=False)
            yield Input(id="reason-text", placeholder="why the released code was wrong")
            yield Static("enter records the change · escape keeps the released code", id="reason-hint")

    def on_mount(self) -> None:
        self.query_one("#reason-text", Input).focus()

    @on(Input.Submitted, "#reason-text")
    def submitted(self, event: Input.Submitted) -> None:
        if event.value.strip():
            self.dismiss(event.value.strip())
        else:
            self.query_one("#reason-hint", Static).update("A reason is required: it is kept with the correction.")

    def action_cancel(self) -> None:
        self.dismiss(None)
