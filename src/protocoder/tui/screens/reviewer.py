"""ReviewerModal: asks who is coding when neither the command line nor git says."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from ...identity import reviewer_id
from ...model import is_slug


class ReviewerModal(ModalScreen[str]):
    """Type a name; the reviewer id proposed from it (``Ada Lovelace`` → ``ada-lovelace``) is returned."""

    BINDINGS = [Binding("escape", "app.quit", "Quit", id="reviewer.quit")]

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog", id="reviewer-dialog"):
            yield Static("Who is coding?", classes="dialog-title")
            yield Static("Your codes are saved under a reviewer id made from your name. "
                         "(Next time: --reviewer NAME or $PROTOCODER_REVIEWER.)", classes="dialog-body")
            yield Input(id="reviewer-name", placeholder="your name")
            yield Static("", id="reviewer-id")

    def on_mount(self) -> None:
        self.query_one("#reviewer-name", Input).focus()

    def _proposed(self) -> str | None:
        name = self.query_one("#reviewer-name", Input).value
        candidate = reviewer_id(name) if name.strip() else None
        return candidate if candidate and is_slug(candidate) else None

    @on(Input.Changed, "#reviewer-name")
    def show_proposed_id(self) -> None:
        candidate = self._proposed()
        name = self.query_one("#reviewer-name", Input).value
        label = self.query_one("#reviewer-id", Static)
        if candidate:
            label.update(f"reviewer id: {candidate}  (enter to start)")
        elif name.strip():
            label.update("use letters or digits: no reviewer id can be made from this")
        else:
            label.update("")
        label.set_class(bool(name.strip()) and not candidate, "-invalid")

    @on(Input.Submitted, "#reviewer-name")
    def accept(self) -> None:
        candidate = self._proposed()
        if candidate:
            self.dismiss(candidate)
        else:
            self.show_proposed_id()
