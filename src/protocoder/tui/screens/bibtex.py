"""BibtexScreen: paste a BibTeX entry; the store checks it and appends it to references.bib."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static, TextArea

from ...errors import InvalidInput, ProtocoderError
from ..widgets import TextBox
from .confirm import ConfirmModal

if TYPE_CHECKING:
    from ..interface import CodingApp as CoderApp  # the app as the screens see it


class BibtexScreen(ModalScreen[list[str] | None]):
    """Paste one or more entries; ctrl+s adds them, escape cancels. Returns the keys added.

    Nothing is written unless every entry parses, has its required fields and a new key.
    """

    BINDINGS = [
        Binding("ctrl+s", "add", "Add", priority=True, id="bibtex.add"),
        Binding("escape", "cancel", "Cancel", id="bibtex.cancel"),
    ]

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog", id="bibtex-dialog"):
            yield Static("Add a reference", classes="dialog-title")
            yield Static("Paste a BibTeX entry. It is appended to references.bib as it is; the rest of "
                         "the file stays byte for byte.", classes="dialog-body")
            yield TextBox(id="bibtex-text", soft_wrap=False)
            yield Static("", id="bibtex-problems")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Add (ctrl+s)", id="bibtex-add", variant="primary")
                yield Button("Cancel (esc)", id="bibtex-cancel")

    def on_mount(self) -> None:
        self.query_one("#bibtex-text", TextArea).focus()

    def _show_problems(self, lines: list[str]) -> None:
        problems = self.query_one("#bibtex-problems", Static)
        problems.update("\n".join(lines))
        problems.set_class(bool(lines), "-shown")

    def action_add(self) -> None:
        text = self.query_one("#bibtex-text", TextArea).text
        if not text.strip():
            self._show_problems(["Paste an entry first."])
            return
        try:
            keys = cast("CoderApp", self.app).session.add_bibtex(text)
        except InvalidInput as exc:
            self._show_problems([str(p) for p in exc.problems])
            return
        except ProtocoderError as exc:
            self._show_problems([str(exc)])
            return
        self.dismiss(keys)

    @work(exclusive=True, group="bibtex-cancel", exit_on_error=False)
    async def action_cancel(self) -> None:
        """Leave without adding; when an entry was pasted, only after the reviewer says to discard it."""
        if self.query_one("#bibtex-text", TextArea).text.strip() and not await self.app.push_screen_wait(
                ConfirmModal("Discard the pasted entry?", "Nothing has been added to references.bib. ctrl+s adds "
                             "the entry instead.", yes="Discard", no="Keep editing", danger=True)):
            return
        self.dismiss(None)

    @on(Button.Pressed, "#bibtex-add")
    def add_pressed(self) -> None:
        self.action_add()

    @on(Button.Pressed, "#bibtex-cancel")
    def cancel_pressed(self) -> None:
        self.action_cancel()
