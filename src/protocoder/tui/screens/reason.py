"""ReasonModal: why a released cell is being changed (recorded in the corrections ledger)."""

from __future__ import annotations

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from ..widgets import TextLine
from .confirm import ConfirmModal


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
            yield TextLine(id="reason-text", placeholder="why the released code was wrong")
            yield Static("enter records the change · escape keeps the released code", id="reason-hint")

    def on_mount(self) -> None:
        self.query_one("#reason-text", Input).focus()

    @on(Input.Submitted, "#reason-text")
    def submitted(self, event: Input.Submitted) -> None:
        if event.value.strip():
            self.dismiss(event.value.strip())
        else:
            self.query_one("#reason-hint", Static).update("A reason is required: it is kept with the correction.")

    @work(exclusive=True, group="reason-cancel", exit_on_error=False)
    async def action_cancel(self) -> None:
        """Keep the released code; when a reason was typed, only after the reviewer says to drop it."""
        if self.query_one("#reason-text", Input).value.strip() and not await self.app.push_screen_wait(
                ConfirmModal("Drop the reason?", "Escape keeps the released code and discards the reason typed. "
                             "Enter records the change with it instead.", yes="Drop it", no="Keep editing")):
            return
        self.dismiss(None)
