"""The adjudication app's comment dialog: a remark on the shown cell (``protocoder comment`` in the app)."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from ..widgets import TextLine


class CommentModal(ModalScreen[str | None]):
    """Asks for a comment on a cell; enter adds it, escape cancels."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="adjudicate_comment.cancel")]

    def __init__(self, cell: str) -> None:
        super().__init__()
        self._cell = cell

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(f"Comment on {self._cell}", classes="dialog-title", markup=False)
            yield Static("Kept in your own comments file; the discussion shows under the reviewers' cells.",
                         classes="dialog-body", markup=False)
            yield TextLine(id="comment-text", placeholder="your comment")
            yield Static("enter adds it · escape cancels", id="comment-hint", markup=False)

    def on_mount(self) -> None:
        self.query_one("#comment-text", Input).focus()

    @on(Input.Submitted, "#comment-text")
    def submitted(self, event: Input.Submitted) -> None:
        if event.value.strip():
            self.dismiss(event.value.strip())
        else:
            self.query_one("#comment-hint", Static).update("Type the comment first (escape cancels).")

    def action_cancel(self) -> None:
        self.dismiss(None)
